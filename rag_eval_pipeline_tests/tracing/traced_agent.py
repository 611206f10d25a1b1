"""The tests' own agent that says which trace it answered in, as an instrumented agent's
response does: its reply (the example agent's, with its own retrieval) carries a W3C
``traceparent`` whose ids are derived from the question, so a test knows them too."""

from __future__ import annotations

import hashlib

from example_agent import answer as retrieve_and_answer


def trace_of(question: str) -> tuple[str, str]:
    """The (trace id, span id) the agent reports for ``question``, in hex."""
    digest = hashlib.sha256(question.encode()).hexdigest()
    return digest[:32], digest[32:48]


def answer(question: str) -> dict:
    trace, span = trace_of(question)
    return {**retrieve_and_answer(question), "meta": {"traceparent": f"00-{trace}-{span}-01"}}
