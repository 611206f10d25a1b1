"""Benchmark: what the reranker reads and what it costs, by its cuts, on HotpotQA.

For each setting (the default, then cheaper ones): both-hops recall@4 on every question, pairs
and tokens the cross-encoder reads a question (what its time grows with, whatever the load),
and seconds a question on the first ``--timed`` questions, each setting timed in turns with the
default in the same run (ratios, since the machine is shared). Recall is computed from scores
kept by content in ``--scores`` (a pair's score does not depend on what else is scored), so a
second run of this script scores only pairs it has not seen; timing never reads kept scores.
Settings that read a subset of the default's pairs (a smaller step-2 pool, fewer candidates) take
their recall from the default's kept scores, so they cost nothing once the default is kept;
``--kept-only`` scores nothing and gives each setting's recall beside the default's on the
questions whose pairs are all kept, with the questions it lost and won.

``--batching N``: on the first N questions, each question's pairs scored the way the reranker
does (one pair a call, pairs side by side on the cores) against one ONNX Runtime call a step
(padded to the longest pair, or in buckets of pairs of near length, intra-op threads on every
core), timed in turns; prints seconds and CPU seconds a question, the ratio to the per-pair
path, how far a batched score moves from the pair's own, and whether any top 4 changed.

    python benchmarks/rerank_speed.py [--questions 500] [--timed 40] [--scores FILE] [--kept-only]
        [--batching 10]
"""

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.knowledge_base import build_judgement_list, flatten_passages
from rag_eval_pipeline.retrieval.embedded import build_embedded_index, open_embedded_index
from rag_eval_pipeline.retrieval.pair_scores import KeptPairScores, PairScoreStore
from rag_eval_pipeline.retrieval.reranker import MAX_TOKENS, CrossEncoder, RerankedIndex, reranker_files
from rag_eval_pipeline.retrieval.spec import RerankSpec

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
K = 4
SETTINGS = {  # name -> the cuts (the rest as RerankSpec's defaults)
    "whole passages (before)": {},
    "passages 64, bridge 32, pool 8": {"passage_tokens": 64, "bridge_tokens": 32, "bridge_pool": 8},
    "passages 64, bridge whole, pool 8": {"passage_tokens": 64, "bridge_pool": 8},
    "passages 64, bridge 96, pool 8": {"passage_tokens": 64, "bridge_tokens": 96, "bridge_pool": 8},
    # the default's own pairs, fewer of them (recall from the default's kept scores)
    "whole, pool 14": {"bridge_pool": 14},
    "whole, pool 8": {"bridge_pool": 8},
    "whole, candidates 16": {"candidates": 16},
    "whole, candidates 14, pool 8": {"candidates": 14, "bridge_pool": 8},
    "whole, candidates 12, pool 8": {"candidates": 12, "bridge_pool": 8},
    "whole, candidates 8, pool 4": {"candidates": 8, "bridge_pool": 4},
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


class Batched:
    """A step's pairs in one ONNX Runtime call (or one call a bucket of ``bucket`` pairs of near
    length), padded to the longest, the session's intra-op threads on every core: the
    alternative to the reranker's one pair a call, measured here and not taken."""

    def __init__(self, model: str, bucket: int | None = None) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        model_file, tokenizer_file = reranker_files(model)
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(MAX_TOKENS, strategy="longest_first")
        self._tokenizer.enable_padding()  # to the longest of each call
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = os.cpu_count() or 1
        self._session = onnxruntime.InferenceSession(
            str(model_file), options, providers=["CPUExecutionProvider"]
        )
        self._bucket = bucket

    def scores(self, pairs) -> list[float]:
        if not pairs:
            return []
        lengths = [len(e.ids) for e in self._tokenizer.encode_batch([tuple(p) for p in pairs])]
        by_length = sorted(range(len(pairs)), key=lambda i: lengths[i])
        size = self._bucket or len(pairs)
        out = [0.0] * len(pairs)
        for start in range(0, len(pairs), size):
            chunk = by_length[start : start + size]
            encodings = self._tokenizer.encode_batch([tuple(pairs[i]) for i in chunk])
            feed = {
                "input_ids": np.asarray([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.asarray([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.asarray([e.type_ids for e in encodings], dtype=np.int64),
            }
            logits = np.asarray(self._session.run(None, feed)[0]).reshape(-1)
            for i, logit in zip(chunk, logits):
                out[i] = float(logit)
        return out


class Recorder:
    """The cross-encoder as the reranker calls it, keeping each call's pairs (a step's)."""

    def __init__(self, encoder: CrossEncoder) -> None:
        self.encoder, self.calls = encoder, []

    def scores(self, pairs):
        self.calls.append(list(pairs))
        return self.encoder.scores(pairs)

    def cut(self, texts, tokens):
        return self.encoder.cut(texts, tokens)


def compare_batching(encoder: CrossEncoder, first_stage, questions: list[str]) -> None:
    """Per-pair scoring (the reranker's) against one call a step, padded or bucketed, timed in
    turns on the same questions' pairs; how far scores move and whether a top 4 changes."""
    paths = {
        "one pair a call (the reranker's)": encoder.scores,
        "one call a step, padded": Batched(encoder.model).scores,
        "one call a bucket of 4, padded": Batched(encoder.model, bucket=4).scores,
    }
    steps, default = [], []  # each question's calls (a step's pairs each) and top 4
    for question in questions:
        recorder = Recorder(encoder)
        hits = RerankedIndex(first_stage, recorder, RerankSpec()).search(question, K)  # type: ignore[arg-type]
        steps.append(recorder.calls)
        default.append([h.passage_id for h in hits])
    walls = {name: [] for name in paths}
    cpus = {name: [] for name in paths}
    moved = {name: 0.0 for name in paths}
    for calls in steps:  # paths in turns, question by question
        reference = None  # the first path's: the reranker's own scores
        for name, score in paths.items():
            wall, cpu = time.perf_counter(), time.process_time()
            got = [score(pairs) for pairs in calls]
            walls[name].append(time.perf_counter() - wall)
            cpus[name].append(time.process_time() - cpu)
            reference = reference or got
            for mine, theirs in zip(got, reference):
                moved[name] = max(moved[name], max(abs(a - b) for a, b in zip(mine, theirs)))
    changed = {next(iter(paths)): 0}  # the reranker's own path is the reference
    for name, score in list(paths.items())[1:]:
        batched = RerankedIndex(first_stage, Reading(encoder, score), RerankSpec())  # type: ignore[arg-type]
        tops = [[h.passage_id for h in batched.search(q, K)] for q in questions]
        changed[name] = sum(top != d for top, d in zip(tops, default))
    pairs = statistics.mean(sum(len(c) for c in calls) for calls in steps)
    base_wall, base_cpu = (statistics.median(f[next(iter(paths))]) for f in (walls, cpus))
    print(f"batching: {len(questions)} questions, {pairs:.1f} pairs a question, {os.cpu_count()} cores")
    head = f"{'p50 s/q':>8s} {'x':>6s} {'cpu s/q':>8s} {'x':>6s} {'max |d|':>8s} {'top 4 changed':>14s}"
    print(f"{'path':34s} {head}")
    for name in paths:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(
            f"{name:34s} {wall:8.3f} {wall / base_wall:6.2f} {cpu:8.3f} {cpu / base_cpu:6.2f} "
            f"{moved[name]:8.3f} {changed[name]:>9d} of {len(questions)}"
        )


class NotKept(Exception):
    """A pair the kept scores do not hold (``--kept-only`` scores nothing)."""


def _refuse(pairs):
    raise NotKept(len(pairs))


def recall_from_kept(encoder: CrossEncoder, store: PairScoreStore, first_stage, cases, names) -> None:
    """Each setting's both-hops recall@4 on the questions whose pairs the store holds for every
    setting, beside the default's on the same questions, with the questions each lost and won."""
    found: dict[str, dict[str, bool]] = {}
    read: dict[str, list[tuple[int, int]]] = {}  # pairs and tokens of each question it reranked
    for name in names:
        kept = KeptPairScores(_refuse, encoder.identity, store)
        found[name], read[name] = {}, []
        for question, gold in zip(cases["question"], cases["gold_titles"]):
            reading = Reading(encoder, kept.scores)
            index = RerankedIndex(first_stage, reading, RerankSpec(**SETTINGS[name]))  # type: ignore[arg-type]
            try:
                hits = index.search(question, K)
            except NotKept:
                continue
            found[name][question] = set(gold) <= {h.title for h in hits}
            read[name].append((reading.pairs, reading.tokens))
    common = set.intersection(*(set(f) for f in found.values()))
    base = found[names[0]]
    print(f"recall from kept scores on the {len(common)} questions every setting's pairs are kept for")
    for name in names:
        ours = found[name]
        lost = sum(base[q] and not ours[q] for q in common)
        won = sum(ours[q] and not base[q] for q in common)
        recall = sum(ours[q] for q in common) / max(len(common), 1)
        alone = sum(ours.values()) / max(len(ours), 1)
        pairs, tokens = (statistics.mean(r[i] for r in read[name]) if read[name] else 0 for i in (0, 1))
        print(
            f"{name:36s} recall@4 {recall:.3f}  lost {lost}  won {won}  (alone on its {len(ours)}: "
            f"{alone:.3f}; {pairs:.1f} pairs, {tokens:.0f} tokens a question)",
            flush=True,
        )


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
    parser.add_argument(
        "--kept-only",
        action="store_true",
        help="recall of each setting on the questions whose pairs are all kept, scoring nothing",
    )
    parser.add_argument("--batching", type=int, default=0, help="questions to compare batched scoring on")
    args = parser.parse_args()

    questions = read_hotpotqa_file(args.dataset).head(args.questions)
    cases = build_judgement_list(questions)
    encoder = CrossEncoder(RerankSpec().model)
    store = PairScoreStore(Path(args.scores))
    names = [n for n in SETTINGS if not args.only or n in args.only or not SETTINGS[n]]
    with tempfile.TemporaryDirectory() as root:
        manifest = build_embedded_index(flatten_passages(questions), Path(root))
        first_stage = open_embedded_index(manifest, lambda _: None).for_mode(RerankSpec().first_stage)
        if args.batching:
            compare_batching(encoder, first_stage, cases["question"].tolist()[: args.batching])
        figures = {name: {"recall": float("nan"), "seconds": []} for name in names}
        if args.kept_only:
            recall_from_kept(encoder, store, first_stage, cases, names)
        for name in names:
            if args.kept_only or (not SETTINGS[name] and args.no_default_recall):
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
