"""The agent as a Python callable, ``module:function``: imported with the current folder on the
path (as ``python -m`` would), called with the question (and ``qid=`` when it takes one) in
worker processes (``python_worker.py``), so calls overlap and a call past the entry's timeout is
ended with its process."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import select
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rag_eval_pipeline.answering.agents.calls import (
    AgentCallError,
    ConversationTurn,
    FatalAgentError,
)


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


def _stderr_fd() -> int | None:
    """Where the agent's own prints go: this process's stderr (inherited where it has none)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None


@dataclass
class _Worker:
    process: subprocess.Popen
    replies: Any  # the read end of the reply pipe, one JSON line per request


# how long a new worker may take to import the target before its first call fails: an import
# that builds an index takes its time, and counting it against a call's deadline would fail
# the first call of every new worker
START_TIMEOUT_S = 120.0


class PythonTransport:
    """Calls the target once per (qid, question) in worker processes of its own (at most
    ``workers``, started on first use, each calling one question at a time): a call that has not
    returned within ``timeout_s`` fails its case, and its worker is ended and replaced, so a
    callable that never returns cannot hold the stage."""

    def __init__(self, target: str, timeout_s: float, workers: int = 1) -> None:
        self._target = target
        self._timeout_s = timeout_s
        self._workers = workers
        self._idle: list[_Worker] = []
        self._started = 0
        self._lock = threading.Lock()
        self._free = threading.Semaphore(workers)
        # the first worker starts alone: until one has imported the target, no other is started,
        # and a target that cannot be imported fails the stage at its first case, not every case
        self._first = threading.Lock()
        self._proven = False
        self._fatal: FatalAgentError | None = None

    def _start(self) -> _Worker:
        read_fd, write_fd = os.pipe()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), *sys.path])}
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "rag_eval_pipeline.answering.agents.python_worker",
                self._target,
                str(write_fd),
            ],
            stdin=subprocess.PIPE,
            stdout=_stderr_fd(),
            pass_fds=(write_fd,),
            env=env,
            text=True,
        )
        os.close(write_fd)
        worker = _Worker(process, os.fdopen(read_fd, "r", encoding="utf-8"))
        ready, _, _ = select.select([worker.replies], [], [], max(START_TIMEOUT_S, self._timeout_s))
        first = worker.replies.readline() if ready else ""
        if not first:
            code = process.poll()
            self._end(worker)
            said = f"exited (code {code})" if code is not None else f"took over {START_TIMEOUT_S:g} s"
            raise AgentCallError(f"the agent's worker process {said} while importing {self._target}")
        said = json.loads(first)
        if not said.get("ready"):  # the target cannot be imported: every call would fail alike
            self._end(worker)
            raise FatalAgentError(str(said.get("error") or f"target {self._target} cannot be loaded"))
        return worker

    def _take(self) -> _Worker:
        self._free.acquire()
        with self._lock:
            if self._idle:
                return self._idle.pop()
        try:
            if self._proven:
                return self._start()
            with self._first:
                if self._fatal is not None:
                    raise self._fatal
                worker = self._start()
                self._proven = True
                return worker
        except FatalAgentError as err:
            self._fatal = err
            self._free.release()
            raise
        except AgentCallError:
            self._free.release()
            raise

    def _give_back(self, worker: _Worker | None) -> None:
        with self._lock:
            if worker is not None:
                self._idle.append(worker)
        self._free.release()

    @staticmethod
    def _end(worker: _Worker) -> None:
        worker.process.kill()
        worker.process.wait()
        worker.replies.close()

    def _call_blocking(
        self,
        qid: str,
        question: str,
        turn: ConversationTurn | None = None,
        passages: list[dict[str, str]] | None = None,
    ) -> Any:
        worker = self._take()
        request = {"qid": qid, "question": question, **(turn.as_fields() if turn is not None else {})}
        try:
            assert worker.process.stdin is not None
            if passages is not None:
                request["passages"] = passages
            worker.process.stdin.write(json.dumps(request) + "\n")  # ASCII: whatever the locale
            worker.process.stdin.flush()
            ready, _, _ = select.select([worker.replies], [], [], self._timeout_s)
            line = worker.replies.readline() if ready else ""
        except (OSError, ValueError):
            line = ""
        if not line:  # the deadline passed, or the worker died: end it, a new one takes its place
            code = worker.process.poll()
            self._end(worker)
            self._give_back(None)
            if code is None:
                raise AgentCallError(
                    f"no answer within {self._timeout_s:g} s (the call's worker process was ended)",
                    timed_out=True,
                )
            raise AgentCallError(f"the agent's worker process exited (code {code})")
        self._give_back(worker)
        reply = json.loads(line)
        if "error" in reply:
            raise AgentCallError(reply["error"])
        return reply["document"]

    async def aclose(self) -> None:
        """Ends the idle workers (a busy one is ended by its deadline)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            if worker.process.stdin is not None:
                worker.process.stdin.close()
            self._end(worker)

    async def __call__(self, qid: str, question: str, passages: list[dict[str, str]] | None = None) -> Any:
        return await asyncio.to_thread(self._call_blocking, qid, question, None, passages)

    async def converse(self, turn: ConversationTurn) -> Any:
        """One turn of a conversation: the target is called with the latest message and, where
        it takes them, ``messages=`` (the history), ``session=`` and ``qid=`` (the session)."""
        return await asyncio.to_thread(self._call_blocking, turn.session, turn.message, turn)


def takes_passages(target: str) -> bool:
    """Whether the callable ``target`` names takes the passages from its caller (a ``passages``
    parameter); False when it cannot be loaded (said by the provider's problems)."""
    import inspect

    try:
        return "passages" in inspect.signature(load_target(target)).parameters
    except (TargetNotFoundError, TypeError, ValueError):
        return False
