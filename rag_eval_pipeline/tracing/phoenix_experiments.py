"""The judgement list as a Phoenix dataset and each answer-model partition as an experiment over
it, through Phoenix's own client library (``arize-phoenix-client``, the ``[phoenix]`` extra).

The dataset's name carries the case set (a hash of the question ids), so every partition judged
on the same questions lands in one dataset and a new case set becomes a new dataset beside it.
An experiment replays what the evaluation stored: its task returns the stored answer and one
evaluator per judge and metric returns the stored score. Nothing is asked of a model again. A
failed answer or judgement stays a failure in Phoenix (an errored run or evaluation, counted
here), never a score of 0.
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rag_eval_pipeline.metrics.schema import metric_columns, per_answer


class StoredFailure(RuntimeError):
    """A failure the evaluation recorded, replayed so Phoenix records it as one."""


@dataclass(frozen=True)
class ExperimentCase:
    """What one case's experiment run replays: the answer (or why there is none) and each
    ``judge.metric`` score (or why there is none)."""

    answer: str | None
    answer_error: str | None
    scores: dict[str, float] = field(default_factory=dict)
    score_errors: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ExperimentReport:
    dataset_name: str
    dataset_id: str
    experiment_id: str
    url: str
    runs: int
    failed_runs: int
    evaluations: int
    failed_evaluations: int


def dataset_name(project: str, case_set: str) -> str:
    return f"{project} questions {case_set}"


def dataset_examples(judgement_list: pd.DataFrame) -> list[dict[str, Any]]:
    """One example per question: the question in, the gold answer out, its kind as metadata.
    The qid is the example's input key the experiment's task looks the stored answer up by."""
    examples = []
    for row in judgement_list.to_dict(orient="records"):
        metadata = {key: str(row[key]) for key in ("type", "level") if key in row}
        examples.append(
            {
                "input": {"qid": str(row["qid"]), "question": str(row["question"])},
                "output": {"answer": str(row.get("answer") or "")},
                "metadata": metadata,
            }
        )
    return examples


def experiment_cases(
    candidate_answers: pd.DataFrame, judge_scores: pd.DataFrame
) -> dict[str, ExperimentCase]:
    """Per qid, the stored answer and scores. A judge whose row failed gives an error for each of
    its metrics; a metric a judge does not measure is left out. An agent asked several times
    shows its first answer (an experiment has one output per example)."""
    if "repeat" in candidate_answers:
        candidate_answers = candidate_answers[candidate_answers["repeat"] == 0]
    if "repeat" in judge_scores:
        judge_scores = judge_scores[judge_scores["repeat"] == 0]
    judge_scores = per_answer(judge_scores)  # a judge asked K times: its median
    metrics = metric_columns(judge_scores)
    measured = {
        judge: [metric for metric in metrics if rows[metric].notna().any()]
        for judge, rows in judge_scores.groupby("judge_id")
    }
    scores: dict[str, dict[str, float]] = {}
    errors: dict[str, dict[str, str]] = {}
    for row in judge_scores.to_dict(orient="records"):
        judge = row["judge_id"]
        if row["status"] != "ok":
            reason = f"{row['status']}: {row.get('error') or ''}".strip()
            # a judge that failed on every case measured nothing: its failures go under its id
            for name in [f"{judge}.{metric}" for metric in measured[judge]] or [judge]:
                errors.setdefault(row["qid"], {})[name] = reason
            continue
        for metric in measured[judge]:
            value = row.get(metric)
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                scores.setdefault(row["qid"], {})[f"{judge}.{metric}"] = float(value)
    cases = {}
    for answer in candidate_answers.to_dict(orient="records"):
        qid = answer["qid"]
        failed = answer["status"] != "ok"
        cases[qid] = ExperimentCase(
            answer=None if failed else str(answer["answer"]),
            answer_error=f"{answer['status']}: {answer.get('error') or ''}".strip() if failed else None,
            scores=scores.get(qid, {}),
            score_errors=errors.get(qid, {}),
        )
    return cases


def evaluator_names(cases: Mapping[str, ExperimentCase]) -> list[str]:
    return sorted({name for case in cases.values() for name in (*case.scores, *case.score_errors)})


def replay_task(cases: Mapping[str, ExperimentCase]) -> Callable[[dict], dict]:
    def task(input: dict) -> dict:  # noqa: A002 (Phoenix binds the example's input by this name)
        case = cases.get(input["qid"])
        if case is None:
            raise StoredFailure("not evaluated in this partition")
        if case.answer_error:
            raise StoredFailure(case.answer_error)
        return {"answer": case.answer}

    return task


def replay_evaluator(cases: Mapping[str, ExperimentCase], name: str) -> Callable[[dict], Any]:
    def evaluator(input: dict) -> Any:  # noqa: A002
        case = cases[input["qid"]]
        if name in case.score_errors:
            raise StoredFailure(case.score_errors[name])
        if name not in case.scores:
            return {"label": "not measured"}
        return {"score": case.scores[name]}

    return evaluator


def upload_experiment(
    base_url: str,
    api_key: str | None,
    dataset: str,
    examples: list[dict[str, Any]],
    cases: Mapping[str, ExperimentCase],
    experiment_name: str,
    experiment_metadata: Mapping[str, Any],
    log: Callable[[str], None] = lambda _: None,
) -> ExperimentReport:
    """Finds or creates the dataset, then runs the replaying experiment over it. The client's own
    printing (progress bars, one traceback per replayed failure) goes to ``log``, not the
    terminal: the failures are counted in the report."""
    from phoenix.client import Client  # the optional [phoenix] extra

    client = Client(base_url=base_url, api_key=api_key)
    try:
        phoenix_dataset = client.datasets.get_dataset(dataset=dataset)
    except ValueError:  # not there yet: this case set's first partition
        phoenix_dataset = client.datasets.create_dataset(
            name=dataset,
            examples=examples,
            dataset_description=f"rag-eval judgement list, {len(examples)} questions",
        )
    evaluators = {name: replay_evaluator(cases, name) for name in evaluator_names(cases)}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        ran = client.experiments.run_experiment(
            dataset=phoenix_dataset,
            task=replay_task(cases),
            evaluators=evaluators,
            experiment_name=experiment_name,
            experiment_metadata=dict(experiment_metadata),
            print_summary=False,
            retries=0,
        )
    log(printed.getvalue())
    runs = list(ran["task_runs"])
    evaluations = list(ran["evaluation_runs"])
    return ExperimentReport(
        dataset_name=dataset,
        dataset_id=phoenix_dataset.id,
        experiment_id=ran["experiment_id"],
        url=client.experiments.get_experiment_url(phoenix_dataset.id, ran["experiment_id"]),
        runs=len(runs),
        failed_runs=sum(1 for run in runs if _error(run)),
        evaluations=len(evaluations),
        failed_evaluations=sum(1 for evaluation in evaluations if _error(evaluation)),
    )


def _error(record: Any) -> bool:
    """Task runs come back as dicts, evaluation runs as dataclasses."""
    return bool(record.get("error") if isinstance(record, Mapping) else getattr(record, "error", None))
