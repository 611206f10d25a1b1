import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rag_eval_pipeline.data.knowledge_base import passage_id
from rag_eval_pipeline.retrieval.embedded import build_embedded_index, open_embedded_index
from rag_eval_pipeline.retrieval.vector_index import DenseIndex


class HashingEmbedder:
    """Deterministic bag-of-words vectors: enough to test storage and ranking exactly."""

    model_id = "hashing-test-embedder"

    def encode(self, texts, on_progress=None):
        vectors = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                vectors[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1
        if on_progress:
            on_progress(len(texts), len(texts))
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


PASSAGES = pd.DataFrame(
    [
        {"passage_id": passage_id(t), "title": t, "passage": p}
        for t, p in [("Cats", "cats purr softly"), ("Dogs", "dogs bark loudly"), ("Birds", "birds sing")]
    ]
)


def test_exact_cosine_top_k_by_hand():
    vectors = np.array([[1, 0], [0.6, 0.8], [0, 1]], dtype=np.float32)

    class Fixed:
        model_id = "fixed"

        def encode(self, texts, on_progress=None):
            return np.array([[0.8, 0.6]] * len(texts), dtype=np.float32)

    hits = DenseIndex(vectors, PASSAGES, Fixed()).search("q", 2)
    # cosines: Cats 0.8, Dogs 0.6*0.8 + 0.8*0.6 = 0.96, Birds 0.6
    assert [h.title for h in hits] == ["Dogs", "Cats"]
    assert [round(h.score, 3) for h in hits] == [0.96, 0.8]


def test_vectors_round_trip_through_the_versioned_index(tmp_path: Path):
    embedder = HashingEmbedder()
    progress = []
    manifest = build_embedded_index(
        PASSAGES, tmp_path, embedder, on_progress=lambda d, t: progress.append((d, t))
    )
    assert progress == [(3, 3)]
    assert manifest.details["embedding_model"] == "hashing-test-embedder"
    assert manifest.details["modes"] == ["bm25", "semantic", "hybrid", "two_hop"]
    stored = np.load(Path(manifest.location) / "vectors.npy")
    assert stored.dtype == np.float32 and np.allclose(np.linalg.norm(stored, axis=1), 1.0)
    semantic = open_embedded_index(manifest, lambda model: embedder).semantic
    fresh = DenseIndex(
        embedder.encode([f"{t}\n{p}" for t, p in zip(PASSAGES.title, PASSAGES.passage)]), PASSAGES, embedder
    )
    for query in ["dogs bark", "cats", "birds sing"]:
        assert semantic.search(query, 3) == fresh.search(query, 3)


def test_vectors_from_another_model_are_refused(tmp_path: Path):
    manifest = build_embedded_index(PASSAGES, tmp_path, HashingEmbedder())

    class Other(HashingEmbedder):
        model_id = "another-model"

    with pytest.raises(ValueError, match="made with hashing-test-embedder, not another-model"):
        open_embedded_index(manifest, lambda model: Other())
