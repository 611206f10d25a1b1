"""The regressed cases of a diff, built from columns: worst first, each dropped metric's two
scores, both answers and diagnoses, and what changed in the case's lineage ("" when nothing,
"unknown" when a side's answers are gone)."""

import pandas as pd

from rag_eval_pipeline.metrics.diff import Evaluation, regressed_cases


def _side(label, answers, prompt_version):
    scores = pd.DataFrame(
        {
            "qid": ["a", "b", "c"],
            "judge_id": "reference",
            "prompt_version": prompt_version,
            "diagnosis": [f"{label} a", None, f"{label} c"],
        }
    )
    return Evaluation(label, "m", f"run-{label}", scores, answers)


def _answers(qids, top_k):
    return pd.DataFrame(
        {
            "qid": qids,
            "question": [f"question {q}" for q in qids],
            "answer": [f"answer {q} {top_k}" for q in qids],
            "model_id": "m",
            "prompt_version": "p1",
            "retrieval_mode": "bm25",
            "top_k": top_k,
            "kb_version": "kb1",
        }
    )


def test_regressions_are_worst_first_with_their_lineage_changes():
    cases = pd.DataFrame(
        {
            "qid": ["a", "a", "b", "c", "c"],
            "judge_id": "reference",
            "metric": ["f1", "correctness", "correctness", "f1", "exact_match"],
            "before": [0.9, 1.0, 1.0, 0.5, 1.0],
            "after": [0.6, 0.0, 0.5, 0.5, 1.0],
        }
    )
    cases["change"] = cases["after"] - cases["before"]
    cases["harm"] = -cases["change"]
    before = _side("before", _answers(["a", "b", "c"], 6), "j1")
    after = _side("after", _answers(["a", "c"], 2), "j2")  # b's answer is no longer kept
    table = regressed_cases(cases, before, after)
    assert table["qid"].tolist() == ["a", "b"]  # c dropped nothing
    worst = table.iloc[0]
    assert worst["dropped"] == "correctness 1.000 → 0.000; f1 0.900 → 0.600"
    assert worst["worst_drop"] == 1.0 and worst["metrics_dropped"] == 2
    assert worst["question"] == "question a"
    assert (worst["answer_before"], worst["answer_after"]) == ("answer a 6", "answer a 2")
    assert (worst["diagnosis_before"], worst["diagnosis_after"]) == ("before a", "after a")
    assert worst["lineage_change"] == "top_k 6 → 2; judge_prompt j1 → j2"
    gone = table.iloc[1]
    assert gone["lineage_change"] == "unknown" and pd.isna(gone["answer_after"])
    assert gone["question"] == "question b" and pd.isna(gone["diagnosis_before"])  # the before side's words
    same = regressed_cases(cases, before, _side("again", _answers(["a", "b", "c"], 6), "j1"))
    assert set(same["lineage_change"]) == {""}
