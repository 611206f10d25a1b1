import math

import pandas as pd
import pytest

from rag_eval_pipeline.metrics.diagnosis import diagnose
from rag_eval_pipeline.metrics.gates import check_gates, gate_table, parse_threshold


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
    assert diagnose(1.0, 1.0, 0.0, generative=False) == "correct_from_non_gold"
    assert diagnose(0.0, 1.0, 0.0, generative=False) == "retrieval_miss"
