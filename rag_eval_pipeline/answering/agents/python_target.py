"""The agent as a Python callable, ``module:function``: imported with the current folder on the
path (as ``python -m`` would), called with the question (and ``qid=`` when it takes one), sync
functions on a worker thread so calls overlap; each call bounded by the entry's timeout."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import sys
from collections.abc import Callable
from typing import Any

from rag_eval_pipeline.answering.agents.calls import AgentCallError
from rag_eval_pipeline.answering.agents.mapping import as_document


class TargetNotFoundError(ValueError):
    """The target cannot be imported, or is not a callable."""


def load_target(target: str) -> Callable[..., Any]:
    """The callable ``module:function`` (or ``module:Class.method``) names."""
    module_name, _, attribute = target.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # an ImportError, or the module failing as it loads
        raise TargetNotFoundError(
            f"target {target}: cannot import {module_name} ({type(err).__name__}: {err}); it must be "
            "importable from the current folder or the environment"
        ) from None
    found: Any = module
    for part in attribute.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise TargetNotFoundError(f"target {target}: {module_name} has no {attribute}")
    if not callable(found):
        raise TargetNotFoundError(f"target {target} is a {type(found).__name__}, not a function")
    return found


class PythonTransport:
    """Calls the target once per (qid, question) and returns what it gave as a document."""

    def __init__(self, function: Callable[..., Any], timeout_s: float) -> None:
        self._function = function
        self._timeout_s = timeout_s
        self._takes_qid = "qid" in inspect.signature(function).parameters
        self._is_async = inspect.iscoroutinefunction(function)

    async def _call(self, qid: str, question: str) -> Any:
        kwargs = {"qid": qid} if self._takes_qid else {}
        if self._is_async:
            return await self._function(question, **kwargs)
        return await asyncio.to_thread(self._function, question, **kwargs)

    async def aclose(self) -> None:
        """Nothing is kept open between calls."""

    async def __call__(self, qid: str, question: str) -> Any:
        try:
            returned = await asyncio.wait_for(self._call(qid, question), self._timeout_s)
        except TimeoutError:
            raise AgentCallError(f"no answer within {self._timeout_s:g} s") from None
        return as_document(returned)
