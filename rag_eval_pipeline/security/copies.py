"""The attacked copies of the knowledge base: the original passages and the planted ones,
indexed in a scratch folder of the probe run's own (always embedded, even when the knowledge
base lives in Elasticsearch: the team's cluster is never written to). The original index, its
folder and its fingerprint are not touched: nothing here writes where the evaluation reads."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from rag_eval_pipeline.retrieval.base import Backend, RetrievalMode
from rag_eval_pipeline.retrieval.knowledge_base import KnowledgeBase, Retriever
from rag_eval_pipeline.retrieval.spec import KnowledgeBaseSpec
from rag_eval_pipeline.security.planting import PlantedDoc, attacked_passages


class AttackedCopies:
    """One attacked copy per set of planted documents, built on first use under ``scratch``
    (vectors only when a mode needs them)."""

    def __init__(
        self, spec: KnowledgeBaseSpec, passages: pd.DataFrame, scratch: Path, with_vectors: bool
    ) -> None:
        embedded = dataclasses.replace(
            spec,
            backend=Backend.EMBEDDED,
            embedding_model=spec.embedding_model if with_vectors else None,
            inference_id=None,
        )
        self._knowledge_base = KnowledgeBase(embedded, scratch)
        self._passages = passages
        self._built: dict[frozenset[str], object] = {}

    def __call__(self, documents: Sequence[PlantedDoc], mode: RetrievalMode) -> Retriever:
        key = frozenset(d.passage_id for d in documents)
        if key not in self._built:
            self._built[key] = self._knowledge_base.build(attacked_passages(self._passages, documents))
        return self._knowledge_base.retriever(self._built[key], mode)  # type: ignore[arg-type]
