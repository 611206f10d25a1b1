"""An agent whose answers vary between calls: it answers, then abstains, then answers again, per
question (what ``repeats`` is there to measure). A Python agent runs in worker processes of its
own, so its count of calls is kept in a file every worker shares (``FLAKY_AGENT_STATE``)."""

import fcntl
import json
import os
import tempfile
from pathlib import Path

from example_agent import answer as steady_answer


def _call_number(question: str) -> int:
    state = Path(os.environ.get("FLAKY_AGENT_STATE") or Path(tempfile.gettempdir()) / "flaky-agent.json")
    with open(state.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        calls = json.loads(state.read_text()) if state.is_file() else {}
        calls[question] = calls.get(question, 0) + 1
        state.write_text(json.dumps(calls))
        return calls[question]


def answer(question: str) -> dict:
    reply = steady_answer(question)
    return reply if _call_number(question) % 3 != 2 else {**reply, "answer": "I don't know."}
