"""Production problems become regression cases: chosen interactions of a day written as a
judgement list of this project's own format, each with its question, an empty reference answer
to fill in (``reference_pending``) and, when wanted, the contexts it was served as the case's
documents. The list's version (a content hash) and count let a CI gate pin it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from rag_eval_pipeline.common.files import write_atomically
from rag_eval_pipeline.data.judgement_file import rows_version
from rag_eval_pipeline.data.knowledge_base import REFERENCE_PENDING
from rag_eval_pipeline.metrics.schema import metric_columns


class PromoteError(ValueError):
    """What keeps the chosen cases from being promoted, in one line."""


def chosen_cases(
    sample: pd.DataFrame,
    scores: pd.DataFrame,
    qids: Sequence[str] = (),
    worst: int | None = None,
    metric: str = "faithfulness",
    judge: str | None = None,
) -> pd.DataFrame:
    """The sampled interactions named by id, or the ``worst`` scored lowest on ``metric`` (of
    ``judge``, else of the first judge that measured it); lowest first."""
    if qids:
        unknown = [q for q in qids if q not in set(sample["interaction_id"])]
        if unknown:
            raise PromoteError(
                f"not in the day's sample: {', '.join(unknown[:5])} (the sample's ids are in "
                "production_sample, and in `rag-eval production run`'s worst cases)"
            )
        return sample.set_index("interaction_id").loc[list(dict.fromkeys(qids))].reset_index()
    if metric not in scores:
        raise PromoteError(f"no judge measured {metric} on this day (measured: {_measured(scores)})")
    rows = scores[(scores["status"] == "ok") & scores[metric].notna()]
    judges = list(dict.fromkeys(rows["judge_id"]))
    judge = judge or (judges[0] if judges else None)
    rows = rows[rows["judge_id"] == judge]
    if rows.empty:
        raise PromoteError(f"judge {judge} scored no case on {metric} this day")
    lowest = rows.sort_values([metric, "qid"]).head(worst or len(rows))
    picked = sample.set_index("interaction_id").loc[lowest["qid"]].reset_index()
    return picked.assign(**{f"{judge}/{metric}": lowest[metric].to_numpy()})


def _measured(scores: pd.DataFrame) -> str:
    """The metrics some case of the day has a value of."""
    measured = [
        c
        for c in metric_columns(scores)
        if c not in ("cost_usd", "agent_version") and scores[c].notna().any()
    ]
    return ", ".join(measured) or "none"


def judgement_rows(cases: pd.DataFrame, day: str, with_contexts: bool) -> list[dict]:
    """Rows of a judgement list: the question, an empty answer to fill in, where it came from
    and (``with_contexts``) the served contexts as its documents."""
    rows = []
    for case in cases.to_dict(orient="records"):
        row = {
            "id": case["interaction_id"],
            "question": case["question"],
            "answer": "",
            REFERENCE_PENDING: True,
            "tags": ["production", f"day:{day}", f"agent_version:{case['agent_version']}"],
            "served_answer": case["answer"],
            "trace_id": case["trace_id"],
        }
        if with_contexts:
            row["documents"] = [
                {
                    **({"id": str(i)} if i else {}),
                    "title": t or f"{case['interaction_id']} context {n}",
                    "passage": text,
                }
                for n, (text, i, t) in enumerate(
                    zip(case["contexts"], case["context_ids"], case["context_titles"]), start=1
                )
                if str(text).strip()
            ]
        rows.append(row)
    return rows


def write_judgement_list(rows: Sequence[dict], path: Path, merge: bool = True) -> tuple[int, str]:
    """Writes (or, with ``merge``, adds to the cases already in) the file, whole or not at
    all; returns the count and version of what it holds now."""
    kept: list[dict] = []
    if merge and path.is_file():
        kept = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids = {r["id"] for r in rows}
    merged = [r for r in kept if r.get("id") not in ids] + list(rows)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in merged)
    write_atomically(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return len(merged), rows_version(merged)


def negative_feedback_cases(frame: pd.DataFrame, day: str, negative_below: float) -> pd.DataFrame:
    """The day's interactions a user gave a thumbs-down (feedback below ``negative_below``),
    sampled or not, the most negative first."""
    rows = frame[(frame["day"] == day) & frame["feedback"].notna() & (frame["feedback"] < negative_below)]
    return rows.sort_values(["feedback", "interaction_id"]).reset_index(drop=True)


def feedback_judgement_rows(cases: pd.DataFrame, day: str, with_contexts: bool) -> list[dict]:
    """Judgement-list rows of thumbs-down interactions: as ``judgement_rows``, with the agent's
    answer as the rejected answer and the user's comment as the note."""
    rows = judgement_rows(cases, day, with_contexts)
    for row, case in zip(rows, cases.to_dict(orient="records")):
        row["tags"].append("feedback:negative")
        row["rejected_answer"] = case["answer"]
        row["note"] = case.get("feedback_comment") or ""
        row["user_feedback"] = float(case["feedback"])
    return rows


def _question_key(question: str) -> str:
    """A question as the list is deduplicated by: whatever its case and spacing."""
    return re.sub(r"\s+", " ", str(question)).strip().casefold()


def not_in_list(rows: Sequence[dict], path: Path) -> tuple[list[dict], list[dict]]:
    """(new, already there): rows whose id or question the list at ``path`` already holds are
    not proposed again (a person may have written their reference)."""
    held: list[dict] = []
    if path.is_file():
        held = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids = {str(r.get("id")) for r in held}
    questions = {_question_key(r.get("question", "")) for r in held}
    fresh, known = [], []
    for row in rows:
        key = _question_key(row["question"])
        (known if row["id"] in ids or key in questions else fresh).append(row)
        questions.add(key)
    return fresh, known


def blind_spot_judgement_rows(proposals: Sequence[dict]) -> list[dict]:
    """Judgement-list rows of the production questions proposed for the blind spots of
    ``kb_health``'s traffic comparison (topics production asks about and no case covers): the
    question, an empty reference to write, tags naming the topic and its terms as the note."""
    return [
        {
            "id": str(p["production_id"]),
            "question": p["question"],
            "answer": "",
            REFERENCE_PENDING: True,
            "tags": ["production", f"blind-spot:{p['topic']}"],
            "note": f"blind spot: {', '.join(p['terms']) if isinstance(p['terms'], list) else p['terms']}",
        }
        for p in proposals
    ]
