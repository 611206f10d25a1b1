"""The jury: the run's LLM judges (its jurors) combined into one more judge, ``jury``, whose
score of an answer on each axis two or more jurors share is the lower median of their scores
(each juror's own re-scores collapsed to their median first). Made from the scores already
paid for: a jury makes no call."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pandas as pd

from rag_eval_pipeline.judges.registry import JURY_JUDGE_ID, Juror, jury_axes
from rag_eval_pipeline.metrics.reliability import JURORS_KEY, MODE_KEY
from rag_eval_pipeline.metrics.schema import ANSWER_METRICS, SCORE_ID_COLUMNS, TOKEN_COLUMNS, per_answer
from rag_eval_pipeline.metrics.stability import lower_median

JURY_KIND = "jury"


def jury_scores(judge_scores: pd.DataFrame, jurors: Sequence[Juror], mode: str = "median") -> pd.DataFrame:
    """The jury's rows, one per answer, in ``judge_scores``' layout: each shared axis the lower
    median of the jurors that scored it, the row scored when any juror scored the answer; its
    rationales say who gave what, and ``mode`` how people's labels weigh them (``weighted``: in
    ``judge_agreement``, where labels are). Tokens and dollars are 0: the jurors' rows carry them."""
    axes = jury_axes(jurors)
    names = [s.judge_id for s in jurors]
    answers = per_answer(judge_scores[judge_scores["judge_id"].isin(names)])
    keys = ["qid", "repeat"] if "repeat" in answers else ["qid"]
    rows = []
    for _, votes in answers.groupby(keys, sort=False):
        scored = votes[votes["status"] == "ok"]
        first = votes.iloc[0]
        row = {c: first[c] for c in (*SCORE_ID_COLUMNS, *ANSWER_METRICS) if c in votes}
        row.update(
            judge_id=JURY_JUDGE_ID,
            judge_kind=JURY_KIND,
            judge_repeat=0,
            prompt_version=None,
            **dict.fromkeys(TOKEN_COLUMNS, 0),
            cost_usd=0.0,
            notes=None,
        )
        given = {axis: _scores_by_juror(scored, axis) for axis in axes}
        for axis in axes:
            row[axis] = lower_median(list(given[axis].values()))
        row["status"] = "ok" if len(scored) else str(first["status"])
        row["error"] = None if len(scored) else first["error"]
        row["rationales"] = json.dumps(
            {JURORS_KEY: ", ".join(names), MODE_KEY: mode, **{a: _votes(v) for a, v in given.items() if v}}
        )
        rows.append(row)
    return pd.DataFrame(rows)


def _scores_by_juror(scored: pd.DataFrame, axis: str) -> dict[str, float]:
    present = scored.dropna(subset=[axis])
    return dict(zip(present["judge_id"].astype(str), present[axis].astype(float)))


def _votes(given: dict[str, float]) -> str:
    return "median of " + ", ".join(f"{judge} {score:g}" for judge, score in given.items())
