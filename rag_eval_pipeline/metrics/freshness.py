"""Whether stored results still describe the current evaluation: a summary is stale when it was
computed on another case set or another knowledge-base version than the current judgement list
and index. Stale numbers are marked, and never pass a gate."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

from rag_eval_pipeline.metrics.summary import OVERALL, case_set_id


@dataclass(frozen=True)
class Provenance:
    """What a result was computed on: the questions (their case-set hash) and the index version."""

    case_set: str | None
    kb_version: str | None


def judgement_list_version(cases: pd.DataFrame) -> str:
    """A content hash of the questions and their ground truths (the judgement list's Dagster data
    version): a changed sample or a corrected answer makes every evaluation downstream stale."""
    rows = sorted(zip(cases["qid"].astype(str), cases["question"].astype(str), cases["answer"].astype(str)))
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()[:16]


def current_provenance(judgement_qids: Iterable[str], kb_version: str) -> Provenance:
    return Provenance(case_set_id(judgement_qids), kb_version)


def summary_provenance(summary: pd.DataFrame) -> Provenance:
    """A metric summary's provenance (None where a summary from before this was recorded lacks it)."""
    overall = summary[summary["group"] == OVERALL]
    rows = overall if len(overall) else summary

    def first(column: str) -> str | None:
        return (
            str(rows[column].iloc[0])
            if column in rows and len(rows) and pd.notna(rows[column].iloc[0])
            else None
        )

    return Provenance(first("case_set"), first("kb_version"))


def staleness(result: Provenance, current: Provenance) -> list[str]:
    """Why a result no longer describes the current evaluation (empty: it does)."""
    reasons = []
    if result.case_set != current.case_set:
        reasons.append(
            f"computed on case set {result.case_set}, the judgement list is now {current.case_set}"
        )
    if result.kb_version != current.kb_version:
        reasons.append(
            f"computed on index version {result.kb_version}, the index is now {current.kb_version}"
        )
    return reasons


def stale_models(summaries: Mapping[str, pd.DataFrame], current: Provenance) -> dict[str, list[str]]:
    """Every model whose summary is stale, with why."""
    reasons = {model: staleness(summary_provenance(summary), current) for model, summary in summaries.items()}
    return {model: why for model, why in reasons.items() if why}
