"""Stage 2: judges score each answered case. The reference judge uses HotpotQA's labels, no LLM."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import pandas as pd

from rag_eval_pipeline.metrics import reference

REFERENCE_JUDGE_ID = "reference"
REFERENCE_METRICS = (
    "exact_match",
    "f1",
    "correctness",
    "context_relevance",
    "context_precision",
    "context_recall",
    "faithfulness_lexical",
)
SCORE_ID_COLUMNS = ["qid", "judge_id", "answer_config", "type", "level", "status", "error"]


class Judge(Protocol):
    """Scores one case (a candidate answer joined with its judgement-list row)."""

    judge_id: str
    metrics: Sequence[str]

    def score(self, case: Mapping[str, Any]) -> dict[str, float | None]: ...


class ReferenceJudge:
    """Every reference metric from the ground truth and the gold supporting facts."""

    judge_id = REFERENCE_JUDGE_ID
    metrics = REFERENCE_METRICS

    def score(self, case: Mapping[str, Any]) -> dict[str, float | None]:
        answer, truth = case["answer"], case["ground_truth"]
        titles = list(case["retrieved_titles"])
        gold_titles = list(case["gold_titles"])
        gold_facts = [(f["title"], int(f["sent_id"])) for f in case["gold_facts"]]
        return {
            "exact_match": reference.exact_match(answer, truth),
            "f1": reference.f1(answer, truth),
            "correctness": reference.correctness(answer, truth),
            "context_relevance": reference.context_relevance(titles, gold_titles),
            "context_precision": reference.context_precision(titles, gold_titles),
            "context_recall": reference.context_recall(titles, gold_facts),
            "faithfulness_lexical": reference.faithfulness_lexical(answer, list(case["retrieved_passages"])),
        }


def join_cases(candidate_answers: pd.DataFrame, judgement_list: pd.DataFrame) -> pd.DataFrame:
    """Candidate answers with the ground truth, gold labels, type and level of their question."""
    labels = judgement_list[["qid", "answer", "type", "level", "gold_titles", "gold_facts"]].rename(
        columns={"answer": "ground_truth"}
    )
    return candidate_answers.merge(labels, on="qid", how="left", validate="one_to_one")


def score_cases(
    cases: pd.DataFrame,
    judges: Sequence[Judge],
    on_progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """A row per case per judge with every metric the judges know (absent metrics are NaN).

    A case whose answer failed is kept with status ``answer_failed`` and no scores, so it is
    counted as failed rather than scored 0.
    """
    metric_names = list(dict.fromkeys(m for judge in judges for m in judge.metrics))
    rows = []
    records = cases.to_dict(orient="records")
    total = len(records) * len(judges)
    done = 0
    for judge in judges:
        for case in records:
            row: dict[str, Any] = {
                "qid": case["qid"],
                "judge_id": judge.judge_id,
                "answer_config": case["answer_config"],
                "type": case["type"],
                "level": case["level"],
            }
            if case["status"] != "ok":
                row.update(status="answer_failed", error=case["error"])
            else:
                try:
                    row.update(judge.score(case))
                    row.update(status="ok", error=None)
                except Exception as err:  # one bad case must not sink the run
                    row.update(status="judge_error", error=f"{type(err).__name__}: {err}")
            rows.append(row)
            done += 1
            if on_progress is not None:
                on_progress(done, total)
    frame = pd.DataFrame(rows, columns=SCORE_ID_COLUMNS + metric_names)
    frame[metric_names] = frame[metric_names].astype("float64")
    return frame
