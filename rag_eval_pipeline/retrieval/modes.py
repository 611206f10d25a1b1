"""Retrieval modes over any backend's lexical and semantic indexes: bm25, semantic, hybrid, two_hop."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import pandas as pd

from rag_eval_pipeline.retrieval.base import (
    BatchedIndex,
    IndexManifest,
    ProgressCallback,
    RetrievalMode,
    SearchHit,
    SearchIndex,
)
from rag_eval_pipeline.retrieval.fusion import DEFAULT_RRF_K, reciprocal_rank_fusion

FUSION_CANDIDATES = 50  # hits taken from each ranking before fusing


class ModeUnavailableError(ValueError):
    """The index cannot serve the asked retrieval mode (e.g. semantic without vectors)."""


def search_many(
    index: SearchIndex, queries: Sequence[str], k: int, languages: Sequence[str | None] | None = None
) -> list[list[SearchHit]]:
    """Batch search when the backend has it, one query at a time otherwise; each query in its
    language (None: the index's choice)."""
    batch = getattr(index, "search_many", None)
    if languages is None or not any(languages):  # asked as any search index is: no language
        return batch(list(queries), k) if batch is not None else [index.search(q, k) for q in queries]
    if batch is not None:
        return batch(list(queries), k, list(languages))
    return [index.search(q, k, language) for q, language in zip(queries, languages)]


@dataclass(frozen=True)
class FusedIndex(BatchedIndex):
    """Hybrid retrieval: reciprocal rank fusion of a lexical and a semantic ranking."""

    lexical: SearchIndex
    semantic: SearchIndex
    rrf_k: int = DEFAULT_RRF_K
    candidates: int = FUSION_CANDIDATES

    def search_many(
        self, queries: list[str], k: int, languages: Sequence[str | None] | None = None
    ) -> list[list[SearchHit]]:
        depth = max(k, self.candidates)
        per_index = [search_many(index, queries, depth, languages) for index in (self.lexical, self.semantic)]
        results = []
        for position in range(len(queries)):
            hits = {h.passage_id: h for ranking in per_index for h in ranking[position]}
            rankings = [[h.passage_id for h in ranking[position]] for ranking in per_index]
            fused = reciprocal_rank_fusion(rankings, self.rrf_k)[:k]
            results.append(
                [SearchHit(pid, hits[pid].title, hits[pid].passage, score) for pid, score in fused]
            )
        return results


class TitleCatalog:
    """Every passage by title, and which titles a text mentions (Wikipedia's links, recovered).

    A mention is a whole-word match of a title without its parenthesised disambiguation
    ("Kiss and Tell (1945 film)" -> "kiss and tell"), case-insensitive, at least 4 characters.
    """

    MAX_TITLE_WORDS = 8

    # titles in scripts written without spaces (Chinese, Japanese, Thai) are found inside the text;
    # past this many, scanning for each would cost more than the hop is worth
    MAX_UNSPACED_TITLES = 20_000

    def __init__(self, passages: Iterable[SearchHit]) -> None:
        self._by_title: dict[str, SearchHit] = {}
        self._by_name: dict[tuple[str, ...], list[str]] = {}
        self._unspaced: dict[str, list[str]] = {}
        for hit in passages:
            self._by_title.setdefault(hit.title, hit)
            bare = _DISAMBIGUATION.sub("", hit.title)
            if _UNSPACED.search(bare):
                if len(bare.strip()) >= 2:
                    self._unspaced.setdefault(bare.strip().lower(), []).append(hit.title)
                continue
            name = _words(bare)
            if name and len(" ".join(name)) >= 4 and len(name) <= self.MAX_TITLE_WORDS:
                self._by_name.setdefault(tuple(name), []).append(hit.title)
        if len(self._unspaced) > self.MAX_UNSPACED_TITLES:
            self._unspaced = {}

    def passage(self, title: str) -> SearchHit | None:
        return self._by_title.get(title)

    def mentioned_titles(self, text: str, exclude: str = "") -> list[str]:
        words = _words(text)
        found: dict[str, None] = {}
        for start in range(len(words)):
            for length in range(1, self.MAX_TITLE_WORDS + 1):
                key = tuple(words[start : start + length])
                if len(key) < length:
                    break
                for title in self._by_name.get(key, ()):
                    if title != exclude:
                        found.setdefault(title)
        if self._unspaced:
            lowered = text.lower()
            for name, titles in self._unspaced.items():
                if name in lowered:
                    found.update((title, None) for title in titles if title != exclude)
        return list(found)


_DISAMBIGUATION = re.compile(r"\s*\([^)]*\)\s*$")
_WORD = re.compile(r"\w+")
# Han, kana, Hangul syllables and Thai: scripts whose words run on without spaces
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\u0e00-\u0e7f]")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class TwoHopIndex(BatchedIndex):
    """Multi-hop retrieval for bridge questions: the first hop names the entity the second needs.

    Hop 1 searches the question. Hop 2 searches the question plus the best hit's title, and the
    bridge candidates are the passages whose titles the top first-hop passages mention (the
    links of the Wikipedia article), ordered by their hop-2 rank. The result keeps the best
    first-hop passage, then up to ``bridges`` bridge passages, then fills from hop 2 and hop 1.
    """

    base: SearchIndex
    catalog: TitleCatalog
    bridges: int = 2
    depth: int = 20

    def search_many(
        self, queries: list[str], k: int, languages: Sequence[str | None] | None = None
    ) -> list[list[SearchHit]]:
        depth = max(k, self.depth)
        first = search_many(self.base, queries, depth, languages)
        follow_ups = [f"{q} {hits[0].title}" if hits else q for q, hits in zip(queries, first)]
        second = search_many(self.base, follow_ups, depth, languages)
        return [self._merge(a, b, k) for a, b in zip(first, second)]

    def _merge(self, first: list[SearchHit], second: list[SearchHit], k: int) -> list[SearchHit]:
        if not first:
            return second[:k]
        chosen: dict[str, SearchHit] = {first[0].title: first[0]}
        rank = {h.title: r for r, h in enumerate(second)}
        rank.update({h.title: len(second) + r for r, h in enumerate(first) if h.title not in rank})
        linked: list[str] = []
        for hit in first[:2]:
            linked += self.catalog.mentioned_titles(hit.passage, exclude=hit.title)
        linked = sorted(dict.fromkeys(linked), key=lambda t: rank.get(t, len(rank)))
        for title in linked[: self.bridges]:
            hit = self.catalog.passage(title)
            if hit is not None:
                chosen.setdefault(title, SearchHit(hit.passage_id, hit.title, hit.passage, 0.0))
        for hit in [*second, *first]:
            if len(chosen) >= k:
                break
            chosen.setdefault(hit.title, hit)
        return list(chosen.values())[:k]


Fuse = Callable[[SearchIndex, SearchIndex], SearchIndex]


@dataclass(frozen=True)
class OpenedIndex:
    """A loaded knowledge-base index of any backend: what the retrieval modes are built from.

    ``catalog`` loads the title catalog when two_hop first needs it (Elasticsearch scans every
    passage for it); ``fuse`` makes the hybrid search (client-side RRF unless the backend has
    its own, like Elasticsearch's rrf retriever).
    """

    lexical: SearchIndex
    semantic: SearchIndex | None
    catalog: Callable[[], TitleCatalog]
    backend: str
    fuse: Fuse = FusedIndex
    no_vectors: str | None = None  # why a model was configured and no vectors were made

    def for_mode(self, mode: RetrievalMode | str) -> SearchIndex:
        return index_for_mode(RetrievalMode(mode), self)


def index_for_mode(mode: RetrievalMode, index: OpenedIndex) -> SearchIndex:
    """The one place that maps a retrieval mode to a search, for every backend. Semantic modes
    need vectors, else a clear error; ``two_hop`` runs over hybrid retrieval when vectors exist,
    over BM25 otherwise."""
    if mode is RetrievalMode.BM25:
        return index.lexical
    if mode is RetrievalMode.RERANK:  # a model of its own over a first stage: the knowledge base's
        raise ModeUnavailableError("retrieval mode 'rerank' is served by KnowledgeBase.retriever")
    if mode is RetrievalMode.TWO_HOP:
        base = index.lexical if index.semantic is None else index_for_mode(RetrievalMode.HYBRID, index)
        return TwoHopIndex(base, index.catalog())
    if index.semantic is None and index.no_vectors:
        raise ModeUnavailableError(f"retrieval mode '{mode.value}' is refused: {index.no_vectors}")
    if index.semantic is None:
        raise ModeUnavailableError(
            f"retrieval mode '{mode.value}' needs vectors, and the {index.backend} index has none: "
            "build kb_index with an embedding model (rag-eval run --embedding-model NAME_OR_PATH, "
            "which needs pip install 'rag-eval-pipeline[semantic]'), or on a cluster with an "
            "inference endpoint"
        )
    if mode is RetrievalMode.SEMANTIC:
        return index.semantic
    return index.fuse(index.lexical, index.semantic)


class SearchBackend(Protocol):
    """Where the knowledge base lives. ``build`` indexes the passages under a new content version
    that becomes live only when complete; ``open`` loads the index a manifest names, whose
    ``for_mode`` gives the search of each retrieval mode."""

    name: str

    def build(self, passages: pd.DataFrame, on_progress: ProgressCallback | None = None) -> IndexManifest: ...

    def open(self, manifest: IndexManifest) -> OpenedIndex: ...
