"""Which passages each generated case is written from: an equal share of the cases per question
type, in a seeded order, spread over the documents (none the source of more than a set share),
multi-hop cases over two passages linked as Wikipedia's are (the first mentions the second's
title), comparisons over two passages about the same kind of subject."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from rag_eval_pipeline.generation.spec import CaseType, GenerationSpec
from rag_eval_pipeline.language.analysis import split_sentences
from rag_eval_pipeline.metrics.reference import content_tokens
from rag_eval_pipeline.retrieval.base import passage_languages

_PARENTHESES = re.compile(r"\s*\([^)]*\)\s*$")
MIN_TITLE_CHARS = 4  # a shorter title ("It") is found in too many passages to mean a link
MAX_TITLE_WORDS = 8
COMPARISON_POOL = 300  # candidates a comparison partner is chosen among


@dataclass(frozen=True)
class Source:
    passage_id: str
    title: str
    passage: str
    language: str = "en"  # the passage's: its case is written and checked in it


@dataclass(frozen=True)
class Planned:
    """One case to write: its id, type and source passages (a multi-hop case's bridge first)."""

    case_id: str
    case_type: CaseType
    sources: tuple[Source, ...]


@dataclass
class Plan:
    cases: list[Planned]
    asked: dict[CaseType, int]
    notes: list[str] = field(default_factory=list)
    document_cap: int = 0


def _rank(seed: int, key: str) -> str:
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def _bare(title: str) -> str:
    """A title as a passage would mention it: without its disambiguation, ``Big Stone Gap (film)``."""
    return _PARENTHESES.sub("", title).strip().lower()


def title_mentions(passages: pd.DataFrame) -> dict[str, list[str]]:
    """passage id -> the ids of other documents' passages whose title it mentions (word n-grams
    of its text looked up among the titles: linear in the text, not quadratic in the titles)."""
    by_title: dict[str, list[str]] = {}
    for pid, title in zip(passages["passage_id"], passages["title"]):
        bare = _bare(str(title))
        if len(bare) >= MIN_TITLE_CHARS and len(bare.split()) <= MAX_TITLE_WORDS:
            by_title.setdefault(bare, []).append(pid)
    links: dict[str, list[str]] = {}
    for pid, title, text in zip(passages["passage_id"], passages["title"], passages["passage"]):
        words = re.findall(r"[\w'’&.-]+", str(text).lower())
        own = _bare(str(title))
        found: list[str] = []
        for size in range(1, MAX_TITLE_WORDS + 1):
            for start in range(len(words) - size + 1):
                gram = " ".join(words[start : start + size]).strip(".")
                if gram != own and gram in by_title:
                    found += [p for p in by_title[gram] if p not in found]
        if found:
            links[pid] = found
    return links


def first_sentence(passage: str) -> str:
    sentences = split_sentences(passage)
    return sentences[0] if sentences else passage


def _overlap(words: set[str], source: Source) -> float:
    """How alike two subjects are: shared content words of the passages' first sentences."""
    other = set(content_tokens(first_sentence(source.passage), source.language))
    return len(words & other) / max(1, len(words | other))


def _shares(types: Sequence[CaseType], n: int) -> dict[CaseType, int]:
    """An equal share of ``n`` per type (the first types take the remainder)."""
    return {t: n // len(types) + (1 if i < n % len(types) else 0) for i, t in enumerate(types)}


def plan_cases(passages: pd.DataFrame, spec: GenerationSpec) -> Plan:
    """The source passages of every case, or a note where a type could not get its share."""
    asked = _shares(spec.types, spec.n)
    cap, notes = _document_cap(passages, spec, asked)
    rows = {
        pid: Source(pid, str(title), str(text), code)
        for pid, title, text, code in zip(
            passages["passage_id"], passages["title"], passages["passage"], passage_languages(passages)
        )
    }
    links = title_mentions(passages) if CaseType.MULTI_HOP in asked or CaseType.COMPARISON in asked else {}
    picker = _SourcePicker(rows, links, cap, spec.seed)
    pickers = {
        CaseType.SINGLE: picker.single,
        CaseType.UNANSWERABLE: picker.single,
        CaseType.MULTI_HOP: picker.bridge,
        CaseType.COMPARISON: picker.comparison,
    }
    remaining = dict(asked)
    cases: list[Planned] = []
    while any(remaining.values()):  # the types interleaved, so a shortfall is spread fairly
        for case_type in spec.types:
            if not remaining[case_type]:
                continue
            sources = pickers[case_type]()
            if sources is None:
                notes.append(
                    f"{case_type.value}: {asked[case_type] - remaining[case_type]} of {asked[case_type]} "
                    "planned (no more source passages fit: too few documents, or none linked)"
                )
                remaining[case_type] = 0
                continue
            cases.append(Planned(f"g{len(cases) + 1:04d}", case_type, sources))
            remaining[case_type] -= 1
    return Plan(cases, asked, notes, cap)


def _document_cap(
    passages: pd.DataFrame, spec: GenerationSpec, asked: dict[CaseType, int]
) -> tuple[int, list[str]]:
    """How many cases a document may source, and a note when its share cannot hold them all
    (the cap raised until it can)."""
    documents = passages["title"].nunique()
    slots = sum(count * t.sources for t, count in asked.items())
    cap = max(1, math.floor(spec.max_document_share * spec.n))
    notes = []
    if documents * cap < slots:
        cap = math.ceil(slots / max(documents, 1))
        notes.append(
            f"{documents} documents cannot hold {slots} sources at {spec.max_document_share:.0%} each: "
            f"at most {cap} cases a document instead"
        )
    return cap, notes


class _SourcePicker:
    """The next case's sources of each kind, in the seed's order, never the same sources twice
    and no document over its cap."""

    def __init__(self, rows: dict[str, Source], links: dict[str, list[str]], cap: int, seed: int) -> None:
        self._rows, self._links, self._cap, self._seed = rows, links, cap, seed
        self._order = sorted(rows, key=lambda pid: _rank(seed, pid))
        self._used: Counter[str] = Counter()  # a document's passages used as sources
        self._taken: set[tuple[str, ...]] = set()

    def _free(self, *sources: Source) -> bool:
        titles = Counter(s.title for s in sources)
        return all(self._used[t] + k <= self._cap for t, k in titles.items())

    def _take(self, *sources: Source) -> tuple[Source, ...]:
        for s in sources:
            self._used[s.title] += 1
        self._taken.add(tuple(s.passage_id for s in sources))
        return sources

    def single(self) -> tuple[Source, ...] | None:
        rows = self._rows
        for pid in self._order:
            if (pid,) not in self._taken and self._free(rows[pid]):
                return self._take(rows[pid])
        return None

    def bridge(self) -> tuple[Source, ...] | None:
        rows = self._rows
        for pid in self._order:
            first = rows[pid]
            for other in sorted(self._links.get(pid, ()), key=lambda p: _rank(self._seed, f"{pid}>{p}")):
                second = rows[other]
                if second.title == first.title or (pid, other) in self._taken:
                    continue
                if self._free(first, second):
                    return self._take(first, second)
        return None

    def comparison(self) -> tuple[Source, ...] | None:
        rows = self._rows
        for pid in self._order:
            first = rows[pid]
            words = set(content_tokens(first_sentence(first.passage), first.language))
            linked = set(self._links.get(pid, ()))
            pool = [
                rows[p]
                for p in self._order[:COMPARISON_POOL]
                if rows[p].title != first.title and p not in linked and (pid, p) not in self._taken
            ]
            if not words or not pool:
                continue

            scored = [(_overlap(words, s), _rank(self._seed, f"{pid}~{s.passage_id}"), s) for s in pool]
            best, _, partner = max(scored, key=lambda item: item[:2])
            if best > 0 and self._free(first, partner):
                return self._take(first, partner)
        return None
