"""Benchmark: what the reranker reads and what it costs, by its cuts, on HotpotQA.

For each setting (the default, then cheaper ones): both-hops recall@4 on every question, pairs
and tokens the cross-encoder reads a question (what its time grows with, whatever the load),
and seconds a question on the first ``--timed`` questions, each setting timed in turns with the
default in the same run (ratios, since the machine is shared). Recall is computed from scores
kept by content in ``--scores`` (a pair's score does not depend on what else is scored), so a
second run of this script scores only pairs it has not seen; timing never reads kept scores.

    python benchmarks/rerank_speed.py [--questions 500] [--timed 40] [--scores FILE]
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.knowledge_base import build_judgement_list, flatten_passages
from rag_eval_pipeline.retrieval.embedded import build_embedded_index, open_embedded_index
from rag_eval_pipeline.retrieval.pair_scores import KeptPairScores, PairScoreStore
from rag_eval_pipeline.retrieval.reranker import CrossEncoder, RerankedIndex
from rag_eval_pipeline.retrieval.spec import RerankSpec

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
K = 4
SETTINGS = {  # name -> the cuts (the rest as RerankSpec's defaults)
    "whole passages (before)": {},
    "passages 64, bridge 32, pool 8": {"passage_tokens": 64, "bridge_tokens": 32, "bridge_pool": 8},
    "passages 64, bridge whole, pool 8": {"passage_tokens": 64, "bridge_pool": 8},
    "passages 64, bridge 96, pool 8": {"passage_tokens": 64, "bridge_tokens": 96, "bridge_pool": 8},
}


class Reading:
    """The cross-encoder as the reranker calls it (through ``score``), counting the pairs and
    tokens it is given."""

    def __init__(self, encoder: CrossEncoder, score=None) -> None:
        self.encoder, self.pairs, self.tokens = encoder, 0, 0
        self._score = score or encoder.scores

    def scores(self, pairs):
        self.pairs += len(pairs)
        self.tokens += self.encoder.tokens(pairs)
        return self._score(pairs)

    def cut(self, texts, tokens):
        return self.encoder.cut(texts, tokens)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--timed", type=int, default=40, help="questions timed per setting (0: none)")
    parser.add_argument("--scores", default=str(Path(tempfile.gettempdir()) / "rerank_pair_scores.sqlite"))
    parser.add_argument(
        "--only", nargs="*", help="settings to measure (names above); the default is timed beside them"
    )
    parser.add_argument(
        "--no-default-recall",
        action="store_true",
        help="time the default, but take its recall as measured before (its order is unchanged)",
    )
    args = parser.parse_args()

    questions = read_hotpotqa_file(args.dataset).head(args.questions)
    cases = build_judgement_list(questions)
    encoder = CrossEncoder(RerankSpec().model)
    store = PairScoreStore(Path(args.scores))
    names = [n for n in SETTINGS if not args.only or n in args.only or not SETTINGS[n]]
    with tempfile.TemporaryDirectory() as root:
        manifest = build_embedded_index(flatten_passages(questions), Path(root))
        first_stage = open_embedded_index(manifest, lambda _: None).for_mode(RerankSpec().first_stage)
        figures = {name: {"recall": float("nan"), "seconds": []} for name in names}
        for name in names:
            if not SETTINGS[name] and args.no_default_recall:
                continue
            kept = KeptPairScores(encoder.scores, encoder.identity, store)
            index = RerankedIndex(first_stage, Reading(encoder, kept.scores), RerankSpec(**SETTINGS[name]))  # type: ignore[arg-type]
            both = 0
            for start in range(0, len(cases), 25):
                chunk = cases.iloc[start : start + 25]
                for hits, gold in zip(index.search_many(chunk["question"].tolist(), K), chunk["gold_titles"]):
                    both += set(gold) <= {h.title for h in hits}
            figures[name]["recall"] = both / len(cases)
            print(f"{name}: both-hops recall@4 {both / len(cases):.3f}", flush=True)
        timed = cases["question"].tolist()[: args.timed]
        readings = {name: Reading(encoder) for name in names}
        for question in timed:  # settings in turns, question by question: the same load for each
            for name in names:
                index = RerankedIndex(first_stage, readings[name], RerankSpec(**SETTINGS[name]))  # type: ignore[arg-type]
                started = time.perf_counter()
                index.search_many([question], K)
                figures[name]["seconds"].append(time.perf_counter() - started)
        for name in names:
            figures[name]["pairs"] = readings[name].pairs / max(len(timed), 1)
            figures[name]["tokens"] = readings[name].tokens / max(len(timed), 1)
    store.close()
    if not timed:
        return
    base = statistics.median(figures[names[0]]["seconds"])
    print(f"questions {len(cases)} (recall), {len(timed)} timed (pairs, tokens, time); {encoder.identity}")
    print(
        f"{'setting':36s} {'recall@4':>9s} {'pairs/q':>8s} {'tokens/q':>9s} {'p50 s/q':>8s} {'x before':>9s}"
    )
    for name in names:
        f = figures[name]
        p50 = statistics.median(f["seconds"])
        print(
            f"{name:36s} {f['recall']:9.3f} {f['pairs']:8.1f} {f['tokens']:9.0f} {p50:8.3f} {p50 / base:9.2f}"
        )


if __name__ == "__main__":
    main()
