"""Benchmark: the answer and judge stages against a Messages-API server with 1.0 s latency.

35 cases, concurrency 16, the real anthropic SDK on 127.0.0.1. Prints the wall time of the
answer + judge stages beside the ideal (2 x ceil(35/16) x 1.0 s) and the reference article's
sequential loop (2 x 35 x 1.0 s), then re-runs with the response cache: zero requests.

    python benchmarks/claude_throughput.py [--cases 35] [--concurrency 16] [--latency 1.0]
"""

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

from rag_eval_pipeline.answering.answer_cases import answer_cases
from rag_eval_pipeline.answering.chat import ChatAnswerer
from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.knowledge_base import build_judgement_list, flatten_passages
from rag_eval_pipeline.judges.engine import JudgeEndpoint
from rag_eval_pipeline.judges.ragas import RagasLLMJudge
from rag_eval_pipeline.judges.score_cases import join_cases, score_cases
from rag_eval_pipeline.judges.strict import StrictLLMJudge
from rag_eval_pipeline.llm.anthropic_client import AnthropicClient
from rag_eval_pipeline.llm.cache import CachedClient, ResponseCache
from rag_eval_pipeline.llm.pricing import DEFAULT_PRICES
from rag_eval_pipeline.retrieval.bm25_index import Bm25Index

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from stand_ins.anthropic_api import FakeAnthropic  # noqa: E402

DEFAULT_DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"


def run_stages(server_url: str, cache_dir: Path, cases, index, concurrency: int):
    client = CachedClient(
        AnthropicClient("bench-key", server_url, timeout_s=30, max_retries=2), ResponseCache(cache_dir)
    )
    started = time.perf_counter()
    answers = answer_cases(
        cases,
        AnswerRegistry().resolve("claude-haiku-4-5@bm25-k4"),
        ChatAnswerer("claude-haiku-4-5", "claude-haiku-4-5", client, DEFAULT_PRICES),
        retrieve=lambda queries, k, languages=None: index.search_many(list(queries), k),
        concurrency=concurrency,
    )
    answered = time.perf_counter()
    judge = StrictLLMJudge("claude-sonnet-4-6", JudgeEndpoint("claude-sonnet-4-6", client, DEFAULT_PRICES))
    scores = score_cases(join_cases(answers, cases), [judge], concurrency=concurrency)
    judged = time.perf_counter()
    assert (answers["status"] == "ok").all() and (scores["status"] == "ok").all()
    return answered - started, judged - answered, client.api_calls, answers


def ragas_stage(server_url: str, cache_dir: Path, answers, cases, concurrency: int, per_call: bool):
    """The RAGAS-style judge (about 4 dependent calls per case) over the same answers: bounded
    per case (before) or per call in flight across all cases (after)."""
    client = CachedClient(
        AnthropicClient("bench-key", server_url, timeout_s=30, max_retries=2),
        ResponseCache(cache_dir),
        max_in_flight=concurrency if per_call else None,
    )
    endpoint = JudgeEndpoint("claude-sonnet-4-6", client, DEFAULT_PRICES)
    judge = RagasLLMJudge("ragas:claude-sonnet-4-6", endpoint)
    started = time.perf_counter()
    scores = score_cases(join_cases(answers, cases), [judge], concurrency=None if per_call else concurrency)
    assert (scores["status"] == "ok").all()
    return time.perf_counter() - started, client.api_calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET))
    parser.add_argument("--cases", type=int, default=35)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=1.0)
    args = parser.parse_args()

    questions = read_hotpotqa_file(args.dataset).head(args.cases)
    cases = build_judgement_list(questions)
    index = Bm25Index.build(flatten_passages(questions))
    ideal = 2 * math.ceil(args.cases / args.concurrency) * args.latency
    sequential = 2 * args.cases * args.latency
    with FakeAnthropic(latency_s=args.latency) as server, tempfile.TemporaryDirectory() as cache:
        answer_s, judge_s, calls, answers = run_stages(
            server.url, Path(cache), cases, index, args.concurrency
        )
        in_flight = server.max_in_flight
        server.reset_counts()
        started = time.perf_counter()
        _, _, rerun_calls, _ = run_stages(server.url, Path(cache), cases, index, args.concurrency)
        rerun_s = time.perf_counter() - started
        rerun_requests = len(server.requests)
        ragas = {}
        for per_call in (False, True):  # the baseline (cases bounded) first, in the same run
            with tempfile.TemporaryDirectory() as fresh:
                server.reset_counts()
                ragas[per_call] = (
                    *ragas_stage(server.url, Path(fresh), answers, cases, args.concurrency, per_call),
                    server.max_in_flight,
                )
    total = answer_s + judge_s
    print(f"cases {args.cases}, concurrency {args.concurrency}, server latency {args.latency:.1f} s")
    print(
        f"answer stage {answer_s:.2f} s, judge stage {judge_s:.2f} s, total {total:.2f} s "
        f"({calls} requests, at most {in_flight} in flight)"
    )
    print(f"ideal {ideal:.1f} s: ratio {total / ideal:.2f} (target <= 1.3)")
    print(f"sequential foreach {sequential:.0f} s: speed-up x{sequential / total:.1f}")
    print(f"re-run: {rerun_requests} requests ({rerun_calls} API calls), {rerun_s:.2f} s (target 0, < 5 s)")
    for per_call, (seconds, ragas_calls, most) in ragas.items():
        ideal_ragas = math.ceil(ragas_calls / args.concurrency) * args.latency
        bound = "calls in flight" if per_call else "cases in flight (before)"
        print(
            f"RAGAS-style judge, bounded by {bound}: {seconds:.2f} s for {ragas_calls} calls "
            f"({ragas_calls / args.cases:.1f} per case, at most {most} in flight); per-call ideal "
            f"{ideal_ragas:.1f} s: ratio {seconds / ideal_ragas:.2f}"
        )
    after_ratio = ragas[True][0] / (math.ceil(ragas[True][1] / args.concurrency) * args.latency)
    if total > 1.3 * ideal or rerun_requests or rerun_s >= 5 or after_ratio > 1.1:
        sys.exit("missed a target")


if __name__ == "__main__":
    main()
