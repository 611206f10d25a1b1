"""What every knowledge-base backend shares (embedded index, Elasticsearch): the search interface,
the retrieval modes, the default k, what a build produces, and the content hash of a knowledge base."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from rag_eval_pipeline.common.recent import KeptRecent
from rag_eval_pipeline.language.table import ENGLISH

if TYPE_CHECKING:
    import pandas as pd

LANGUAGE_COLUMN = "language"  # of a passage and of a case: an ISO 639-1 code (language/table.py)
KEPT_RANKINGS = 100_000  # queries whose hits an opened index keeps (a judgement list's questions)


class RetrievalMode(str, Enum):
    """How passages are retrieved. The one list of modes: the configuration schema, the CLI,
    partition keys and both backends take it from here."""

    BM25 = "bm25"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"
    TWO_HOP = "two_hop"
    RERANK = "rerank"  # a first stage's candidates ordered by a cross-encoder (retrieval/reranker.py)

    @property
    def needs_vectors(self) -> bool:
        """Semantic and hybrid search need vectors (or a cluster's semantic field); two_hop runs
        over hybrid when they exist and over BM25 otherwise."""
        return self in (RetrievalMode.SEMANTIC, RetrievalMode.HYBRID)

    @classmethod
    def parse(cls, text: str) -> RetrievalMode:
        try:
            return cls(text)
        except ValueError:
            known = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown retrieval mode '{text}' (known: {known})") from None

    @classmethod
    def available(cls, has_vectors: bool) -> list[str]:
        """The modes an index can serve, as stored in its manifest (rerank is a model over one
        of them, not the index's: it is served wherever its first stage is)."""
        return [m.value for m in cls if m is not cls.RERANK and (has_vectors or not m.needs_vectors)]


class Backend(str, Enum):
    """Where the knowledge base lives: the configuration's one switch (``knowledge_base.backend``)."""

    EMBEDDED = "embedded"
    ELASTICSEARCH = "elasticsearch"


DEFAULT_RETRIEVAL_MODE = RetrievalMode.BM25
DEFAULT_TOP_K = 4
ProgressCallback = Callable[[int, int], None]


def passage_languages(passages: pd.DataFrame) -> list[str]:
    """Each passage's language code (English for a knowledge base stored before languages)."""
    if LANGUAGE_COLUMN in passages:
        return [str(code) for code in passages[LANGUAGE_COLUMN]]
    return [ENGLISH] * len(passages)


def languages_held(counts: dict[str, int]) -> str:
    """A knowledge base's languages as its warnings name them: 'es (3 passages), zh (10 passages)'."""
    return ", ".join(f"{code} ({n} passages)" for code, n in sorted(counts.items()))


def content_version(passages: pd.DataFrame, settings: str) -> str:
    """Hash of the passages (with their languages) and the index ``settings``: equal content ->
    equal version, so an unchanged knowledge base maps to the same index and a changed one (or
    one analysed in another language) to a new index."""
    digest = hashlib.sha256(settings.encode())
    for pid, title, passage, language in zip(
        passages["passage_id"], passages["title"], passages["passage"], passage_languages(passages)
    ):
        digest.update(f"\x1e{pid}\x1f{title}\x1f{passage}\x1f{language}".encode())
    return digest.hexdigest()[:16]


def document_texts(passages: pd.DataFrame) -> list[str]:
    """What is embedded for each passage, by every backend: its title, then its text."""
    return [f"{t}\n{p}" for t, p in zip(passages["title"], passages["passage"])]


@dataclass(frozen=True)
class SearchHit:
    """One ranked passage returned by a search."""

    passage_id: str
    title: str
    passage: str
    score: float


@runtime_checkable
class SearchIndex(Protocol):
    """Ranked retrieval over the knowledge base: best hit first, at most ``k`` hits. ``language``
    is the query's (a lexical index analyses it so; None: the index's own choice)."""

    def search(self, query: str, k: int, language: str | None = None) -> list[SearchHit]: ...


class BatchedIndex(ABC):
    """An index that ranks queries in batches (``search_many``); one query is a batch of one."""

    def search(self, query: str, k: int, language: str | None = None) -> list[SearchHit]:
        return self.search_many([query], k, [language])[0]

    @abstractmethod
    def search_many(
        self, queries: list[str], k: int, languages: Sequence[str | None] | None = None
    ) -> list[list[SearchHit]]:
        """The top ``k`` hits of each query, in its language (None: the index's own choice)."""


class InMemoryIndex(BatchedIndex):
    """Passages held in memory and ranked in batches by a subclass's ``_rank``: the shared part
    of the embedded BM25 and vector indexes."""

    def __init__(self, passages: pd.DataFrame) -> None:
        """``passages``: passage_id, title and passage columns, in the order the scores use."""
        self._ids: list[str] = passages["passage_id"].tolist()
        self._titles: list[str] = passages["title"].tolist()
        self._texts: list[str] = passages["passage"].tolist()
        # each query's hits, ranked once: every model of a comparison asks the same questions
        self._ranked: KeptRecent[tuple[str, str | None, int], tuple[SearchHit, ...]] = KeptRecent(
            KEPT_RANKINGS
        )

    def __len__(self) -> int:
        return len(self._ids)

    def hit(self, position: int, score: float) -> SearchHit:
        return SearchHit(self._ids[position], self._titles[position], self._texts[position], float(score))

    def search_many(
        self, queries: list[str], k: int, languages: Sequence[str | None] | None = None
    ) -> list[list[SearchHit]]:
        if not queries:
            return []
        k = min(k, len(self._ids))
        if k < 1:
            return [[] for _ in queries]
        asked = dict.fromkeys(zip(queries, languages or [None] * len(queries)))  # each once, in order
        known = {q: hits for q in asked if (hits := self._ranked.get((*q, k))) is not None}
        missing = [q for q in asked if q not in known]
        if missing:
            ranked = self._rank([q for q, _ in missing], k, [language for _, language in missing])
            for key, hits in zip(missing, ranked):
                known[key] = tuple(hits)
                self._ranked.put((*key, k), known[key])
        return [list(known[key]) for key in zip(queries, languages or [None] * len(queries))]

    @abstractmethod
    def _rank(self, queries: list[str], k: int, languages: Sequence[str | None]) -> list[list[SearchHit]]:
        """The top ``k`` (already clamped to 1..len) hits of each query, in its language."""


@dataclass(frozen=True)
class IndexManifest:
    """What ``kb_index`` materializes: where the live index is and which content it holds.

    ``version`` is a content hash of the passages and index settings, so an unchanged knowledge base
    maps to the same index and a changed one to a new index that never overwrites the live one.
    """

    backend: str
    location: str
    version: str
    documents: int
    build_seconds: float
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # the details copied, never shared with the manifest

    @property
    def modes(self) -> list[str]:
        return list(self.details.get("modes", []))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IndexManifest:
        return cls(
            backend=data["backend"],
            location=data["location"],
            version=data["version"],
            documents=int(data["documents"]),
            build_seconds=float(data["build_seconds"]),
            details=dict(data.get("details") or {}),
        )
