"""Which cases people review first, and what they see of each: the question, the answer, the
truth where there is one, the passages (gold marked where known), and the metrics to label. The
judges' verdicts are left out unless asked for: a blind review measures the judge, a shown one
measures agreement with it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rag_eval_pipeline.common.files import write_text_atomically
from rag_eval_pipeline.metrics.agreement import labellable_metrics
from rag_eval_pipeline.metrics.schema import case_key, case_set_id, per_case
from rag_eval_pipeline.review.page import labelling_page
from rag_eval_pipeline.review.sampling import DISAGREEMENT_FLOOR, Draw, random_draw, systematic_draw
from rag_eval_pipeline.review.strategy import Strategy


@dataclass(frozen=True)
class QueueSpec:
    model: str
    n: int = 40
    strategy: Strategy = Strategy.DISAGREEMENT
    judge: str | None = None  # whose verdicts and metrics (default: every judge's)
    seed: int = 0
    show_judge: bool = False


def labelled_metrics(scores: pd.DataFrame, judge: str | None = None, model: str = "") -> list[str]:
    """The metrics people label: the rubric's axes (a session's, for an agent's sessions) that a
    judge of this model scored."""
    rows = scores if judge is None else scores[scores["judge_id"] == judge]
    return [m for m in labellable_metrics(model) if m in rows and rows[m].notna().any()]


def disagreement(scores: pd.DataFrame, metrics: Sequence[str]) -> pd.Series:
    """Per case, the widest spread between the judges' scores on any labelled metric (0 where one
    judge scored it, or all agree): where a label tells most about which judge is right."""
    cases = per_case(scores)
    ok = cases[cases["status"] == "ok"]
    spread = ok.groupby("qid")[list(metrics)].agg(lambda v: v.max() - v.min() if v.notna().sum() > 1 else 0.0)
    return spread.max(axis=1).fillna(0.0)


def select_cases(scores: pd.DataFrame, spec: QueueSpec) -> Draw:
    """Up to ``spec.n`` question ids in review order, the same for the same seed, with each
    one's inclusion probability where the strategy is a probability draw: ``random`` (equal),
    ``disagreement`` (weighted towards the cases the judges disagree on, none left out). ``low``
    and ``failed`` are orders: their labels cannot correct a mean."""
    qids = list(dict.fromkeys(scores["qid"]))
    metrics = labelled_metrics(scores, spec.judge, spec.model)
    if spec.strategy is Strategy.RANDOM:
        return random_draw(qids, spec.n, spec.seed)
    if spec.strategy is Strategy.DISAGREEMENT:
        spread = disagreement(scores, metrics).reindex(qids).fillna(0.0) if metrics else pd.Series(0.0, qids)
        return systematic_draw(qids, (DISAGREEMENT_FLOOR + spread).tolist(), spec.n, spec.seed)
    rng = np.random.default_rng(spec.seed)
    shuffled = [qids[i] for i in rng.permutation(len(qids))]
    cases = per_case(scores)
    first: list[str] = []
    if spec.strategy is Strategy.LOW and metrics:
        judged = cases[
            (cases["status"] == "ok") & (cases["judge_id"] == (spec.judge or cases["judge_id"].iloc[0]))
        ]
        lowest = judged.set_index("qid")[metrics].mean(axis=1).sort_values(kind="stable")
        first = list(lowest.index)
    elif spec.strategy is Strategy.FAILED:
        failed = set(cases[cases["status"] != "ok"]["qid"])
        first = [q for q in shuffled if q in failed]
    return Draw(list(dict.fromkeys([*first, *shuffled]))[: spec.n], None)


def queue_records(
    spec: QueueSpec,
    draw: Draw,
    answers: pd.DataFrame,
    judgement_list: pd.DataFrame,
    scores: pd.DataFrame,
) -> list[dict[str, Any]]:
    """What the labelling page shows of each case, in order; the first answer of an agent asked
    several times."""
    metrics = labelled_metrics(scores, spec.judge, spec.model)
    truth = judgement_list.set_index("qid")
    by_answer = {case_key(a): a for a in answers.to_dict(orient="records")}
    records = []
    for qid in draw.qids:
        answer = by_answer.get((qid, 0))
        if answer is None:
            continue
        known = qid in truth.index
        gold = set(truth.loc[qid, "gold_titles"]) if known else set()
        # an unanswerable question's truth is to decline (a list without the column: all answerable)
        has_truth = known and bool(truth.loc[qid, "answerable"] if "answerable" in truth else True)
        verdicts = judge_verdicts(scores, qid, metrics, spec.judge) if spec.show_judge else {}
        records.append(
            {
                "qid": qid,
                "answer_model": spec.model,
                "question": str(answer["question"]),
                "answer": "" if answer["status"] != "ok" else str(answer["answer"]),
                "failed": None if answer["status"] == "ok" else str(answer.get("error") or "failed"),
                "truth": str(truth.loc[qid, "answer"]) if known else None,
                "truth_is_abstention": known and not has_truth,
                "passages": [
                    {"title": str(t), "text": str(p), "gold": t in gold}
                    for t, p in zip(answer["retrieved_titles"], answer["retrieved_passages"])
                ],
                "metrics": metrics,
                "judge": verdicts,
                # how the case came into the queue: what lets its labels correct a mean
                "selection": spec.strategy.value,
                "inclusion_probability": None if draw.inclusion is None else draw.inclusion[qid],
            }
        )
    return placed_in_queue(records, scores)


def judge_verdicts(
    scores: pd.DataFrame, qid: str, metrics: Sequence[str], judge: str | None
) -> dict[str, float]:
    """A case's scores by each judge (or one) on the labelled metrics, for a queue that shows them."""
    mine = scores[(scores["qid"] == qid) & (scores["status"] == "ok")]
    if judge is not None:
        mine = mine[mine["judge_id"] == judge]
    return {
        f"{row['judge_id']} / {m}": float(row[m])
        for row in mine.to_dict(orient="records")
        for m in metrics
        if m in row and not pd.isna(row[m])
    }


def placed_in_queue(records: list[dict[str, Any]], scores: pd.DataFrame) -> list[dict[str, Any]]:
    """Where each case stands in the queue and which cases it was drawn from: a queue labelled in
    part corrects from its labelled prefix, and labels on other cases correct nothing."""
    drawn_from = case_set_id(scores["qid"])
    for position, record in enumerate(records):
        record.update(queue_position=position, queue_size=len(records), case_set=drawn_from)
    return records


def queue_rows(records: Sequence[dict[str, Any]], queue: str) -> list[dict[str, Any]]:
    """The same cases as empty label rows, one per metric, for a spreadsheet or another tool."""
    return [
        {
            "qid": r["qid"],
            "answer_model": r["answer_model"],
            "metric": metric,
            "label": None,
            "reviewer": None,
            "note": None,
            "labelled_at": None,
            "question": r["question"],
            "answer": r["answer"],
            "truth": r["truth"],
            "queue": queue,
            "selection": r["selection"],
            "inclusion_probability": r["inclusion_probability"],
            "queue_position": r["queue_position"],
            "queue_size": r["queue_size"],
            "case_set": r["case_set"],
        }
        for r in records
        for metric in r["metrics"]
    ]


def build_queue(
    spec: QueueSpec, answers: pd.DataFrame, judgement_list: pd.DataFrame, scores: pd.DataFrame
) -> list[dict[str, Any]]:
    """The cases of one review queue, in review order, as the page and the JSONL show them."""
    if spec.judge is not None and spec.judge not in set(scores["judge_id"]):
        judges = ", ".join(sorted(set(scores["judge_id"])))
        raise ValueError(f"judge {spec.judge!r} did not score {spec.model} (its judges: {judges})")
    return queue_records(spec, select_cases(scores, spec), answers, judgement_list, scores)


def queue_name(spec: QueueSpec, day: str) -> str:
    """``<model>-<strategy>-<day>``: a queue a month apart is another file."""
    return f"{spec.model}-{spec.strategy.value}-{day}"


def write_queue(folder: Path, name: str, records: Sequence[dict[str, Any]], blind: bool) -> tuple[Path, Path]:
    """``<folder>/<name>.html`` (the labelling page) and ``<folder>/<name>.jsonl`` (empty label
    rows), each written aside and renamed into place."""
    folder.mkdir(parents=True, exist_ok=True)
    page, rows = folder / f"{name}.html", folder / f"{name}.jsonl"
    contents = {
        page: labelling_page(name, records, blind),
        rows: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in queue_rows(records, name)),
    }
    for path, text in contents.items():
        write_text_atomically(path, text)
    return page, rows
