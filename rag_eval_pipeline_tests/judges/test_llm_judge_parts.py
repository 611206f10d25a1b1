"""The pure halves of the LLM judges: prompts, verdict parsing, RAGAS formulas."""

import numpy as np
import pytest

from rag_eval_pipeline.config import PythonMetricSettings, RubricMetricSettings
from rag_eval_pipeline.judges.base import JudgeCase
from rag_eval_pipeline.judges.engine import InvalidJudgeOutput
from rag_eval_pipeline.judges.ragas import answer_relevancy, rank_weighted_precision, share_supported
from rag_eval_pipeline.judges.registry import JudgeRegistry, UnknownJudgeError
from rag_eval_pipeline.judges.strict import STRICT_PROMPT_VERSION, parse_strict_verdict, render_strict_prompt
from rag_eval_pipeline.llm.client import LLMResponse, Usage
from rag_eval_pipeline.llm.pricing import DEFAULT_PRICES, cost_usd, price_for
from rag_eval_pipeline.metrics.reference import context_precision
from rag_eval_pipeline.retrieval.base import SearchHit

CASE = JudgeCase("Who?", "Shirley Temple", "Shirley Temple", (SearchHit("p", "T", "Text.", 1.0),))
VALID = {
    "correctness": 1,
    "correctness_rationale": "a",
    "faithfulness": 0.5,
    "faithfulness_rationale": "b",
    "context_relevance": 0,
    "context_relevance_rationale": "c",
}


def _response(tool_input):
    return LLMResponse(text="", tool_input=tool_input, usage=Usage(), model="m")


def test_strict_prompt_is_versioned_and_holds_the_case():
    request = render_strict_prompt("claude-sonnet-4-6", CASE)
    assert STRICT_PROMPT_VERSION == "strict-v1"
    assert "pick the lower one" in request.cached_system
    body = request.messages[0]["content"]
    assert "<ground_truth>Shirley Temple</ground_truth>" in body and "[1] T\nText." in body
    assert request.api_kwargs()["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert request.cache_key() == render_strict_prompt("claude-sonnet-4-6", CASE).cache_key()
    assert request.cache_key() != render_strict_prompt("claude-haiku-4-5", CASE).cache_key()


def test_parse_strict_verdict_accepts_only_the_three_point_scale():
    verdict = parse_strict_verdict(_response(VALID))
    assert (verdict.correctness, verdict.faithfulness, verdict.context_relevance) == (1.0, 0.5, 0.0)
    for broken, problem in [
        ({**VALID, "correctness": 0.7}, "not one of"),
        ({k: v for k, v in VALID.items() if k != "faithfulness"}, "faithfulness"),
        ({**VALID, "extra": 1}, "extra"),
        ({**VALID, "context_relevance_rationale": ""}, "context_relevance_rationale"),
    ]:
        with pytest.raises(InvalidJudgeOutput, match=problem):
            parse_strict_verdict(_response(broken))
    with pytest.raises(InvalidJudgeOutput, match="no tool call"):
        parse_strict_verdict(_response(None))


def test_rank_weighted_precision_matches_the_reference_definition():
    assert rank_weighted_precision([True, False, True, False]) == pytest.approx((1 + 2 / 3) / 2)
    assert rank_weighted_precision([False, False]) == 0.0
    assert rank_weighted_precision([]) is None
    titles, gold = ["A", "x", "B", "y"], ["A", "B"]
    assert rank_weighted_precision([t in gold for t in titles]) == context_precision(titles, gold)


def test_share_supported_and_answer_relevancy_by_hand():
    assert share_supported([1, 0, 1, 1]) == 0.75 and share_supported([]) is None
    question = np.array([1.0, 0.0])
    generated = np.array([[1.0, 0.0], [0.0, 2.0]])  # cosines 1 and 0
    assert answer_relevancy(question, generated, noncommittal=False) == pytest.approx(0.5)
    assert answer_relevancy(question, generated, noncommittal=True) == 0.0


def test_cost_from_the_price_table():
    usage = Usage(input_tokens=2_000, output_tokens=1_000, cache_write_tokens=4_000, cache_read_tokens=10_000)
    # Sonnet 4.6: 3, 15, 3.75, 0.30 $/MTok -> (6000 + 15000 + 15000 + 3000) / 1e6
    assert cost_usd("claude-sonnet-4-6", usage, DEFAULT_PRICES) == pytest.approx(0.039)
    assert price_for("claude-haiku-4-5-20251001", DEFAULT_PRICES) == DEFAULT_PRICES["claude-haiku-4-5"]
    assert cost_usd("some-unpriced-model", usage, DEFAULT_PRICES) is None


def test_judge_names_resolve_once_to_specs_that_declare_their_metrics():
    registry = JudgeRegistry(
        [
            PythonMetricSettings(name="short", callable="os.path:exists"),
            RubricMetricSettings(name="tone", instructions="Plain?"),
        ]
    )

    def kind_and_model(judge_id):
        spec = registry.resolve(judge_id)
        return spec.kind, spec.model_id

    assert kind_and_model("reference") == ("reference", None)
    assert kind_and_model("claude-sonnet-4-6") == ("strict", "claude-sonnet-4-6")
    assert kind_and_model("anthropic:claude-opus-4-5") == ("strict", "claude-opus-4-5")
    assert kind_and_model("ragas:claude-sonnet-4-6") == ("ragas", "claude-sonnet-4-6")
    assert kind_and_model("strict:anthropic:claude-x") == ("strict", "claude-x")
    assert kind_and_model("tone") == ("rubric", "claude-sonnet-4-6")
    with pytest.raises(UnknownJudgeError):
        registry.resolve("gpt-judge")
    declared = registry.declared_metrics(["reference", "ragas:m", "tone", "gone"])
    assert declared["ragas:m"] == ("faithfulness", "context_precision", "context_recall", "answer_relevancy")
    assert declared["tone"] == ("tone",) and "gone" not in declared
    scales = registry.three_point_metrics(["reference", "claude-sonnet-4-6", "ragas:m"])
    assert scales["claude-sonnet-4-6"] == ("correctness", "faithfulness", "context_relevance")
    assert scales["ragas:m"] == () and "faithfulness_lexical" not in scales["reference"]
    # the custom metrics of the file are scored in every run, after the named judges
    assert [s.judge_id for s in registry.for_run(["reference"])] == ["reference", "short", "tone"]


def test_cache_keys_of_existing_calls_do_not_change():
    """The response cache is addressed by the full request; these keys were computed by the code
    before the judges moved into judges/. A changed prompt must change its version, not slip in."""
    from rag_eval_pipeline.answering.chat import render_answer_prompt
    from rag_eval_pipeline.judges.custom import render_rubric_prompt
    from rag_eval_pipeline.judges.ragas import render_passage_usefulness

    hits = (
        SearchHit("p1", "Shirley Temple", "Shirley Temple served as Chief of Protocol.", 2.0),
        SearchHit("p2", "Kiss and Tell (1945 film)", "Kiss and Tell starred Shirley Temple.", 1.0),
    )
    question = "What government position was held by the woman who portrayed Corliss Archer?"
    case = JudgeCase(question, "Chief of Protocol", "Chief of Protocol", hits)
    keys = [
        render_answer_prompt("claude-haiku-4-5", question, hits).cache_key(),
        render_strict_prompt("claude-sonnet-4-6", case).cache_key(),
        render_passage_usefulness("claude-sonnet-4-6", question, case.ground_truth, hits).cache_key(),
        render_rubric_prompt("claude-sonnet-4-6", "tone", "Plain?", [0, 0.5, 1], case).cache_key(),
    ]
    assert keys == [
        "fd58097015ee3e6a3d34f2acad5a2db77f15d4b9286ef8d3e4bf6529ca5c35b5",
        "d640970c98c6cb351a49d9a28d49e0cb6a5e61aada0722a8e3b9d44d2fc6220d",
        "c551ccf30ea47a3cd116acfda04317f3eb623dc82ca058ce714f0c2674d0bd0f",
        "9452adae167033149c481a0c25f8e1578143627524e2e9d951487b947f26bca2",
    ]
