"""Sentence embeddings for semantic retrieval (optional extra: sentence-transformers, torch)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
INSTALL_HINT = "pip install 'rag-eval-pipeline[semantic]'"


class SemanticExtraMissingError(ImportError):
    """A semantic mode was asked for without the optional embedding dependencies."""


class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors, one row per text."""

    model_id: str

    def encode(
        self, texts: Sequence[str], on_progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray: ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32: cosine = dot product."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 by default; a hub name or a local folder (offline: a local folder)."""

    def __init__(self, model: str = DEFAULT_EMBEDDING_MODEL, batch_size: int = 64) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise SemanticExtraMissingError(
                f"Semantic retrieval needs sentence-transformers, which is not installed: "
                f"{INSTALL_HINT}. The lexical mode (bm25) works without it."
            ) from err
        self.model_id = model
        self.batch_size = batch_size
        self._model: Any = SentenceTransformer(model, device="cpu")

    def encode(
        self, texts: Sequence[str], on_progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        texts = list(texts)
        # sentence-transformers renamed this method; support both sides of the rename
        dimension_of = getattr(self._model, "get_embedding_dimension", None)
        dimension = (dimension_of or self._model.get_sentence_embedding_dimension)()
        if not texts:
            return np.zeros((0, dimension), dtype=np.float32)
        chunk = self.batch_size * 8  # report progress every few batches
        parts = []
        for start in range(0, len(texts), chunk):
            part = self._model.encode(
                texts[start : start + chunk],
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
            parts.append(part)
            if on_progress is not None:
                on_progress(min(start + chunk, len(texts)), len(texts))
        return l2_normalise(np.vstack(parts))
