"""The real `openai` SDK against the tests' own Chat Completions server: retries, fatal errors,
the three ways of structured output and their fallbacks, malformed and truncated judge output."""

import json

import pandas as pd
import pytest

from rag_eval_pipeline.answering.answer_cases import answer_cases
from rag_eval_pipeline.answering.chat import ChatAnswerer
from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.judges.engine import JudgeEndpoint
from rag_eval_pipeline.judges.registry import JudgeRegistry
from rag_eval_pipeline.judges.score_cases import join_cases, score_cases
from rag_eval_pipeline.judges.strict import StrictLLMJudge
from rag_eval_pipeline.llm.cache import CachedClient, ResponseCache
from rag_eval_pipeline.llm.client import FatalLLMError, LLMRequest
from rag_eval_pipeline.llm.openai_client import OpenAICompatibleClient, StructuredOutput, is_strict_schema
from rag_eval_pipeline.llm.pricing import ModelPrice
from rag_eval_pipeline.metrics.summary import summarize
from rag_eval_pipeline_tests.llm.test_anthropic_sdk import GOOD, HITS, _candidates, _cases
from stand_ins.openai_api import FakeOpenAI, completion, openai_error

GPT = AnswerRegistry().resolve("openai:gpt-4o-mini@bm25-k2")
PRICES = {"gpt-4o-mini": ModelPrice(0.15, 0.60, 0.0, 0.075)}


def _client(server, tmp_path=None, max_retries=2, mode=StructuredOutput.AUTO, key="sk-test"):
    cache = ResponseCache(tmp_path / "cache") if tmp_path is not None else None
    inner = OpenAICompatibleClient(
        key, server.url, timeout_s=10, max_retries=max_retries, structured_output=mode
    )
    return CachedClient(inner, cache)


def _answer(server, cases, client=None, concurrency=8):
    client = client or _client(server)
    answers = answer_cases(
        cases,
        GPT,
        ChatAnswerer(GPT.model, GPT.model_id, client, PRICES),
        retrieve=lambda queries, k, languages=None: [HITS[:k] for _ in queries],
        concurrency=concurrency,
    )
    return answers, client


def _judge(server, client=None, n=1, answer="Shirley Temple"):
    cases = _cases(n)
    judge = StrictLLMJudge("openai:gpt-4o", JudgeEndpoint("gpt-4o", client or _client(server), PRICES))
    return score_cases(join_cases(_candidates(cases, answer), cases), [judge])


def test_answers_through_the_sdk_with_tokens_and_dollars():
    with FakeOpenAI() as server:
        answers, client = _answer(server, _cases(3))
    assert answers["answer"].tolist() == ["Shirley Temple"] * 3  # the top passage's title
    request = server.requests[0]
    assert (
        request["model"] == "gpt-4o-mini" and request["temperature"] == 0.0 and request["max_tokens"] == 100
    )
    assert (
        request["messages"][0]["role"] == "system"
        and "ONLY the numbered passages" in request["messages"][0]["content"]
    )
    assert "[1] Shirley Temple" in request["messages"][1]["content"]
    assert server.authorizations[0] == "Bearer sk-test"
    assert (answers["input_tokens"] > 0).all() and (answers["output_tokens"] > 0).all()
    expected = answers["input_tokens"] * 0.15 / 1e6 + answers["output_tokens"] * 0.60 / 1e6
    assert answers["cost_usd"].tolist() == pytest.approx(expected.tolist())
    assert client.api_calls == 3


def test_429_waits_for_retry_after_and_500_backs_off_then_the_case_fails():
    with FakeOpenAI() as server:
        server.queue(openai_error(429, "slow down", retry_after=1))
        answers, _ = _answer(server, _cases(1))
        assert answers["status"].tolist() == ["ok"] and server.replies == [429, 200]
        server.replies.clear()
        server.queue(*[openai_error(500)] * 3)
        answers, _ = _answer(server, _cases(2), concurrency=1)
    assert server.replies == [500, 500, 500, 200]  # one try and two retries, then the next case
    assert answers["status"].tolist() == ["failed", "ok"] and "HTTP 500" in answers["error"].iloc[0]
    assert pd.isna(answers["answer"].iloc[0])  # a failure is recorded, never an answer


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_bad_key_or_unknown_model_fails_the_partition_at_once(status):
    with FakeOpenAI() as server:
        server.queue(openai_error(status, "invalid api key"))
        with pytest.raises(FatalLLMError, match=f"HTTP {status}"):
            _answer(server, _cases(3), concurrency=1)
    assert server.replies == [status]  # not retried, and no other case repeats the futile call


def test_strict_judge_sends_a_strict_json_schema():
    with FakeOpenAI() as server:
        scores = _judge(server, n=2)
    request = server.requests[0]
    schema = request["response_format"]["json_schema"]
    assert schema["name"] == "record_scores" and schema["strict"] is True
    assert schema["schema"]["properties"]["correctness"]["enum"] == [0.0, 0.5, 1.0]
    assert "tools" not in request
    assert scores["status"].tolist() == ["ok", "ok"] and scores["correctness"].tolist() == [1.0, 1.0]


def test_servers_without_json_schema_get_tools_then_text_and_the_client_remembers():
    with FakeOpenAI() as server:
        server.refuse = {"json_schema"}
        client = _client(server)
        scores = _judge(server, client, n=3)
        assert scores["status"].tolist() == ["ok"] * 3
        ways = [("response_format" in r, "tools" in r) for r in server.requests]
        # the cases in flight together may each meet the refusal once; every case then goes by tools
        assert ways.count((False, True)) == 3 and ways.count((True, False)) == server.replies.count(400) >= 1
        server.requests.clear()
        _judge(server, client, n=1)
        assert [("tools" in r) for r in server.requests] == [True]  # the client remembers
        assert client._inner.structured_output is StructuredOutput.TOOLS
        server.requests.clear()
        server.refuse = {"json_schema", "tools"}
        text_scores = _judge(server, _client(server), n=1, answer="Someone else")
    assert [("response_format" in r, "tools" in r) for r in server.requests] == [
        (True, False),
        (False, True),
        (False, False),
    ]
    assert "matching this JSON schema" in server.requests[-1]["messages"][0]["content"]
    assert text_scores["status"].tolist() == ["ok"] and text_scores["correctness"].item() == 0.0


def test_malformed_json_is_reasked_once_then_a_counted_judge_error():
    with FakeOpenAI() as server:
        server.queue(lambda r: completion(r["model"], "The answer looks right to me."))  # no JSON
        recovered = _judge(server)
        assert recovered["status"].tolist() == ["ok"] and len(server.requests) == 2
        follow_up = server.requests[1]["messages"]
        assert follow_up[-2] == {"role": "assistant", "content": "The answer looks right to me."}
        assert "invalid" in follow_up[-1]["content"]
        bad = json.dumps({**GOOD, "correctness": 0.7})
        server.queue(lambda r: completion(r["model"], "{not json"), lambda r: completion(r["model"], bad))
        failed = _judge(server)
    row = failed.iloc[0]
    assert row["status"] == "judge_error" and "invalid twice" in row["error"] and pd.isna(row["correctness"])
    declared = JudgeRegistry().declared_metrics(failed["judge_id"].unique())
    overall = summarize(failed, declared_metrics=declared)
    overall = overall[(overall["group"] == "all") & (overall["metric"] == "correctness")]
    assert overall["n_judge_errors"].item() == 1 and overall["n"].item() == 0  # counted, not scored 0


def test_output_cut_at_max_tokens_is_reasked_and_never_cached(tmp_path):
    cut = json.dumps(GOOD)[:40]
    with FakeOpenAI() as server:
        server.queue(lambda r: completion(r["model"], cut, finish_reason="length"))
        first = _judge(server, _client(server, tmp_path))
        assert first["status"].tolist() == ["ok"] and len(server.requests) == 2
        server.requests.clear()
        again_client = _client(server, tmp_path)
        again = _judge(server, again_client)
    # the cut reply was not kept: the first question is asked again, then answered in full
    assert again["status"].tolist() == ["ok"] and again_client.api_calls == 1
    assert again["correctness"].tolist() == first["correctness"].tolist()


def test_a_second_run_makes_no_calls_and_the_endpoint_is_part_of_the_key(tmp_path):
    with FakeOpenAI() as server:
        _answer(server, _cases(3), _client(server, tmp_path))
        server.requests.clear()
        answers, client = _answer(server, _cases(3), _client(server, tmp_path))
        assert server.requests == [] and client.api_calls == 0 and answers["from_cache"].all()
    request = LLMRequest(model="m", messages=({"role": "user", "content": "x"},))
    keys = {
        OpenAICompatibleClient(None, url).cache_key(request)
        for url in ("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1")
    }
    assert len(keys) == 2 and request.cache_key() not in keys  # nor an Anthropic call's key


def test_strict_mode_only_for_closed_schemas():
    closed = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert is_strict_schema(closed)
    assert not is_strict_schema({**closed, "required": []})
    assert not is_strict_schema({k: v for k, v in closed.items() if k != "additionalProperties"})


def test_every_llm_judge_kind_runs_on_an_openai_compatible_endpoint():
    """STRICT, RAGAS-style and a rubric metric, resolved by name through the registry and built
    on the endpoint's client, as the judge_scores asset builds them."""
    from rag_eval_pipeline.config import RubricMetricSettings
    from rag_eval_pipeline.llm.services import LLMServices

    registry = JudgeRegistry(
        [RubricMetricSettings(name="tone", instructions="Plain?", model="openai:gpt-4o-mini")]
    )
    cases = _cases(2)
    with FakeOpenAI() as server:
        services = LLMServices(lambda endpoint: _client(server), PRICES)
        specs = registry.for_run(["openai:gpt-4o", "ragas:openai:gpt-4o"])
        assert [(s.kind, s.provider, s.model_id) for s in specs] == [
            ("strict", "openai", "gpt-4o"),
            ("ragas", "openai", "gpt-4o"),
            ("rubric", "openai", "gpt-4o-mini"),
        ]
        judges = [registry.build(spec, services, embed=None) for spec in specs]
        scores = score_cases(join_cases(_candidates(cases), cases), judges)
    assert (scores["status"] == "ok").all(), scores["error"].dropna().tolist()
    by_judge = scores.set_index(["judge_id", "qid"])
    assert by_judge.loc[("openai:gpt-4o", "q0"), "correctness"] == 1.0
    assert by_judge.loc[("tone", "q0"), "tone"] == 1.0
    assert not pd.isna(by_judge.loc[("ragas:openai:gpt-4o", "q0"), "faithfulness"])
    assert {r["model"] for r in server.requests} == {"gpt-4o", "gpt-4o-mini"}
    assert all("response_format" in r for r in server.requests)  # every kind by JSON schema
