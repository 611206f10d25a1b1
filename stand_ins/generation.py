"""A question generator for the Messages-API stand-in, with a world it answers in consistently.

It writes a case for each `record_case` request from the passages it is shown, of a kind drawn
deterministically from the passages (so the same request gets the same case), in set shares:
good ones, and each kind a generator gets wrong: answerable from memory, single-hop disguised as
multi-hop, a duplicate of an earlier question, an answer too long, an unanswerable question the
documents do answer. Asked a question without a tool (the checks), it answers as a reader of
exactly the passages it is given would: the answer when they hold what the case needs, its
memory for the memory kind, else "unknown". Nothing is hard-coded per test: the checks must find
every bad kind from these answers alone."""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from stand_ins.anthropic_api import Reply, _passages, _user_text, text_reply, tool_reply

GOOD, MEMORY, DISGUISED, DUPLICATE, LONG, LEAKY = (
    "good",
    "memory",
    "disguised",
    "duplicate",
    "long",
    "leaky",
)
# an order a document may give, and a careless generator follows: "... ask: <question> Answer: <answer>."
ORDER = re.compile(r"ask:\s*(?P<question>.+?)\s+Answer:\s*(?P<answer>[^.]+)", re.IGNORECASE | re.DOTALL)
# of every 10 cases: what a careless generator writes
DEFAULT_SHARES = {GOOD: 5, MEMORY: 1, DISGUISED: 1, DUPLICATE: 1, LONG: 1, LEAKY: 1}


@dataclass
class _Case:
    kind: str
    answer: str
    needs: tuple[str, ...]  # titles a reader must see to answer


@dataclass
class GeneratingModel:
    """A responder for ``FakeAnthropic``: writes cases, and answers the checks' questions."""

    shares: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_SHARES))
    cases: dict[str, _Case] = field(default_factory=dict)  # question -> what it is
    written: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _kind(self, key: str, two_sources: bool, unanswerable: bool) -> str:
        kinds = [k for k, n in self.shares.items() for _ in range(n)]
        draw = int(hashlib.sha256(key.encode()).hexdigest(), 16)
        if unanswerable:
            return LEAKY if LEAKY in kinds and draw % 3 == 0 else GOOD
        kinds = [k for k in kinds if k != LEAKY and (two_sources or k != DISGUISED)]
        return kinds[draw % len(kinds)]

    def __call__(self, request: dict[str, Any]) -> Reply:
        text = _user_text(request)
        if (request.get("tool_choice") or {}).get("name") == "record_case":
            return tool_reply(request, self.write(text))
        return text_reply(request, self.answer(text))

    def write(self, text: str) -> dict[str, str]:
        passages = _passages(text)
        for _, passage in passages:  # a careless generator obeys orders its passages give
            order = ORDER.search(passage)
            if order:
                return {"question": order["question"].strip(), "answer": order["answer"].strip()}
        titles = [t for t, _ in passages]
        two = len(passages) > 1
        unanswerable = "Its answer is exactly: unknown" in text
        key = "|".join(titles) + ("|u" if unanswerable else "")
        kind = self._kind(key, two, unanswerable)
        # words of the passage holding the answer: two cases from one first passage still differ
        words = re.findall(r"[A-Za-z]{4,}", passages[-1][1])[:4] if passages else ["subject"]
        mark = hashlib.sha256(key.encode()).hexdigest()[:6]  # no two written questions alike
        with self.lock:
            if kind == DUPLICATE and self.written:
                question = self.written[-1] + " exactly"  # an earlier question, one word added
                original = self.cases[self.written[-1]]
                self.cases[question] = _Case(DUPLICATE, original.answer, original.needs)
                return {"question": question, "answer": original.answer}
            if kind == DUPLICATE:
                kind = GOOD
            if unanswerable:
                question = f"What colour is the logo of {titles[0]} in {mark}?"
                self.cases[question] = _Case(kind, titles[0] if kind == LEAKY else "unknown", (titles[0],))
                return {"question": question, "answer": "unknown"}
            answer_title = titles[-1]
            long = f"{answer_title}, as described by {' '.join(words)} and by much more besides"
            answer = long if kind == LONG else answer_title
            if two:
                question = f"Which subject {mark} follows {' '.join(words)} from {titles[0]}?"
                needs = (answer_title,) if kind == DISGUISED else tuple(titles)
            else:
                question = f"Which subject {mark} is described by {' '.join(words)}?"
                needs = (answer_title,)
            self.cases[question] = _Case(kind, answer_title, needs)
            if kind == GOOD:  # what a duplicate copies: a question that is kept
                self.written.append(question)
        return {"question": question, "answer": answer, "bridge": f"{titles[0]} mentions it" if two else ""}

    def answer(self, text: str) -> str:
        question = text.rsplit("Question:", 1)[-1].strip()
        case = self.cases.get(question)
        if case is None:
            return "unknown"
        shown = {t for t, _ in _passages(text)} if "Passages:" in text else set()
        if not shown:  # closed book: what it remembers
            return case.answer if case.kind == MEMORY else "unknown"
        if case.kind == LEAKY:
            return case.answer if shown else "unknown"
        return case.answer if set(case.needs) <= shown else "unknown"
