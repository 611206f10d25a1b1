"""An agent whose answers vary between calls: it answers, then abstains, then answers again, per
question (what ``repeats`` is there to measure). Called from several threads at once."""

import threading
from collections import Counter

from example_agent import answer as steady_answer

_calls: Counter[str] = Counter()
_lock = threading.Lock()


def answer(question: str) -> dict:
    with _lock:
        _calls[question] += 1
        call = _calls[question]
    reply = steady_answer(question)
    return reply if call % 3 != 2 else {**reply, "answer": "I don't know."}
