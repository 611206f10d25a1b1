"""The real `anthropic` SDK against the tests' own Messages-API server on 127.0.0.1."""

import asyncio

import numpy as np
import pandas as pd
import pytest

from rag_eval_pipeline.answering.answer_cases import answer_cases
from rag_eval_pipeline.answering.chat import ANSWER_PROMPT_VERSION, ChatAnswerer
from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.judges.engine import JudgeEndpoint
from rag_eval_pipeline.judges.registry import JudgeRegistry
from rag_eval_pipeline.judges.score_cases import join_cases, score_cases
from rag_eval_pipeline.judges.strict import StrictLLMJudge
from rag_eval_pipeline.llm.anthropic_client import AnthropicClient
from rag_eval_pipeline.llm.cache import CachedClient, ResponseCache
from rag_eval_pipeline.llm.client import LLMCallError
from rag_eval_pipeline.llm.pricing import DEFAULT_PRICES
from rag_eval_pipeline.metrics.summary import summarize
from rag_eval_pipeline.retrieval.base import SearchHit
from stand_ins.anthropic_api import (
    FakeAnthropic,
    Reply,
    SimulatedModel,
    error_reply,
    text_reply,
    tool_reply,
)

HAIKU_K2 = AnswerRegistry().resolve("claude-haiku-4-5@bm25-k2")
HITS = [
    SearchHit("p1", "Shirley Temple", "Shirley Temple served as Chief of Protocol.", 2.0),
    SearchHit("p2", "Kiss and Tell (1945 film)", "Kiss and Tell starred Shirley Temple.", 1.0),
]


def _cases(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "qid": [f"q{i}" for i in range(n)],
            "question": [f"Question number {i}?" for i in range(n)],
            "answer": ["Shirley Temple"] * n,
            "type": ["bridge"] * n,
            "level": ["hard"] * n,
            "gold_titles": [["Shirley Temple"]] * n,
            "gold_facts": [[{"title": "Shirley Temple", "sent_id": 0}]] * n,
        }
    )


def _client(server, tmp_path=None, max_retries=2):
    cache = ResponseCache(tmp_path / "cache") if tmp_path is not None else None
    return CachedClient(AnthropicClient("test-key", server.url, timeout_s=10, max_retries=max_retries), cache)


def _answer(server, cases, concurrency=8, tmp_path=None, max_retries=2):
    client = _client(server, tmp_path, max_retries)
    answers = answer_cases(
        cases,
        HAIKU_K2,
        ChatAnswerer("claude-haiku-4-5", "claude-haiku-4-5", client, DEFAULT_PRICES),
        retrieve=lambda queries, k, languages=None: [HITS[:k] for _ in queries],
        concurrency=concurrency,
    )
    return answers, client


def test_answers_through_the_sdk_with_the_versioned_prompt():
    with FakeAnthropic() as server:
        answers, client = _answer(server, _cases(3))
    assert answers["answer"].tolist() == ["Shirley Temple"] * 3  # the top passage's title
    assert (answers["prompt_version"] == ANSWER_PROMPT_VERSION).all()
    assert (answers["model_id"] == "claude-haiku-4-5").all()
    request = server.requests[0]
    assert request["temperature"] == 0.0 and request["model"] == "claude-haiku-4-5"
    assert "ONLY the numbered passages" in request["system"][0]["text"]
    assert "[1] Shirley Temple\nShirley Temple served" in request["messages"][0]["content"]
    assert client.api_calls == 3


def test_requests_overlap_up_to_the_concurrency_bound():
    """Counted by the server: 4 requests in flight at once, never more (the speed-up itself is
    measured in benchmarks/claude_throughput.py)."""
    with FakeAnthropic(latency_s=0.3) as server:
        answers, _ = _answer(server, _cases(20), concurrency=4)
    assert (answers["status"] == "ok").all()
    assert server.max_in_flight == 4 and len(server.replies) == 20


def test_429_and_529_wait_for_retry_after_then_succeed():
    with FakeAnthropic() as server:
        server.queue(
            error_reply(429, "rate_limit_error", retry_after=1),
            error_reply(529, "overloaded_error", retry_after=1),
        )
        answers, _ = _answer(server, _cases(1))
    assert answers["status"].tolist() == ["ok"]
    assert server.replies == [429, 529, 200]  # retried through both, then answered


def test_server_errors_back_off_then_the_case_fails_with_its_error():
    with FakeAnthropic() as server:
        server.queue(*[error_reply(500, "api_error")] * 3)
        answers, _ = _answer(server, _cases(2), max_retries=2, concurrency=1)
    assert server.replies == [500, 500, 500, 200]  # one try and two retries, as configured
    assert answers["status"].tolist() == ["failed", "ok"]
    row = answers.iloc[0]
    assert row["status"] == "failed" and pd.isna(row["answer"])
    assert "HTTP 500" in row["error"] and pd.isna(row["cost_usd"])


def test_a_second_run_sends_zero_requests_and_failed_cases_are_retried(tmp_path):
    with FakeAnthropic() as server:
        server.queue(*[error_reply(500, "api_error")] * 3)  # the first case fails for good
        first, _ = _answer(server, _cases(4), tmp_path=tmp_path, concurrency=1, max_retries=2)
        assert first["status"].tolist() == ["failed", "ok", "ok", "ok"]
        server.reset_counts()
        second, client = _answer(server, _cases(4), tmp_path=tmp_path)
        assert len(server.requests) == 1  # only the failed case is asked again
        assert second["status"].tolist() == ["ok"] * 4 and client.cache_hits == 3
        server.reset_counts()
        third, client = _answer(server, _cases(4), tmp_path=tmp_path)
    assert server.requests == [] and client.api_calls == 0
    assert third["answer"].tolist() == second["answer"].tolist()
    assert third["from_cache"].all()


def test_token_and_cost_sums():
    usage = {
        "input_tokens": 1000,
        "output_tokens": 100,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    with FakeAnthropic(responder=lambda request: text_reply(request, "Chief of Protocol", usage)) as server:
        answers, _ = _answer(server, _cases(5))
    assert answers["input_tokens"].sum() == 5000 and answers["output_tokens"].sum() == 500
    # Haiku 4.5: $1 / MTok input, $5 / MTok output -> 5 * (1000 * 1 + 100 * 5) / 1e6
    assert answers["cost_usd"].sum() == pytest.approx(5 * 1500 / 1e6)


def _candidates(cases: pd.DataFrame, answers_text: str = "Shirley Temple") -> pd.DataFrame:
    """Answered cases (every one retrieving HITS) for the judges to score."""
    n = len(cases)
    return pd.DataFrame(
        {
            "qid": cases["qid"],
            "question": cases["question"],
            "answer_config": "claude-haiku-4-5@bm25-k2",
            "answer": answers_text,
            "retrieved_ids": [[h.passage_id for h in HITS]] * n,
            "retrieved_titles": [[h.title for h in HITS]] * n,
            "retrieved_scores": [[h.score for h in HITS]] * n,
            "retrieved_passages": [[h.passage for h in HITS]] * n,
            "status": "ok",
            "error": None,
        }
    )


def _judge(server, answers_text="Shirley Temple", n=1, tmp_path=None):
    cases = _cases(n)
    candidates = _candidates(cases, answers_text)
    judge = StrictLLMJudge(
        "claude-sonnet-4-6", JudgeEndpoint("claude-sonnet-4-6", _client(server, tmp_path), DEFAULT_PRICES)
    )
    return score_cases(join_cases(candidates, cases), [judge])


GOOD = {
    "correctness": 1.0,
    "correctness_rationale": "Same person.",
    "faithfulness": 1.0,
    "faithfulness_rationale": "Stated in passage 1.",
    "context_relevance": 0.5,
    "context_relevance_rationale": "One hop only.",
}


def test_strict_judge_uses_a_forced_tool_and_a_cached_rubric():
    with FakeAnthropic() as server:
        scores = _judge(server, n=2)
    request = server.requests[0]
    assert request["tool_choice"] == {"type": "tool", "name": "record_scores"}
    assert request["tools"][0]["input_schema"]["properties"]["correctness"]["enum"] == [0.0, 0.5, 1.0]
    assert request["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "STRICT" in request["system"][0]["text"]
    assert scores["correctness"].tolist() == [1.0, 1.0]  # simulated judge: answer == ground truth
    assert (scores["judge_id"] == "claude-sonnet-4-6").all() and (
        scores["prompt_version"] == "strict-v1"
    ).all()
    assert scores["cache_write_tokens"].iloc[0] + scores["cache_read_tokens"].iloc[0] > 0


def test_invalid_judge_output_is_reasked_once():
    bad = {**GOOD, "correctness": 0.7}
    with FakeAnthropic() as server:
        server.queue(lambda r: tool_reply(r, bad), lambda r: tool_reply(r, GOOD))
        scores = _judge(server)
    assert len(server.requests) == 2
    follow_up = server.requests[1]["messages"]
    assert follow_up[1]["role"] == "assistant" and follow_up[2]["content"][0]["type"] == "tool_result"
    assert (
        "0.7" in follow_up[2]["content"][0]["content"]
        or "not one of" in follow_up[2]["content"][0]["content"]
    )
    assert scores["status"].tolist() == ["ok"] and scores["context_relevance"].item() == 0.5
    assert '"context_relevance": "One hop only."' in scores["rationales"].item()


def test_invalid_twice_is_a_counted_judge_error_not_a_zero():
    missing_key = {k: v for k, v in GOOD.items() if k != "faithfulness"}
    with FakeAnthropic() as server:
        server.queue(lambda r: text_reply(r, "I think it is correct."), lambda r: tool_reply(r, missing_key))
        scores = _judge(server)
    row = scores.iloc[0]
    assert row["status"] == "judge_error"
    assert "no tool call" in row["error"] and "faithfulness" in row["error"]
    assert pd.isna(row["correctness"]) and pd.isna(row["faithfulness"])
    declared = JudgeRegistry().declared_metrics(scores["judge_id"].unique())
    summary = summarize(scores, declared_metrics=declared)
    overall = summary[(summary["group"] == "all") & (summary["metric"] == "correctness")]
    assert overall["n_judge_errors"].item() == 1 and overall["n"].item() == 0


def test_judge_api_failure_is_a_judge_error():
    with FakeAnthropic() as server:
        server.queue(*[error_reply(400, "invalid_request_error")])
        scores = _judge(server)
    assert scores["status"].tolist() == ["judge_error"] and "HTTP 400" in scores["error"].item()
    assert server.replies == [400]  # a 400 is not retried


def test_client_raises_llm_call_error_on_connection_failure():
    client = AnthropicClient("k", "http://127.0.0.1:9", timeout_s=1, max_retries=0)
    from rag_eval_pipeline.llm.client import LLMRequest

    with pytest.raises(LLMCallError, match="Connection"):
        asyncio.run(client.complete(LLMRequest(model="m", messages=({"role": "user", "content": "x"},))))


def test_one_client_serves_successive_event_loops():
    """Each stage runs in its own asyncio.run; a client reused across them must not fail."""
    with FakeAnthropic() as server:
        client = _client(server)
        for _ in range(3):
            answers = answer_cases(
                _cases(4),
                HAIKU_K2,
                ChatAnswerer("claude-haiku-4-5", "claude-haiku-4-5", client, DEFAULT_PRICES),
                retrieve=lambda queries, k, languages=None: [HITS[:k] for _ in queries],
            )
            assert (answers["status"] == "ok").all()
    assert server.replies == [200] * 12


def test_ragas_answer_relevancy_with_an_embedder():
    from rag_eval_pipeline.judges.base import JudgeCase
    from rag_eval_pipeline.judges.ragas import RagasLLMJudge
    from rag_eval_pipeline_tests.retrieval.test_vector_index import HashingEmbedder

    embedder = HashingEmbedder()
    case = JudgeCase("Who served as Chief of Protocol?", "Shirley Temple", "Shirley Temple", tuple(HITS))
    with FakeAnthropic() as server:
        judge = RagasLLMJudge(
            "ragas:claude-sonnet-4-6",
            JudgeEndpoint("claude-sonnet-4-6", _client(server), DEFAULT_PRICES),
            embedder.encode,
        )
        outcome = asyncio.run(judge.judge(case))
        abstaining = asyncio.run(
            judge.judge(JudgeCase(case.question, case.ground_truth, "unknown", tuple(HITS)))
        )
    # the simulated model asks "What is Shirley Temple?" / "Which is Shirley Temple?"
    vectors = embedder.encode([case.question, "What is Shirley Temple?", "Which is Shirley Temple?"])
    expected = float(np.mean(vectors[1:] @ vectors[0]))
    assert outcome.scores["answer_relevancy"] == pytest.approx(expected)
    assert outcome.scores["faithfulness"] == 1.0 and outcome.scores["context_precision"] == 1.0
    assert abstaining.scores["answer_relevancy"] == 0.0  # noncommittal
    assert abstaining.scores["faithfulness"] is None and "abstains" in abstaining.notes[0]


def test_message_batches_fill_the_cache_at_half_price_and_resume(tmp_path):
    import anthropic

    from rag_eval_pipeline.answering.base import AnswerRequest
    from rag_eval_pipeline.llm.batches import BatchPrefetcher

    usage = {"input_tokens": 1000, "output_tokens": 100}
    with FakeAnthropic(responder=lambda request: text_reply(request, "Chief of Protocol", usage)) as server:
        sdk = anthropic.Anthropic(api_key="k", base_url=server.url, max_retries=0)
        cache = ResponseCache(tmp_path / "cache")
        answerer = ChatAnswerer(
            "claude-haiku-4-5", "claude-haiku-4-5", _client(server, tmp_path), DEFAULT_PRICES
        )
        cases = _cases(5)
        requests = [
            answerer.llm_request(AnswerRequest(q, text, tuple(HITS[:2]), "x"))
            for q, text in zip(cases.qid, cases.question)
        ]
        server.batch_errored_ids = {requests[4].cache_key()}  # one entry fails inside the batch
        prefetcher = BatchPrefetcher(sdk, cache, tmp_path / "batches", poll_interval_s=0.01)
        report = prefetcher.prefill(requests)
        assert (report.submitted, report.succeeded, report.failed, report.resumed) == (5, 4, 1, False)
        assert len(server.batches) == 1 and server.requests == []  # one batch, no single calls
        body = next(iter(server.batches.values()))["entries"][0][1]
        assert body["temperature"] == 0.0 and body["model"] == "claude-haiku-4-5"
        answers, client = _answer(server, cases, tmp_path=tmp_path)
    assert len(server.requests) == 1  # only the errored entry goes through the normal API
    assert client.cache_hits == 4 and (answers["status"] == "ok").all()
    batch_cost = answers.loc[answers["from_cache"], "cost_usd"]
    assert batch_cost.tolist() == pytest.approx([0.5 * 1500 / 1e6] * 4)  # half price
    assert answers.loc[~answers["from_cache"], "cost_usd"].item() == pytest.approx(1500 / 1e6)


def test_an_interrupted_batch_is_resumed_not_paid_twice(tmp_path):
    import anthropic

    from rag_eval_pipeline.llm.batches import BatchPrefetcher
    from rag_eval_pipeline.llm.client import LLMRequest

    requests = [
        LLMRequest(model="claude-haiku-4-5", messages=({"role": "user", "content": f"q{i}"},))
        for i in range(3)
    ]
    with FakeAnthropic() as server:
        server.batch_polls_until_ended = 10**6  # never ends: the first run gives up
        sdk = anthropic.Anthropic(api_key="k", base_url=server.url, max_retries=0)
        first = BatchPrefetcher(
            sdk, ResponseCache(tmp_path / "c"), tmp_path / "b", poll_interval_s=0.01, timeout_s=0.05
        )
        with pytest.raises(TimeoutError, match="re-run to resume"):
            first.prefill(requests)
        assert len(server.batches) == 1
        server.batch_polls_until_ended = 0
        again = BatchPrefetcher(sdk, ResponseCache(tmp_path / "c"), tmp_path / "b", poll_interval_s=0.01)
        report = again.prefill(requests)
    assert report.resumed and report.succeeded == 3
    assert len(server.batches) == 1  # the same batch, polled again, not a second one
    assert list((tmp_path / "b").iterdir()) == []  # the resume note is removed when done


def test_invalid_judge_output_is_not_cached_so_a_rerun_repeats_it(tmp_path):
    """Malformed output twice is a judge error; it never enters the cache, so a re-run against a
    healthy API asks that case again (and only that case) and scores it."""
    healthy = SimulatedModel()

    def broken_on_the_first_case(request):
        if "Question number 0?" in str(request["messages"][0]["content"]):
            return text_reply(request, "no tool call")
        return healthy(request)

    with FakeAnthropic(responder=broken_on_the_first_case) as server:
        first = _judge(server, n=3, tmp_path=tmp_path)
        assert first["status"].tolist() == ["judge_error", "ok", "ok"]
        server.responder = healthy
        server.reset_counts()
        second = _judge(server, n=3, tmp_path=tmp_path)
        assert second["status"].tolist() == ["ok"] * 3
        assert len(server.requests) == 1  # the two valid verdicts came from the cache
        server.reset_counts()
        third = _judge(server, n=3, tmp_path=tmp_path)
    assert server.requests == [] and third["status"].tolist() == ["ok"] * 3


def test_a_truncated_answer_is_not_cached_and_refresh_asks_again(tmp_path):
    cut = {"stop_reason": "max_tokens"}
    with FakeAnthropic() as server:
        server.queue(lambda r: Reply(200, {**text_reply(r, "Shirley Tem").body, **cut}))
        _answer(server, _cases(1), tmp_path=tmp_path)
        server.reset_counts()
        _answer(server, _cases(1), tmp_path=tmp_path)
        assert len(server.requests) == 1  # the cut-off answer was not kept
        server.reset_counts()
        refreshed = CachedClient(
            AnthropicClient("test-key", server.url, timeout_s=10, max_retries=0),
            ResponseCache(tmp_path / "cache"),
            refresh=True,
        )
        answer_cases(
            _cases(1),
            HAIKU_K2,
            ChatAnswerer("claude-haiku-4-5", "claude-haiku-4-5", refreshed, DEFAULT_PRICES),
            retrieve=lambda queries, k, languages=None: [HITS[:k] for _ in queries],
        )
    assert len(server.requests) == 1 and refreshed.cache_hits == 0


def test_after_a_fatal_error_nothing_new_starts():
    """map_bounded: once one item raises, the items still waiting never start."""
    from rag_eval_pipeline.limits.in_flight import map_bounded

    started = []

    async def work(item):
        started.append(item)
        await asyncio.sleep(0)  # let the other workers in flight reach this point
        if item == 0:
            raise PermissionError("bad key")
        return item

    with pytest.raises(PermissionError, match="bad key"):
        asyncio.run(map_bounded(list(range(50)), work, concurrency=4))
    assert sorted(started) == [0, 1, 2, 3]


def test_stopping_a_notebook_cell_stops_the_calls_that_have_not_started():
    """run_bounded inside a running loop (a Jupyter cell) runs the calls on a worker thread; an
    interrupt of the waiting cell (here a signal to the main thread, as the stop button sends)
    cancels them there instead of waiting for all 200."""
    import signal
    import threading

    from rag_eval_pipeline.limits.in_flight import run_bounded

    class Stopped(Exception):
        pass

    def stop(signum, frame):
        raise Stopped

    started = []
    main_thread = threading.main_thread().ident

    async def work(item):
        started.append(item)
        if len(started) == 3:
            signal.pthread_kill(main_thread, signal.SIGUSR1)
        await asyncio.sleep(0.05)
        return item

    async def notebook_cell():
        return run_bounded(list(range(200)), work, concurrency=2)

    previous = signal.signal(signal.SIGUSR1, stop)
    try:
        with pytest.raises(Stopped):
            asyncio.run(notebook_cell())
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert 3 <= len(started) < 200


def test_a_multi_call_judge_is_bounded_by_calls_in_flight_not_cases():
    """RAGAS-style judgements (several dependent calls per case) with every case started at once:
    the client keeps exactly its bound of calls in flight, and every chain completes in order."""
    from rag_eval_pipeline.judges.ragas import RagasLLMJudge

    n = 6
    cases = _cases(n)
    candidates = _candidates(cases)
    with FakeAnthropic(latency_s=0.1) as server:
        client = CachedClient(
            AnthropicClient("k", server.url, timeout_s=10, max_retries=0), None, max_in_flight=3
        )
        endpoint = JudgeEndpoint("claude-sonnet-4-6", client, DEFAULT_PRICES)
        judge = RagasLLMJudge("ragas:claude-sonnet-4-6", endpoint)
        scores = score_cases(join_cases(candidates, cases), [judge], concurrency=None)
    assert (scores["status"] == "ok").all() and scores["faithfulness"].notna().all()
    assert server.max_in_flight == 3 and len(server.requests) >= 3 * n


def test_the_blind_strict_judge_never_shows_the_ground_truth_on_faithfulness():
    """strict-blind: correctness asked with the ground truth, faithfulness and context relevance
    in a second call without it; both calls' tokens are counted on the case."""
    from rag_eval_pipeline.judges.registry import JudgeRegistry
    from rag_eval_pipeline.llm.services import LLMServices

    cases = _cases(2)
    with FakeAnthropic() as server:
        registry = JudgeRegistry()
        spec = registry.resolve("strict-blind:claude-sonnet-4-6")
        judge = registry.build(spec, LLMServices(lambda endpoint: _client(server), DEFAULT_PRICES))
        scores = score_cases(join_cases(_candidates(cases), cases), [judge])
    tools = [r["tool_choice"]["name"] for r in server.requests]
    assert sorted(tools) == ["record_correctness"] * 2 + ["record_grounding"] * 2
    grounding = [r for r in server.requests if r["tool_choice"]["name"] == "record_grounding"]
    assert all("<ground_truth>" not in r["messages"][0]["content"] for r in grounding)
    assert all(
        "<ground_truth>Shirley Temple" in r["messages"][0]["content"]
        for r in server.requests
        if r not in grounding
    )
    assert (scores["status"] == "ok").all() and (scores["prompt_version"] == "strict-blind-v1").all()
    assert scores[["correctness", "faithfulness", "context_relevance"]].notna().all().all()
    assert (scores["input_tokens"] > 0).all() and spec.three_point_metrics == (
        "correctness",
        "faithfulness",
        "context_relevance",
    )
