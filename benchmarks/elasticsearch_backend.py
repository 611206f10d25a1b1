"""Benchmark: the Elasticsearch knowledge base beside the embedded index, on the same data.

All 4,943 passages of the 500 shared questions: bulk indexing throughput (BM25 only, and with
384-dimension vectors), and query latency p50/p95 over the 500 questions for BM25 and kNN, with
the embedded index measured in the same run as the baseline. Query vectors are computed once
beforehand so that both kNN figures time the search alone.

    HF_HUB_OFFLINE=1 python benchmarks/elasticsearch_backend.py --es-url http://127.0.0.1:9250
"""

import argparse
import statistics
import time
import uuid
from pathlib import Path

import numpy as np
from elasticsearch import Elasticsearch

from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.knowledge_base import flatten_passages
from rag_eval_pipeline.retrieval.base import document_texts
from rag_eval_pipeline.retrieval.bm25_index import Bm25Index
from rag_eval_pipeline.retrieval.elasticsearch import build
from rag_eval_pipeline.retrieval.elasticsearch.build import build_es_index
from rag_eval_pipeline.retrieval.elasticsearch.cluster import detect_features
from rag_eval_pipeline.retrieval.elasticsearch.search import EsDenseIndex, EsLexicalIndex
from rag_eval_pipeline.retrieval.embedder import MINILM, make_embedder, resolve_embedding_model
from rag_eval_pipeline.retrieval.vector_index import DenseIndex

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"


class Precomputed:
    """Serves vectors computed once, so indexing and search are timed without the model."""

    def __init__(self, model_id: str, table: dict[str, np.ndarray]) -> None:
        self.model_id = model_id
        self._table = table

    def encode(self, texts, on_progress=None):
        return np.vstack([self._table[t] for t in texts])


def latencies_ms(search, items, k=4) -> tuple[float, float]:
    timings = []
    for item in items:
        started = time.perf_counter()
        search(item, k)
        timings.append(1000 * (time.perf_counter() - started))
    return statistics.median(timings), float(np.percentile(timings, 95))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--es-url", default="http://127.0.0.1:9250")
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    parser.add_argument("--embedding-model", default=MINILM)
    args = parser.parse_args()

    questions = read_hotpotqa_file(args.dataset)
    passages = flatten_passages(questions)
    queries = questions["question"].tolist()
    model = make_embedder(resolve_embedding_model(args.embedding_model))
    texts = document_texts(passages)
    started = time.perf_counter()
    vectors = model.encode(texts + queries)
    embed_s = time.perf_counter() - started
    table = dict(zip(texts + queries, vectors))
    embedder = Precomputed(model.model_id, table)

    es = Elasticsearch(args.es_url, request_timeout=120)
    features = detect_features(es, None)
    prefix = f"bench-{uuid.uuid4().hex[:6]}"
    try:
        serial = {}  # the baseline: one bulk request in flight, as before
        default_threads = build.BULK_THREADS
        build.BULK_THREADS = 1
        for name, with_vectors in (("bm25", None), ("dense", embedder)):
            started = time.perf_counter()
            build_es_index(es, passages, f"{prefix}-serial-{name}", features, with_vectors)
            serial[name] = time.perf_counter() - started
        build.BULK_THREADS = default_threads
        started = time.perf_counter()
        lexical_manifest = build_es_index(es, passages, f"{prefix}-bm25", features)
        bm25_bulk_s = time.perf_counter() - started
        started = time.perf_counter()
        dense_manifest = build_es_index(es, passages, f"{prefix}-dense", features, embedder)
        dense_bulk_s = time.perf_counter() - started

        es_lexical = EsLexicalIndex(es, lexical_manifest.details["index"])
        es_dense = EsDenseIndex(es, dense_manifest.details["index"], embedder)
        started = time.perf_counter()
        embedded_lexical = Bm25Index.build(passages)
        embedded_build_s = time.perf_counter() - started
        embedded_dense = DenseIndex(np.vstack([table[t] for t in texts]), passages, embedder)

        rows = {
            "embedded bm25": latencies_ms(embedded_lexical.search, queries),
            "elasticsearch bm25": latencies_ms(es_lexical.search, queries),
            "embedded exact cosine": latencies_ms(embedded_dense.search, queries),
            "elasticsearch kNN (HNSW)": latencies_ms(es_dense.search, queries),
        }
        overlap = np.mean(
            [
                len(
                    {h.passage_id for h in es_dense.search(q, 4)}
                    & {h.passage_id for h in embedded_dense.search(q, 4)}
                )
                / 4
                for q in queries
            ]
        )
    finally:
        names = list(es.indices.get(index=f"{prefix}-*", allow_no_indices=True))
        if names:
            es.indices.delete(index=",".join(names))

    n = len(passages)
    print(
        f"passages {n}, questions {len(queries)}, "
        f"Elasticsearch {features.version} (analyzer {features.analyzer})"
    )
    print(f"embedding {n + len(queries)} texts once: {embed_s:.0f} s (not part of the figures below)")
    print(
        f"bulk, BM25 only: {build.BULK_THREADS} requests in flight {bm25_bulk_s:.1f} s = "
        f"{n / bm25_bulk_s:.0f} docs/s, 1 in flight (before) {n / serial['bm25']:.0f} docs/s "
        f"(embedded BM25 build {embedded_build_s:.1f} s = {n / embedded_build_s:.0f} docs/s)"
    )
    print(
        f"bulk, with 384-d vectors: {build.BULK_THREADS} in flight {dense_bulk_s:.1f} s = "
        f"{n / dense_bulk_s:.0f} docs/s, 1 in flight (before) {n / serial['dense']:.0f} docs/s"
    )
    print(f"{'query latency (k=4)':28s} {'p50 ms':>8s} {'p95 ms':>8s}")
    for name, (p50, p95) in rows.items():
        print(f"{name:28s} {p50:8.2f} {p95:8.2f}")
    base = rows["embedded bm25"][0]
    print(
        "p50 vs embedded bm25: " + ", ".join(f"{name} x{p50 / base:.1f}" for name, (p50, _) in rows.items())
    )
    print(f"kNN overlap@4 with exact cosine (HNSW recall): {overlap:.3f}")


if __name__ == "__main__":
    main()
