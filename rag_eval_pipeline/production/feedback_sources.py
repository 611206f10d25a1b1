"""Where users' feedback is read from: the one table of feedback kinds (the interactions' own
field, a Langfuse score export, Phoenix span annotations from an export or a Phoenix project),
each source read and joined to the interactions, counted so a file's records are all accounted
for (joined, joined to no interaction, left out by name or kind, unreadable)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.production.feedback import (
    RECORD_COLUMNS,
    FeedbackRead,
    export_items,
    field_feedback,
    join_records,
    langfuse_feedback,
    per_interaction,
    phoenix_feedback,
    with_feedback,
)
from rag_eval_pipeline.production.interactions import Problem
from rag_eval_pipeline.production.phoenix_spans import PhoenixSpansError, read_span_annotations
from rag_eval_pipeline.production.settings import (
    FeedbackSettings,
    FieldFeedback,
    LangfuseFeedback,
    PhoenixFeedback,
    kind_tag,
)


def _from_file(path: str, source: str, reader: Callable[..., FeedbackRead], *args: Any) -> FeedbackRead:
    file = Path(path)
    if not file.is_file():
        return FeedbackRead(source, problems=[Problem(f"{file}: no such file (feedback source {source})")])
    try:
        items, problems = export_items(file)
    except (OSError, UnicodeDecodeError) as err:
        return FeedbackRead(source, problems=[Problem(f"{file}: not readable ({err})", str(file))])
    read = reader(items, *args, source)
    read.problems[:0] = problems
    read.items += len(problems)
    return read


def _langfuse(
    source: LangfuseFeedback, settings: FeedbackSettings, interactions: pd.DataFrame
) -> FeedbackRead:
    return _from_file(
        source.path, f"langfuse:{source.path}", langfuse_feedback, source, source.scale or settings.scale
    )


def _phoenix(source: PhoenixFeedback, settings: FeedbackSettings, interactions: pd.DataFrame) -> FeedbackRead:
    scale = source.scale or settings.scale
    if source.path is not None:
        return _from_file(source.path, f"phoenix_annotations:{source.path}", phoenix_feedback, source, scale)
    name = f"phoenix_annotations:{source.url.rstrip('/')}/{source.project}"
    key = os.environ.get(source.api_key_env)
    spans = sorted({str(s) for s in interactions["span_id"].dropna()})
    try:
        found = read_span_annotations(
            source.url, source.project, spans, {"Authorization": f"Bearer {key}"} if key else {}
        )
    except PhoenixSpansError as err:
        return FeedbackRead(name, problems=[Problem(str(err))])
    return phoenix_feedback(((f"{name} span {a.get('span_id')}", a) for a in found), source, scale, name)


def _field(source: FieldFeedback, settings: FeedbackSettings, interactions: pd.DataFrame) -> FeedbackRead:
    return field_feedback(interactions, source.scale or settings.scale)


@dataclass(frozen=True)
class FeedbackKind:
    """One place feedback is kept: its settings model (one of ``FEEDBACK_SETTINGS``, whose
    ``kind`` names it) and how it is read (given the interactions it may be joined to: a Phoenix
    project is asked about their root spans only)."""

    settings: type[Strict]
    read: Callable[[Any, FeedbackSettings, pd.DataFrame], FeedbackRead]

    @property
    def name(self) -> str:
        return kind_tag(self.settings)


FEEDBACK_KINDS = {
    k.name: k
    for k in (
        FeedbackKind(FieldFeedback, _field),
        FeedbackKind(LangfuseFeedback, _langfuse),
        FeedbackKind(PhoenixFeedback, _phoenix),
    )
}


@dataclass(frozen=True)
class Feedback:
    """The interactions with their feedback columns, every record with the interaction it joined
    (null: none), and per source what was read, joined, left out and could not be read."""

    interactions: pd.DataFrame
    records: pd.DataFrame
    sources: list[dict[str, Any]]
    problems: list[Problem]


def read_feedback(settings: FeedbackSettings, interactions: pd.DataFrame) -> Feedback:
    """Every feedback source read and joined to ``interactions`` (by interaction, span, trace or
    session), one feedback per interaction as ``settings.keep`` says."""
    reads = [FEEDBACK_KINDS[s.kind].read(s, settings, interactions) for s in settings.sources]
    records = pd.DataFrame([r for read in reads for r in read.records], columns=RECORD_COLUMNS)
    joined = join_records(records, interactions, settings.session_key)
    counts = []
    for read in reads:
        mine = joined[joined["source"] == read.source]
        unjoined = mine[mine["interaction_id"].isna()]
        counts.append(
            {
                "source": read.source,
                "records": read.items,
                "read": len(read.records),
                "joined": len(read.records) - len(unjoined),
                "joined_to_none": len(unjoined),
                "interactions": int(mine["interaction_id"].nunique()),
                "left_out": dict(read.left_out),
                "unreadable": len(read.problems),
            }
        )
    frame = with_feedback(interactions, per_interaction(joined, settings.keep))
    return Feedback(frame, joined, counts, [p for read in reads for p in read.problems])


def feedback_problems(settings: FeedbackSettings | None) -> list[str]:
    """What can be known before reading: export files that do not exist (a mistake, said before
    anything is read, as a missing log folder is)."""
    if settings is None:
        return []
    return [
        f"production feedback source {s.kind}: {s.path} does not exist (export it there, or fix its path)"
        for s in settings.sources
        if getattr(s, "path", None) and not Path(s.path).exists()
    ]
