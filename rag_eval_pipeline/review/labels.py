"""Label rows ``{qid, answer_model, metric, label, reviewer, note, labelled_at}``: read from a
file (JSONL or CSV, as the labelling page or a spreadsheet writes them), every problem named by
file and line, and nothing taken from a file that has one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from rag_eval_pipeline.data.rows import RowFileError, read_rows
from rag_eval_pipeline.metrics.agreement import SCALE, labellable_metrics

LABEL_COLUMNS = [
    "qid",
    "answer_model",
    "metric",
    "label",
    "reviewer",
    "note",
    "labelled_at",
    "source",
    # how the case came to be labelled: the queue, its strategy, the case's chance of being drawn
    # (empty where unknown: such labels measure a judge but cannot correct its mean)
    "queue",
    "selection",
    "inclusion_probability",
    # the case's place in its queue's review order, the queue's size and the cases it was drawn
    # from (empty where unknown): a queue labelled in part corrects from its labelled prefix, and
    # labels of other cases correct nothing
    "queue_position",
    "queue_size",
    "case_set",
]
UNKNOWN_SELECTION = "unknown"
LABEL_KEY = ["reviewer", "answer_model", "qid", "metric"]


class LabelFileError(RowFileError):
    """Every problem of a label file, each naming the file and the line."""


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and pd.isna(value)) or str(value).strip() == ""


def _probability(value: Any) -> float | None:
    """An inclusion probability in (0, 1], else None (not given, or not a probability)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if 0 < number <= 1 else None


def _count(value: Any, least: int) -> int | None:
    """A whole number at least ``least``, else None."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() and number >= least else None


def _place(row: dict[str, Any], location: str, problems: list[str]) -> tuple[float, float] | None:
    """The case's (position, queue size), NaN where not given; None (and a problem) when they
    are not a place in a queue."""
    given = {key: row.get(key) for key in ("queue_position", "queue_size")}
    if all(_blank(v) for v in given.values()):
        return float("nan"), float("nan")
    position, size = _count(given["queue_position"], 0), _count(given["queue_size"], 1)
    if position is None or size is None or position >= size:
        problems.append(
            f"{location}: queue_position {given['queue_position']!r} and queue_size "
            f"{given['queue_size']!r} are not a place in a queue (0 <= position < size)"
        )
        return None
    return float(position), float(size)


def _label(value: Any) -> float | None:
    if isinstance(value, bool):  # true / false is not a score, however Python reads it
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number in SCALE else None


def read_label_file(path: str | Path, known_cases: Mapping[str, set[str]] | None = None) -> pd.DataFrame:
    """The labels of one file. ``known_cases`` (answer model -> its question ids) refuses labels
    of cases that were never evaluated. A row without a label (a queue row left blank) is not a
    label and is skipped; any other problem (unknown case or metric, a label outside 0 / 0.5 / 1,
    no reviewer, one reviewer giving one answer two different labels) stops the whole file."""
    path = Path(path)
    if not path.is_file():
        raise LabelFileError(path, ["file not found"])
    rows, problems = read_rows(path, "an object with qid, answer_model, metric and label")
    return checked_labels(path, path.name, rows, problems, known_cases)


def checked_labels(
    where: str | Path,
    source: str,
    rows: Sequence[tuple[str, dict[str, Any]]],
    problems: list[str],
    known_cases: Mapping[str, set[str]] | None,
) -> pd.DataFrame:
    """Rows (each with its location) as labels, all of them or none: every problem is named by
    ``where`` and the row's location."""
    seen: dict[tuple, tuple[float, str]] = {}
    labels = []
    for location, row in rows:
        if _blank(row.get("label")):
            continue
        qid, model = str(row.get("qid") or "").strip(), str(row.get("answer_model") or "").strip()
        metric, reviewer = str(row.get("metric") or "").strip(), str(row.get("reviewer") or "").strip()
        label = _label(row.get("label"))
        if label is None:
            problems.append(f"{location}: label {row.get('label')!r} is not 0, 0.5 or 1")
            continue
        if metric not in labellable_metrics(model):
            problems.append(
                f"{location}: metric {metric!r} is not one of {', '.join(labellable_metrics(model))}"
            )
            continue
        if not reviewer:
            problems.append(f"{location}: no reviewer (every label says who gave it)")
            continue
        if known_cases is not None:
            if model not in known_cases:
                known = ", ".join(sorted(known_cases)) or "none"
                problems.append(
                    f"{location}: answer model {model!r} was never evaluated (evaluated: {known})"
                )
                continue
            if qid not in known_cases[model]:
                problems.append(f"{location}: case {qid!r} is not among {model}'s evaluated cases")
                continue
        key = (reviewer, model, qid, metric)
        if key in seen and seen[key][0] != label:
            problems.append(
                f"{location}: {reviewer} labelled {model} / {qid} / {metric} {label:g} here and "
                f"{seen[key][0]:g} at {seen[key][1]}"
            )
            continue
        probability = None
        if not _blank(row.get("inclusion_probability")):
            probability = _probability(row.get("inclusion_probability"))
            if probability is None:
                problems.append(
                    f"{location}: inclusion_probability {row.get('inclusion_probability')!r} is not a "
                    "probability above 0 and at most 1"
                )
                continue
        place = _place(row, location, problems)
        if place is None:
            continue
        seen[key] = (label, location)
        labelled_at = row.get("labelled_at")
        labels.append(
            {
                "qid": qid,
                "answer_model": model,
                "metric": metric,
                "label": label,
                "reviewer": reviewer,
                "note": "" if _blank(row.get("note")) else str(row.get("note")),
                "labelled_at": "" if _blank(labelled_at) else str(labelled_at),
                "source": f"{source}, {location}",
                "queue": "" if _blank(row.get("queue")) else str(row.get("queue")),
                "selection": UNKNOWN_SELECTION if _blank(row.get("selection")) else str(row.get("selection")),
                "inclusion_probability": float("nan") if probability is None else probability,
                "queue_position": place[0],
                "queue_size": place[1],
                "case_set": "" if _blank(row.get("case_set")) else str(row.get("case_set")),
            }
        )
    if problems:
        raise LabelFileError(where, problems)
    return pd.DataFrame(labels, columns=LABEL_COLUMNS)


def latest_labels(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Every reviewer's latest label of each answer and metric (by ``labelled_at``, then by the
    order the files were read in: a later file corrects an earlier one)."""
    if not frames:
        return pd.DataFrame(columns=LABEL_COLUMNS)
    labels = pd.concat(frames, ignore_index=True)
    labels["order"] = range(len(labels))
    labels = labels.sort_values(["labelled_at", "order"], kind="stable").drop_duplicates(
        LABEL_KEY, keep="last"
    )
    return labels.sort_values("order").drop(columns="order").reset_index(drop=True)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
