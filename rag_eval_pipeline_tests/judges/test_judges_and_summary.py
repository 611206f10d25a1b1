import math

import pandas as pd
import pytest

from rag_eval_pipeline.judges.reference import REFERENCE_METRICS, ReferenceJudge
from rag_eval_pipeline.judges.registry import JudgeRegistry
from rag_eval_pipeline.judges.score_cases import judge_case, score_cases
from rag_eval_pipeline.metrics.summary import compare_models, summarize
from rag_eval_pipeline.reporting.markdown import to_markdown


def _case(qid, answer, titles, status="ok", type_="bridge"):
    return {
        "qid": qid,
        "question": "Who was Chief of Protocol?",
        "answer_config": "m@bm25-k4",
        "answer": answer,
        "ground_truth": "Chief of Protocol",
        "retrieved_ids": [f"id-{t}" for t in titles],
        "retrieved_scores": [1.0] * len(titles),
        "retrieved_titles": titles,
        "retrieved_passages": ["Temple was Chief of Protocol."] * len(titles),
        "gold_titles": ["A", "B"],
        "gold_facts": [{"title": "A", "sent_id": 0}, {"title": "B", "sent_id": 1}],
        "type": type_,
        "level": "hard",
        "status": status,
        "error": None if status == "ok" else "RateLimitError: 429",
    }


CASES = pd.DataFrame(
    [
        _case("q1", "Chief of Protocol", ["A", "B"]),
        _case("q2", "unknown", ["A", "x"], type_="comparison"),
        _case("q3", None, ["x"], status="failed"),
    ]
)


def test_reference_judge_scores_one_case():
    scores = ReferenceJudge().score(judge_case(CASES.iloc[0].to_dict()))
    assert scores == {
        "exact_match": 1.0,
        "f1": 1.0,
        "correctness": 1.0,
        "context_relevance": 1.0,
        "context_precision": 1.0,
        "context_recall": 1.0,
        "faithfulness_lexical": 1.0,
        "citation_precision": None,  # our answer models cite nothing: absent, not 0
        "citation_recall": None,
    }


def test_failed_answers_are_kept_unscored_not_zero():
    scores = score_cases(CASES, [ReferenceJudge()])
    assert scores["status"].tolist() == ["ok", "ok", "answer_failed"]
    failed = scores.iloc[2]
    assert all(math.isnan(failed[m]) for m in REFERENCE_METRICS)
    assert failed["error"] == "RateLimitError: 429"
    assert math.isnan(scores.iloc[1]["faithfulness_lexical"])  # abstention: absent


def test_summary_means_counts_and_groups():
    summary = summarize(score_cases(CASES, [ReferenceJudge()]))
    overall = summary[summary["group"] == "all"].set_index("metric")
    assert overall.loc["correctness", "mean"] == pytest.approx(0.5)  # (1 + 0) / 2 scored cases
    assert overall.loc["correctness", "n"] == 2
    assert overall.loc["correctness", "n_cases"] == 3
    assert overall.loc["correctness", "n_failed"] == 1
    assert overall.loc["faithfulness_lexical", "n"] == 1
    assert overall.loc["context_relevance", "mean"] == pytest.approx(0.75)
    bridge = summary[(summary["group"] == "type=bridge") & (summary["metric"] == "correctness")]
    assert bridge["mean"].item() == 1.0
    assert set(summary["group"]) == {
        "all",
        "type=bridge",
        "type=comparison",
        "level=hard",
        "language=en",  # every case's language, as a group of its own (one here)
        "usage",
        "diagnosis",
    }
    diagnoses = summary[summary["group"] == "diagnosis"].set_index("metric")["total"]
    assert diagnoses.to_dict() == {
        "ok": 1.0,
        "retrieval_miss": 1.0,
        "reasoning_error": 0.0,
        "hallucination": 0.0,
        "unsupported_words": 0.0,
        "parametric_answer": 0.0,
        "correct_from_non_gold": 0.0,
        "false_answer": 0.0,
        "over_abstention": 0.0,
    }
    # one answered, one abstained, one failed: a failure is not a decline. The answer rate is over
    # the cases that got a reply, the error rate over every case
    assert overall.loc["answer_rate", "mean"] == pytest.approx(1 / 2) and overall.loc["answer_rate", "n"] == 2
    assert overall.loc["error_rate", "mean"] == pytest.approx(1 / 3) and overall.loc["error_rate", "n"] == 3
    assert "false_answer_rate" not in overall.index  # no unanswerable question: absent, not 0
    cost = summary[(summary["group"] == "usage") & (summary["metric"] == "cost_usd")]
    assert cost["judge_id"].tolist() == ["reference"] and cost["total"].item() == 0.0


def test_metric_absent_everywhere_is_nan_with_n_zero():
    """A metric the judge declares (asked of the registry) but never produced keeps its row."""
    scores = score_cases(CASES.iloc[[1]], [ReferenceJudge()])
    summary = summarize(scores, declared_metrics=JudgeRegistry().declared_metrics(["reference"]))
    row = summary[(summary["group"] == "all") & (summary["metric"] == "faithfulness_lexical")]
    assert math.isnan(row["mean"].item()) and row["n"].item() == 0
    undeclared = summarize(scores)  # a judge nobody knows any more: only what it has values for
    assert "faithfulness_lexical" not in set(undeclared["metric"])


def test_compare_models_side_by_side_with_case_set():
    a = summarize(score_cases(CASES, [ReferenceJudge()]))
    b = summarize(score_cases(CASES.iloc[:2], [ReferenceJudge()]))
    comparison = compare_models({"model-b": b, "model-a": a})
    assert comparison["answer_model"].tolist() == ["model-a", "model-b"]
    assert comparison["n_cases"].tolist() == [3, 2]
    assert comparison["case_set"].iloc[0] != comparison["case_set"].iloc[1]
    assert "| model-a | reference | 3 | 1 |" in to_markdown(comparison)
