"""Documents with time: each document's status on an "as of" date (current, superseded by a newer
document, or expired), how often the evaluation retrieved it, and the documents the index still
holds that the source no longer has (ghosts)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pandas as pd

CURRENT, SUPERSEDED, EXPIRED = "current", "superseded", "expired"
DOCUMENT_TABLE_COLUMNS = [
    "document",
    "title",
    "source_file",
    "status",
    "updated_at",
    "valid_until",
    "superseded_by",
    "reason",
    "retrieved",
    "ghost",
]


def document_id(passage_id: str) -> str:
    """The document a passage belongs to: a chunk ``<id>#<n>`` is part of ``<id>``."""
    return str(passage_id).split("#", 1)[0]


def parse_day(value: object) -> pd.Timestamp | None:
    """An ISO date or time as a UTC timestamp; None for nothing said. A value that is not a date
    is a ValueError naming it (a document's time is never guessed)."""
    if value is None or (isinstance(value, float) and pd.isna(value)) or str(value).strip() == "":
        return None
    try:
        stamp = pd.Timestamp(str(value).strip())
    except (ValueError, TypeError):
        raise ValueError(f"'{value}' is not a date (write it as YYYY-MM-DD)") from None
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


@dataclass(frozen=True)
class DocumentTimes:
    """The documents of a knowledge base with their status on ``as_of``, and the problems met
    (a date that is not one, a ``supersedes`` naming no document), each named."""

    table: pd.DataFrame  # DOCUMENT_TABLE_COLUMNS, one row per document
    as_of: pd.Timestamp
    problems: tuple[str, ...]

    def status_of(self) -> dict[str, str]:
        return dict(zip(self.table["document"], self.table["status"]))

    def non_current(self) -> set[str]:
        return set(self.table.loc[self.table["status"] != CURRENT, "document"])


def _names(row: Mapping) -> list[str]:
    """What a ``supersedes`` may call a document: its id (with or without ``doc_``), its title,
    its file."""
    doc = str(row["document"])
    names = [doc, str(row["title"])]
    if doc.startswith("doc_"):
        names.append(doc[len("doc_") :])
    if row.get("source_file"):
        names.append(str(row["source_file"]))
    return [n.casefold() for n in names]


def _field(passages: pd.DataFrame, name: str) -> pd.Series:
    return passages[name] if name in passages else pd.Series([None] * len(passages), index=passages.index)


def document_times(passages: pd.DataFrame, as_of: pd.Timestamp | str | None = None) -> DocumentTimes:
    """Each document of ``passages`` (chunks folded into their document) with its status on
    ``as_of`` (today, UTC, when unset): ``superseded`` when a document dated on or before
    ``as_of`` names it in ``supersedes``, ``expired`` when its ``valid_until`` is before
    ``as_of``, else ``current``. A document dated after ``as_of`` supersedes nothing yet."""
    day = parse_day(as_of) if as_of is not None else pd.Timestamp.now(tz="UTC").normalize()
    assert day is not None
    frame = pd.DataFrame(
        {
            "document": passages["passage_id"].map(document_id),
            "title": passages["title"],
            "source_file": _field(passages, "source_file"),
            "updated_at": _field(passages, "updated_at"),
            "valid_until": _field(passages, "valid_until"),
            "supersedes": _field(passages, "supersedes"),
        }
    ).drop_duplicates("document")
    problems: list[str] = []

    def day_of(value: object, document: str, key: str) -> pd.Timestamp | None:
        try:
            return parse_day(value)
        except ValueError as err:
            problems.append(f"{document}: {key} {err}")
            return None

    rows = frame.to_dict(orient="records")
    by_name: dict[str, str] = {}
    for row in rows:
        for name in _names(row):
            by_name.setdefault(name, row["document"])
    superseded_by: dict[str, str] = {}
    for row in rows:
        said = row.get("supersedes")
        if said is None or (isinstance(said, float) and pd.isna(said)) or not str(said).strip():
            continue
        updated = day_of(row.get("updated_at"), row["document"], "updated_at")
        if updated is not None and updated > day + pd.Timedelta(days=1) - pd.Timedelta(microseconds=1):
            continue  # not yet published on the "as of" day
        for name in str(said).split(";"):
            target = by_name.get(name.strip().casefold())
            if target is None:
                problems.append(f"{row['document']}: supersedes '{name.strip()}', which no document is")
            elif target != row["document"]:
                superseded_by[target] = row["document"]
    table = []
    for row in rows:
        until = day_of(row.get("valid_until"), row["document"], "valid_until")
        updated = row.get("updated_at")
        if row["document"] in superseded_by:
            status, reason = SUPERSEDED, f"superseded by {superseded_by[row['document']]}"
        elif until is not None and until < day:
            status, reason = (
                EXPIRED,
                f"valid until {until.date().isoformat()}, before {day.date().isoformat()}",
            )
        else:
            status, reason = CURRENT, ""
        table.append(
            {
                "document": row["document"],
                "title": row["title"],
                "source_file": row["source_file"],
                "status": status,
                "updated_at": None if updated is None or pd.isna(updated) else str(updated),
                "valid_until": None if until is None else until.date().isoformat(),
                "superseded_by": superseded_by.get(row["document"]),
                "reason": reason,
                "retrieved": 0,
                "ghost": False,
            }
        )
    return DocumentTimes(pd.DataFrame(table, columns=DOCUMENT_TABLE_COLUMNS), day, tuple(problems))


def with_usage(
    times: DocumentTimes, retrieved_ids: Iterable[Iterable[str]], source_documents: Iterable[str] | None
) -> DocumentTimes:
    """The documents' table with how many cases retrieved each, and which are ghosts: indexed
    but no longer in ``source_documents`` (the ids the source holds now; None: not known, no
    document is called a ghost)."""
    counts: dict[str, int] = {}
    for ids in retrieved_ids:
        for doc in {document_id(pid) for pid in ids}:
            counts[doc] = counts.get(doc, 0) + 1
    table = times.table.copy()
    table["retrieved"] = table["document"].map(lambda d: counts.get(d, 0)).astype(int)
    if source_documents is not None:
        present = {document_id(d) for d in source_documents}
        from_source = table["source_file"].notna() & table["source_file"].astype(str).ne("")
        table["ghost"] = from_source & ~table["document"].isin(present)
    return DocumentTimes(table, times.as_of, times.problems)


def stale_retrieval(retrieved_ids: Iterable[str], non_current: set[str]) -> list[str]:
    """The documents among a case's retrieved passages that are not current on the "as of" day."""
    seen: list[str] = []
    for pid in retrieved_ids:
        doc = document_id(pid)
        if doc in non_current and doc not in seen:
            seen.append(doc)
    return seen
