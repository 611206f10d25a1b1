"""One table of the agent's real interactions, whatever source they came from: what it was asked,
what it answered, the contexts it answered from, when, and what is known of it (its trace,
version, the user's feedback). A row that lacks what scoring needs is named, never guessed."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd

from rag_eval_pipeline.common.text import nfc_values

INTERACTION_COLUMNS = [
    "interaction_id",
    "day",
    "timestamp",
    "question",
    "answer",
    "contexts",
    "context_ids",
    "context_titles",
    "contexts_known",
    "trace_id",
    "span_id",  # the root span's, where the interaction was read from spans (evaluation events' parent)
    "latency_s",  # the root span's own duration (spans), or the log's latency field
    "cost_usd",  # what the interaction cost, where the log says (else unknown, never 0)
    "agent_version",
    "user_feedback",
    "metadata",
    "source",
    "file",
    "location",
]
UNVERSIONED = "unversioned"  # the agent version of a row that names none


class InteractionError(ValueError):
    """A row that cannot be an interaction: what it lacks, said with where it is."""


@dataclass(frozen=True)
class Problem:
    """A row or file that could not be read, named; ``file`` is where it is (None: a remote
    source, or the source itself)."""

    text: str
    file: str | None = None

    def __str__(self) -> str:
        return self.text


def json_documents(path: Path, text: str) -> tuple[list[tuple[str, Any]], list[Problem]]:
    """A file's JSON: one document, else one a line (blank lines passed over), each with where
    it is (the file, or its line); a line that is not JSON is a problem naming file and line."""
    stripped = text.strip()
    try:
        return ([(f"{path}", json.loads(stripped))] if stripped else []), []
    except json.JSONDecodeError:
        pass
    documents: list[tuple[str, Any]] = []
    problems: list[Problem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            documents.append((f"{path}, line {number}", json.loads(line)))
        except json.JSONDecodeError as err:
            problems.append(Problem(f"{path}, line {number}: invalid JSON ({err.msg})", str(path)))
    return documents, problems


@dataclass(frozen=True)
class ReadInteractions:
    """What a source gave: its interactions and the problems of the rows it could not read
    (each naming the file and line, or the span), so the rest of a day is still scored."""

    frame: pd.DataFrame
    problems: list[Problem] = field(default_factory=list)

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]], problems: Sequence[Problem] = ()) -> ReadInteractions:
        frame = pd.DataFrame(list(rows), columns=INTERACTION_COLUMNS)
        # the same interaction exported twice (a re-shipped log, a span read again) counts once
        frame = frame.drop_duplicates("interaction_id", keep="first").reset_index(drop=True)
        return cls(frame, list(problems))

    @classmethod
    def combined(cls, parts: Sequence[ReadInteractions]) -> ReadInteractions:
        frames = [p.frame for p in parts if len(p.frame)]
        frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=INTERACTION_COLUMNS)
        rows = frame.drop_duplicates("interaction_id", keep="first").reset_index(drop=True)
        return cls(rows, [problem for p in parts for problem in p.problems])

    def of_day(self, day: str) -> ReadInteractions:
        """One day's interactions, and the problems that may be its own: those of files that
        hold rows of the day, of files no row could be read from, and of remote sources (a bad
        row has no day to be placed by)."""
        rows = self.frame[self.frame["day"] == day].reset_index(drop=True)
        files_of_day = set(rows["file"].dropna())
        files_with_rows = set(self.frame["file"].dropna())
        kept = [
            p
            for p in self.problems
            if p.file is None or p.file in files_of_day or p.file not in files_with_rows
        ]
        return ReadInteractions(rows, kept)


def parse_timestamp(value: Any, zone: ZoneInfo) -> pd.Timestamp:
    """An aware timestamp from ISO 8601 text (a naive one is in ``zone``), epoch seconds or
    milliseconds, or nanoseconds (OTLP); an InteractionError says what did not parse."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        raise InteractionError("no timestamp")
    if isinstance(value, bool):
        raise InteractionError(f"timestamp {value!r} does not parse (ISO 8601 or epoch seconds)")
    if isinstance(value, int | float) or (isinstance(value, str) and value.strip().isdigit()):
        number = float(value)
        # seconds until about 5138, then milliseconds, microseconds, nanoseconds
        for unit, limit in (("s", 1e11), ("ms", 1e14), ("us", 1e17), ("ns", math.inf)):
            if abs(number) < limit:
                return pd.Timestamp(int(number) if unit != "s" else number, unit=unit, tz="UTC")
    if isinstance(value, dt.datetime | pd.Timestamp):
        stamp = pd.Timestamp(value)
    else:
        try:
            stamp = pd.Timestamp(str(value).strip())
        except (ValueError, TypeError, OverflowError):
            raise InteractionError(
                f"timestamp {str(value)[:40]!r} does not parse (ISO 8601 or epoch seconds)"
            ) from None
    if pd.isna(stamp):
        raise InteractionError(f"timestamp {str(value)[:40]!r} does not parse (ISO 8601 or epoch seconds)")
    return stamp.tz_localize(zone) if stamp.tzinfo is None else stamp


def day_of(stamp: pd.Timestamp, zone: ZoneInfo) -> str:
    """The day partition a moment belongs to: its date where the day's midnight is ``zone``'s."""
    return stamp.tz_convert(zone).strftime("%Y-%m-%d")


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, dict | list):
        return json.dumps(value)
    return value if isinstance(value, str) else str(value)


def _items(value: Any) -> list[Any] | None:
    """A list (a single value is a one-item list); None when absent."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    return list(value) if isinstance(value, list | tuple) else [value]


def _texts(value: Any) -> list[str] | None:
    items = _items(value)
    return (
        None if items is None else ["" if v is None else v if isinstance(v, str) else str(v) for v in items]
    )


def _labels(value: Any) -> list[str | None] | None:
    """Ids or titles: an empty one is none (a context the agent gave no id)."""
    items = _items(value)
    return None if items is None else [None if v in (None, "") else str(v) for v in items]


def _amount(name: str, value: Any) -> float | None:
    """A latency (seconds) or cost (dollars) as a number; None when not given. A value that is
    not a number of 0 or more is the row's error, never read as 0."""
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return None
    try:
        amount = float(value)
    except (TypeError, ValueError):
        raise InteractionError(f"{name}: {value!r} is not a number") from None
    if isinstance(value, bool) or not math.isfinite(amount) or amount < 0:
        raise InteractionError(f"{name}: {value!r} is not a number of 0 or more")
    return amount


def interaction(
    *,
    source: str,
    location: str,
    question: Any,
    answer: Any,
    timestamp: Any,
    zone: ZoneInfo,
    contexts: Any = None,
    context_ids: Any = None,
    context_titles: Any = None,
    trace_id: Any = None,
    span_id: Any = None,
    latency_s: Any = None,
    cost_usd: Any = None,
    agent_version: Any = None,
    user_feedback: Any = None,
    metadata: Any = None,
    file: str | None = None,
) -> dict[str, Any]:
    """One interaction row; an InteractionError when the question, the answer or the time is
    missing, or when ids or titles do not line up with the contexts. Its texts are read in NFC
    (a log may hold them decomposed), whichever source it comes from."""
    asked, said = nfc_values(_text(question)), nfc_values(_text(answer))
    if not asked or not asked.strip():
        raise InteractionError("no question")
    if said is None:
        raise InteractionError("no answer")
    stamp = parse_timestamp(timestamp, zone)
    texts = nfc_values(_texts(contexts))
    ids, titles = nfc_values(_labels(context_ids)), nfc_values(_labels(context_titles))
    for name, values in (("context_ids", ids), ("context_titles", titles)):
        if values is not None and texts is not None and len(values) != len(texts):
            raise InteractionError(f"{name}: {len(values)} values for {len(texts)} contexts")
    trace = _text(trace_id)
    version = _text(agent_version) or UNVERSIONED
    details = metadata if isinstance(metadata, dict) else ({} if metadata is None else {"value": metadata})
    # the trace, where there is one, is the interaction; else what was asked, said and when
    # (wherever the log lies: a copy in another folder, or in two sources, is the same one)
    identity = trace or json.dumps([asked, said, stamp.isoformat()], ensure_ascii=False)
    return {
        "interaction_id": "i" + hashlib.sha256(identity.encode()).hexdigest()[:15],
        "day": day_of(stamp, zone),
        "timestamp": stamp.tz_convert("UTC"),
        "question": asked.strip(),
        "answer": said,
        "contexts": texts or [],
        "context_ids": ids if ids is not None else [None] * len(texts or []),
        "context_titles": titles if titles is not None else [None] * len(texts or []),
        "contexts_known": texts is not None,
        "trace_id": trace,
        "span_id": _text(span_id),
        "latency_s": _amount("latency_s", latency_s),
        "cost_usd": _amount("cost_usd", cost_usd),
        "agent_version": version,
        "user_feedback": _text(user_feedback),
        "metadata": json.dumps(details, sort_keys=True, default=str, ensure_ascii=False),
        "source": source,
        "file": file,
        "location": location,
    }


def day_digests(frame: pd.DataFrame) -> dict[str, str]:
    """Each day's content digest (its interactions' ids): what the sensor compares, so a day is
    materialized when its logs arrive and again only when late rows change it."""
    digests = {}
    for day, rows in frame.groupby("day", sort=True):
        ids = "\n".join(sorted(rows["interaction_id"]))
        digests[str(day)] = hashlib.sha256(ids.encode()).hexdigest()[:16]
    return digests
