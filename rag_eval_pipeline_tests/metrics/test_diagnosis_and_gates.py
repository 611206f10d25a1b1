import math

import pandas as pd
import pytest

from rag_eval_pipeline.metrics.diagnosis import AnswerSource, diagnose
from rag_eval_pipeline.metrics.gates import check_gates, gate_table
from rag_eval_pipeline.metrics.settings import parse_threshold


@pytest.mark.parametrize(
    ("correctness", "faithfulness", "relevance", "expected"),
    [
        (1.0, 1.0, 1.0, "ok"),
        (0.5, 1.0, 0.5, "ok"),
        (1.0, 0.0, 0.0, "parametric_answer"),  # correct from memory: the red flag
        (0.0, 0.0, 1.0, "hallucination"),
        (1.0, 0.0, 1.0, "hallucination"),  # right but not from the passages
        (0.0, 1.0, 0.5, "retrieval_miss"),
        (0.0, None, 0.0, "retrieval_miss"),  # "unknown" when retrieval missed
        (0.0, 1.0, 1.0, "reasoning_error"),
        (0.0, math.nan, 1.0, "reasoning_error"),
        (None, 1.0, 1.0, None),
        (math.nan, 1.0, 1.0, None),
    ],
)
def test_diagnosis_by_hand(correctness, faithfulness, relevance, expected):
    assert diagnose(correctness, faithfulness, relevance) == expected


SUMMARY = pd.DataFrame(
    [
        {"judge_id": "reference", "metric": "correctness", "group": "all", "mean": 0.8, "n": 10},
        {"judge_id": "claude-sonnet-4-6", "metric": "correctness", "group": "all", "mean": 0.5, "n": 10},
        {"judge_id": "claude-sonnet-4-6", "metric": "faithfulness", "group": "all", "mean": 0.75, "n": 10},
        {
            "judge_id": "reference",
            "metric": "faithfulness_lexical",
            "group": "all",
            "mean": float("nan"),
            "n": 0,
        },
        {"judge_id": "reference", "metric": "correctness", "group": "type=bridge", "mean": 0.1, "n": 5},
    ]
)


def test_gates():
    assert parse_threshold("faithfulness=0.7") == ("faithfulness", 0.7)
    with pytest.raises(ValueError):
        parse_threshold("faithfulness")
    with pytest.raises(ValueError):
        parse_threshold("faithfulness=high")
    results = check_gates(SUMMARY, {"faithfulness": 0.7, "correctness": 0.6})
    assert [(r.metric, r.judge_id, r.passed) for r in results] == [
        ("faithfulness", "claude-sonnet-4-6", True),
        ("correctness", "reference", True),
        ("correctness", "claude-sonnet-4-6", False),
    ]
    only = check_gates(SUMMARY, {"reference/correctness": 0.9})
    assert [(r.judge_id, r.passed) for r in only] == [("reference", False)]
    missing = check_gates(SUMMARY, {"faithfulness_lexical": 0.5, "answer_relevancy": 0.5})
    assert all(not r.passed and r.note == "not measured" for r in missing)
    assert "FAIL (not measured)" in gate_table(missing)["result"].tolist()


def test_gates_do_not_pass_on_too_few_cases():
    results = check_gates(SUMMARY, {"reference/correctness": 0.5}, min_cases=20)
    assert [(r.passed, r.note) for r in results] == [(False, "too few cases to conclude: n = 10 < 20")]
    assert check_gates(SUMMARY, {"reference/correctness": 0.5}, min_cases=10)[0].passed


def test_a_model_without_memory_is_never_said_to_answer_from_memory():
    from rag_eval_pipeline.metrics.diagnosis import diagnose

    assert diagnose(1.0, 1.0, 0.0) == "parametric_answer"
    assert diagnose(1.0, 1.0, 0.0, AnswerSource.EXTRACTIVE) == "correct_from_non_gold"
    assert diagnose(0.0, 1.0, 0.0, AnswerSource.EXTRACTIVE) == "retrieval_miss"
    assert diagnose(1.0, 1.0, 0.0, AnswerSource.REFERENCE) == "ok"  # the oracle knows the truth


SUMMARY_WITH_GROUPS = pd.DataFrame(
    [
        {
            "judge_id": "reference",
            "metric": "correctness",
            "group": "all",
            "mean": 0.32,
            "ci_low": 0.15,
            "ci_high": 0.53,
            "n": 25,
        },
        {
            "judge_id": "reference",
            "metric": "correctness",
            "group": "tag=unanswerable",
            "mean": 0.5,
            "ci_low": 0.2,
            "ci_high": 0.8,
            "n": 12,
        },
    ]
)


def test_a_release_gate_holds_the_lower_end_of_the_interval():
    """0.320 on 25 cases passes a 0.300 threshold on the mean, not on the interval's lower end."""
    from rag_eval_pipeline.metrics.gates import failed_gates_line
    from rag_eval_pipeline.metrics.settings import Bound, parse_gate

    assert check_gates(SUMMARY_WITH_GROUPS, [parse_gate("correctness", 0.3)])[0].passed
    lower = check_gates(SUMMARY_WITH_GROUPS, [parse_gate("correctness", 0.3, Bound.LOWER)])
    assert not lower[0].passed and lower[0].checked == 0.15
    assert failed_gates_line(lower) == "correctness (reference) lower bound 0.150 < threshold 0.3"


def test_a_gate_per_tag_is_a_group_not_a_judge():
    from rag_eval_pipeline.metrics.settings import parse_gate

    gate = parse_gate("tag:unanswerable/correctness", 1.0)
    assert (gate.group, gate.judge_id, gate.metric) == ("tag=unanswerable", None, "correctness")
    result = check_gates(SUMMARY_WITH_GROUPS, [gate])[0]
    assert result.mean == 0.5 and not result.passed and result.group == "tag=unanswerable"
    judged = parse_gate("type:bridge/claude-sonnet-4-6/faithfulness", 0.7)
    assert (judged.group, judged.judge_id, judged.metric) == (
        "type=bridge",
        "claude-sonnet-4-6",
        "faithfulness",
    )
    missing = check_gates(SUMMARY_WITH_GROUPS, [parse_gate("tag:nothing/correctness", 0.5)])[0]
    assert not missing.passed and missing.note == "not measured in tag=nothing"
    with pytest.raises(ValueError, match="expected"):
        parse_gate("a/b/c", 0.5)
