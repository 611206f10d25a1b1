"""Whether stored results still describe the current evaluation: the one rule that ``gate``, the
blocking quality gate, the comparison and the report all apply. Results are stale when they were
computed on another case set, another knowledge-base version or another answer model than the
current judgement list, index and configuration, or when a later evaluation of the same model
failed. Stale numbers are marked, and never pass a gate. A run still in progress makes nothing
stale: the stored results stay the latest complete word until it finishes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rag_eval_pipeline.metrics.schema import case_set_id
from rag_eval_pipeline.metrics.settings import OVERALL

if TYPE_CHECKING:  # tables pass through; pandas is imported where a function needs it
    import pandas as pd


@dataclass(frozen=True)
class Provenance:
    """What a result was computed on: the questions (their case-set hash), the index version and
    the answer model's fingerprint (None: not known, not compared)."""

    case_set: str | None
    kb_version: str | None
    answer_spec: str | None = None


@dataclass(frozen=True)
class FinishedRun:
    """The newest finished evaluation run of a partition, and whether it succeeded."""

    run_id: str
    succeeded: bool
    worker: str | None = None  # the Celery worker that ran it (name@host), when one did


def judgement_list_version(cases: pd.DataFrame) -> str:
    """A content hash of the questions and their ground truths (the judgement list's Dagster data
    version): a changed sample or a corrected answer makes every evaluation downstream stale."""
    import pandas as pd

    answerable = cases["answerable"] if "answerable" in cases else pd.Series(True, index=cases.index)
    rows = sorted(
        # an unanswerable question is marked; answerable ones hash as they always did
        (qid, question, answer) if can else (qid, question, answer, "unanswerable")
        for qid, question, answer, can in zip(
            cases["qid"].astype(str), cases["question"].astype(str), cases["answer"].astype(str), answerable
        )
    )
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()[:16]


def current_provenance(
    judgement_qids: Iterable[str], kb_version: str, answer_spec: str | None = None
) -> Provenance:
    return Provenance(case_set_id(judgement_qids), kb_version, answer_spec)


def _first(rows: pd.DataFrame, column: str) -> str | None:
    import pandas as pd

    if column not in rows or not len(rows) or pd.isna(rows[column].iloc[0]):
        return None
    return str(rows[column].iloc[0])


def summary_provenance(summary: pd.DataFrame) -> Provenance:
    """A metric summary's provenance (None where a summary from before it was recorded lacks it)."""
    overall = summary[summary["group"] == OVERALL] if "group" in summary else summary
    rows = overall if len(overall) else summary
    return Provenance(_first(rows, "case_set"), _first(rows, "kb_version"), _first(rows, "answer_spec"))


def answers_provenance(candidate_answers: pd.DataFrame) -> Provenance:
    """The provenance of a partition's stored answers: their questions, index and model."""
    return Provenance(
        case_set_id(candidate_answers["qid"]),
        _first(candidate_answers, "kb_version"),
        _first(candidate_answers, "answer_spec"),
    )


def freshness(
    result: Provenance,
    current: Provenance,
    result_run_id: str | None = None,
    newest_finished: FinishedRun | None = None,
) -> list[str]:
    """Why a result no longer describes the current evaluation (empty: it does). The answer
    model is compared when both sides know it; a failed (or cancelled) evaluation finished after
    the run that made the result makes it stale; one still running does not."""
    reasons = []
    if result.case_set != current.case_set:
        reasons.append(
            f"computed on case set {result.case_set}, the judgement list is now {current.case_set}"
        )
    if result.kb_version != current.kb_version:
        reasons.append(
            f"computed on index version {result.kb_version}, the index is now {current.kb_version}"
        )
    if result.answer_spec and current.answer_spec and result.answer_spec != current.answer_spec:
        reasons.append(
            f"computed by answer model {result.answer_spec}, the configuration now names "
            f"{current.answer_spec}"
        )
    if (
        newest_finished is not None
        and not newest_finished.succeeded
        and newest_finished.run_id != result_run_id
    ):
        reasons.append(
            f"evaluation run {newest_finished.run_id[:8]} failed; these are the values of run "
            f"{(result_run_id or '?')[:8]}"
        )
    return reasons


def summary_run_id(summary: pd.DataFrame) -> str | None:
    """The run that computed a stored summary (None for an empty one)."""
    if "summary_run_id" not in summary or not len(summary):
        return None
    return str(summary["summary_run_id"].iloc[0])


def summary_stale_reasons(
    partition: str,
    summary: pd.DataFrame,
    answer_spec: str | None,
    judgement_qids: Iterable[str],
    kb_version: str,
    newest_finished: FinishedRun | None,
) -> list[str]:
    """Why this partition's stored summary may not be trusted now (empty: it may), given the
    fingerprint its name resolves to now (None: it no longer resolves) and the newest finished
    run that evaluated it: the one rule for gate, checks, comparison, report and explain."""
    current = current_provenance(judgement_qids, kb_version, answer_spec)
    reasons = freshness(summary_provenance(summary), current, summary_run_id(summary), newest_finished)
    if answer_spec is None:
        reasons.append(f"{partition} no longer resolves to an answer model of the configuration")
    return reasons
