"""Benchmark: knowledge bases of 10k, 100k and 1M passages, side by side in one run.

The corpus is derived deterministically from the 4,943 shared passages: passage i is passage
i mod 4,943 with a distinct title ("<title> (copy n)") and its sentences in a shuffled order, so
the text statistics stay those of Wikipedia paragraphs. It is generated in chunks. Each build
runs in a fresh process, whose peak memory above its start is reported (per passage too).

- embedded BM25 (bm25s, the product's ``Bm25Index``): build time, peak memory, size on disk,
  query p50/p95 over the 500 shared questions, beside bm25s' own top-k selection (the baseline);
- vectors: exact search (the product's numpy matrix product) and the product's approximate HNSW
  graph (usearch, ``vector_search: hnsw``) with its recall@10 against exact. Embedding a million
  passages would take hours on 2 cores (about 160 passages/s), so the vectors of a derived
  passage are its source passage's ONNX ``minilm`` vector plus Gaussian noise (sigma 0.02 per
  dimension, renormalized): search cost and recall depend on the geometry, not on where the
  vectors came from;
- Elasticsearch (``--es-url``): the product's bulk load (two requests in flight, no replicas and
  refresh off during the load) without vectors, with vectors as base64 (the product) and as
  float arrays (the baseline), and BM25 query p50/p95.

    HF_HUB_OFFLINE=1 python benchmarks/scale.py [--sizes 10000,100000,1000000] [--es-url URL]
        [--es-vectors-up-to 100000] [--parts bm25,vectors,es]
"""

import argparse
import concurrent.futures
import multiprocessing
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from rag_eval_pipeline.retrieval.vector_index import HNSW_EXPANSION

REPO = Path(__file__).resolve().parents[1]
DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
CHUNK = 50_000
QUERIES = 500
NOISE = 0.02
EXPANSIONS = (64, HNSW_EXPANSION)  # usearch's default expansion_search, and the product's


def source_passages() -> tuple[pd.DataFrame, list[str]]:
    from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
    from rag_eval_pipeline.data.knowledge_base import flatten_passages

    questions = read_hotpotqa_file(DATASET)
    return flatten_passages(questions), questions["question"].tolist()[:QUERIES]


def derived_chunks(base: pd.DataFrame, size: int):
    """Chunks of the derived corpus: (first row number, frame)."""
    sentences = base["sentences"].tolist()
    titles, n = base["title"].tolist(), len(base)
    for start in range(0, size, CHUNK):
        rows = []
        for i in range(start, min(start + CHUNK, size)):
            source, copy = i % n, i // n
            order = np.random.default_rng(i).permutation(len(sentences[source]))
            title = titles[source] if copy == 0 else f"{titles[source]} (copy {copy})"
            rows.append(
                {
                    "passage_id": f"p{i:08d}",
                    "title": title,
                    "passage": " ".join(str(sentences[source][j]).strip() for j in order),
                }
            )
        yield start, pd.DataFrame(rows)


def _status_kb(field: str) -> int:
    status = Path("/proc/self/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith(f"{field}:")))


def memory_mark() -> int:
    """Resets this process's peak (Linux: clear_refs 5) and returns its resident KB now."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status_kb("VmRSS")


def peak_mb_since(mark_kb: int) -> float:
    """How far the resident memory rose above the mark at its peak (VmHWM)."""
    return (_status_kb("VmHWM") - mark_kb) / 1024


def latency_ms(search, queries) -> tuple[float, float]:
    timings = []
    for query in queries:
        started = time.perf_counter()
        search(query)
        timings.append(1000 * (time.perf_counter() - started))
    return statistics.median(timings), float(np.percentile(timings, 95))


def bm25_measure(size: int) -> dict:
    from rag_eval_pipeline.retrieval.bm25_index import Bm25Index

    base, queries = source_passages()
    start_kb = memory_mark()
    started = time.perf_counter()
    corpus = pd.concat([chunk for _, chunk in derived_chunks(base, size)], ignore_index=True)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    index = Bm25Index.build(corpus)
    build_s = time.perf_counter() - started
    peak = peak_mb_since(start_kb)
    with tempfile.TemporaryDirectory() as folder:
        index.save(Path(folder))
        disk_mb = sum(f.stat().st_size for f in Path(folder).iterdir()) / 1e6
    p50, p95 = latency_ms(lambda q: index.search(q, 10), queries)

    def bm25s_selection(query: str) -> None:  # the product's query before: bm25s' own top-k
        tokens = index._tokenizer.tokenize([query], update_vocab=False, show_progress=False, return_as="ids")
        index._retriever.retrieve(tokens, k=10, show_progress=False)

    before_p50, before_p95 = latency_ms(bm25s_selection, queries)
    return {
        "before_p50": before_p50,
        "before_p95": before_p95,
        "generate_s": generated,
        "build_s": build_s,
        "peak_mb": peak,
        "disk_mb": disk_mb,
        "p50": p50,
        "p95": p95,
    }


def vectors_for(size: int, base_vectors: np.ndarray) -> np.ndarray:
    out = np.empty((size, base_vectors.shape[1]), dtype=np.float32)
    for start in range(0, size, CHUNK):
        stop = min(start + CHUNK, size)
        rng = np.random.default_rng(start)
        block = base_vectors[np.arange(start, stop) % len(base_vectors)]
        block = block + rng.normal(0, NOISE, block.shape).astype(np.float32)
        out[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def vector_measure(size: int, base_vectors: np.ndarray, query_vectors: np.ndarray) -> dict:
    from usearch.index import Index

    from rag_eval_pipeline.retrieval.vector_index import HnswIndex

    start_kb = memory_mark()
    matrix = vectors_for(size, base_vectors)
    exact_peak = peak_mb_since(start_kb)
    timings, exact_ids = [], []
    for query in query_vectors:
        started = time.perf_counter()
        scores = matrix @ query
        top = np.argpartition(-scores, 10)[:10]
        top = top[np.argsort(-scores[top])]
        timings.append(1000 * (time.perf_counter() - started))
        exact_ids.append(set(top.tolist()))
    exact = (statistics.median(timings), float(np.percentile(timings, 95)))
    folder = tempfile.mkdtemp()
    started = time.perf_counter()
    HnswIndex.save_graph(matrix, Path(folder))  # the product's graph: f16, one thread
    ann_build_s = time.perf_counter() - started
    ann_peak = peak_mb_since(start_kb)
    ann = Index.restore(str(next(Path(folder).glob("*.usearch"))), view=True)  # memory-mapped, as opened
    by_ef = {}
    for ef in EXPANSIONS:  # candidates kept while searching: recall bought with latency
        ann.expansion_search = ef
        timings, recall = [], []
        for query, truth in zip(query_vectors, exact_ids):
            started = time.perf_counter()
            found = ann.search(query, 10).keys
            timings.append(1000 * (time.perf_counter() - started))
            recall.append(len(truth & set(found.tolist())) / 10)
        by_ef[ef] = (statistics.median(timings), float(np.percentile(timings, 95)), float(np.mean(recall)))
    shutil.rmtree(folder)
    return {
        "exact_p50": exact[0],
        "exact_p95": exact[1],
        "matrix_mb": matrix.nbytes / 1e6,
        "exact_peak_mb": exact_peak,
        "ann_build_s": ann_build_s,
        "ann_peak_mb": ann_peak,
        "by_ef": by_ef,
    }


def es_measure(size: int, es_url: str, base_vectors: np.ndarray | None, as_arrays: bool = False) -> dict:
    """``as_arrays``: vectors as JSON float arrays, the product's format before base64 (the baseline)."""
    from elasticsearch import Elasticsearch

    from rag_eval_pipeline.retrieval.elasticsearch import build
    from rag_eval_pipeline.retrieval.elasticsearch.build import (
        VECTOR_FIELD,
        bulk_load_settings,
        kb_mapping,
        vector_value,
    )
    from rag_eval_pipeline.retrieval.elasticsearch.cluster import create_index, detect_features
    from rag_eval_pipeline.retrieval.elasticsearch.search import EsLexicalIndex

    es = Elasticsearch(es_url, request_timeout=300)
    features = detect_features(es, None)
    base, queries = source_passages()
    name = f"scale-{uuid.uuid4().hex[:6]}"
    dims = None if base_vectors is None else int(base_vectors.shape[1])
    create_index(
        es,
        name,
        mappings=kb_mapping(features, dims, "scale", "minilm" if dims else None),
        settings=bulk_load_settings(features),
    )

    def documents():
        for start, chunk in derived_chunks(base, size):
            vectors = vectors_for(start + len(chunk), base_vectors)[start:] if dims else None
            for row_number, row in enumerate(chunk.itertuples(index=False)):
                source = {"passage_id": row.passage_id, "title": row.title, "passage": row.passage}
                if vectors is not None:
                    vector = vectors[row_number]
                    source[VECTOR_FIELD] = vector.tolist() if as_arrays else vector_value(vector, features)
                yield row.passage_id, source

    try:
        started = time.perf_counter()
        report = build.bulk_index(es, name, documents(), size)
        es.indices.put_settings(index=name, settings={"refresh_interval": "1s"})
        es.indices.refresh(index=name)
        load_s = time.perf_counter() - started
        assert report.errors == 0 and es.count(index=name)["count"] == size
        lexical = EsLexicalIndex(es, name)
        p50, p95 = latency_ms(lambda q: lexical.search(q, 10), queries[:200])
    finally:
        es.indices.delete(index=name)
    return {"docs_per_s": size / load_s, "load_s": load_s, "p50": p50, "p95": p95}


def in_fresh_process(function, *args) -> dict:
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(function, *args).result()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--es-url")
    parser.add_argument("--es-vectors-up-to", type=int, default=100_000)
    parser.add_argument("--parts", default="bm25,vectors,es", help="which tables to measure")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    parts = set(args.parts.split(","))

    from rag_eval_pipeline.retrieval.base import document_texts
    from rag_eval_pipeline.retrieval.embedder import MINILM, make_embedder, resolve_embedding_model

    base, queries = source_passages()
    base_vectors = query_vectors = None
    if parts & {"vectors", "es"}:
        embedder = make_embedder(resolve_embedding_model(MINILM))
        started = time.perf_counter()
        base_vectors = embedder.encode(document_texts(base))
        query_vectors = embedder.encode(queries)
        took = time.perf_counter() - started
        print(f"{len(base)} source passages embedded once in {took:.0f} s", flush=True)

    print(
        "\n| passages | BM25 build s | peak MB (per passage KB) | on disk MB | query p50 / p95 ms "
        "| with bm25s' own top-k selection (before) p50 / p95 ms |"
    )
    print("|---|---|---|---|---|---|", flush=True)
    for size in sizes if "bm25" in parts else []:
        m = in_fresh_process(bm25_measure, size)
        print(
            f"| {size:,} | {m['build_s']:.1f} | {m['peak_mb']:,.0f} ({1024 * m['peak_mb'] / size:.1f}) "
            f"| {m['disk_mb']:,.0f} | {m['p50']:.1f} / {m['p95']:.1f} "
            f"| {m['before_p50']:.1f} / {m['before_p95']:.1f} |",
            flush=True,
        )

    print(
        "\n| passages | exact: matrix MB | exact p50 / p95 ms | HNSW build s | HNSW peak MB "
        + "".join(f"| HNSW ef {ef}: p50 / p95 ms, recall@10 " for ef in EXPANSIONS)
        + "|"
    )
    print("|---|---|---|---|---|" + "---|" * len(EXPANSIONS), flush=True)
    for size in sizes if "vectors" in parts else []:
        m = in_fresh_process(vector_measure, size, base_vectors, query_vectors)
        print(
            f"| {size:,} | {m['matrix_mb']:,.0f} | {m['exact_p50']:.1f} / {m['exact_p95']:.1f} "
            f"| {m['ann_build_s']:.1f} | {m['ann_peak_mb']:,.0f} "
            + "".join(f"| {p50:.2f} / {p95:.2f}, {recall:.3f} " for p50, p95, recall in m["by_ef"].values())
            + "|",
            flush=True,
        )

    if args.es_url and "es" in parts:
        print(
            "\n| passages | Elasticsearch bulk, no vectors docs/s | with 384-d vectors (base64) docs/s "
            "| with vectors as float arrays (before) docs/s | BM25 p50 / p95 ms |"
        )
        print("|---|---|---|---|---|", flush=True)
        for size in sizes:
            lexical = in_fresh_process(es_measure, size, args.es_url, None)
            dense = arrays = "not run"
            if size <= args.es_vectors_up_to:
                dense = f"{in_fresh_process(es_measure, size, args.es_url, base_vectors)['docs_per_s']:,.0f}"
                arrays = in_fresh_process(es_measure, size, args.es_url, base_vectors, True)["docs_per_s"]
                arrays = f"{arrays:,.0f}"
            print(
                f"| {size:,} | {lexical['docs_per_s']:,.0f} | {dense} | {arrays} "
                f"| {lexical['p50']:.1f} / {lexical['p95']:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())
