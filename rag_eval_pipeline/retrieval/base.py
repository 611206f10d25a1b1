"""The search interface every knowledge-base backend implements (embedded index, Elasticsearch)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class SearchHit:
    """One ranked passage returned by a search."""

    passage_id: str
    title: str
    passage: str
    score: float


@runtime_checkable
class SearchIndex(Protocol):
    """Ranked retrieval over the knowledge base: best hit first, at most ``k`` hits."""

    def search(self, query: str, k: int) -> list[SearchHit]: ...


class InMemoryIndex(ABC):
    """Passages held in memory and ranked in batches by a subclass's ``_rank``: the shared part
    of the embedded BM25 and vector indexes."""

    def __init__(self, passage_ids: list[str], titles: list[str], texts: list[str]) -> None:
        self._ids, self._titles, self._texts = passage_ids, titles, texts

    def __len__(self) -> int:
        return len(self._ids)

    def hit(self, position: int, score: float) -> SearchHit:
        return SearchHit(self._ids[position], self._titles[position], self._texts[position], float(score))

    def search(self, query: str, k: int) -> list[SearchHit]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: list[str], k: int) -> list[list[SearchHit]]:
        if not queries:
            return []
        k = min(k, len(self._ids))
        if k < 1:
            return [[] for _ in queries]
        return self._rank(queries, k)

    @abstractmethod
    def _rank(self, queries: list[str], k: int) -> list[list[SearchHit]]:
        """The top ``k`` (already clamped to 1..len) hits of each query."""


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
        return {
            "backend": self.backend,
            "location": self.location,
            "version": self.version,
            "documents": self.documents,
            "build_seconds": self.build_seconds,
            "details": dict(self.details),
        }

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
