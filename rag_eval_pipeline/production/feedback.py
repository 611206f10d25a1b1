"""Users' feedback as evidence: thumbs, stars, numbers and labels from wherever a team keeps
them (a field of its logs and spans, Langfuse scores, Phoenix span annotations) read on [0, 1]
by a declared scale, joined to the interactions by trace, span or session, and set against the
judges. Feedback is a self-selected sample: the numbers carry that warning wherever shown."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from rag_eval_pipeline.data.rows import RowFileError, read_rows
from rag_eval_pipeline.health.topics import cluster_questions
from rag_eval_pipeline.health.traffic import production_questions
from rag_eval_pipeline.metrics.gates import failed_gates_line
from rag_eval_pipeline.metrics.settings import Gate
from rag_eval_pipeline.metrics.statistics import (
    clopper_pearson_interval,
    cohen_kappa,
    weighted_kappa_interval,
)
from rag_eval_pipeline.production.interactions import Problem, json_documents
from rag_eval_pipeline.production.scoring import day_gates
from rag_eval_pipeline.production.settings import (
    THUMBS_DOWN_RATE,
    USERS,
    FeedbackScale,
    LangfuseFeedback,
    PhoenixFeedback,
)

SELECTION_WARNING = (
    "feedback comes from the users who chose to give it (unhappy users answer more often): its mean "
    "is not the traffic's quality, and agreement with it is agreement on that self-selected part. "
    "Corrected estimates use only randomly drawn human labels (the review queue), never feedback."
)
PASS_AT = 0.5  # a judge's score at or above it passes (as in metrics.agreement)
FEEDBACK_METRICS = ("feedback_rate", "user_feedback", THUMBS_DOWN_RATE)
RECORD_COLUMNS = [
    "source",
    "name",
    "value",
    "score",
    "comment",
    "at",
    "interaction_id",
    "trace_id",
    "span_id",
    "session_id",
    "location",
]
FEEDBACK_COLUMNS = ["feedback", "feedback_count", "feedback_comment", "feedback_at"]
VALUE_KEYS = ("score", "value", "rating", "stars", "thumbs", "thumb", "vote", "label")  # an object's value
COMMENT_KEYS = ("comment", "text", "note", "explanation")


class FeedbackError(ValueError):
    """A feedback record that cannot be read: what is wrong with it, in one line."""


def _absent(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def _label_key(text: str) -> str:
    return "_".join(text.strip().lower().replace("-", " ").split())


def feedback_score(value: Any, scale: FeedbackScale, data_type: str | None = None) -> float:
    """A feedback value on [0, 1]: a boolean 1 / 0, a number from the scale's range, a label
    through its labels; anything else a FeedbackError naming the value and the remedy."""
    kind = (data_type or "").upper()
    if _absent(value):
        raise FeedbackError("no value")
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if kind == "BOOLEAN":
        if str(value).strip().lower() in ("1", "1.0", "true"):
            return 1.0
        if str(value).strip().lower() in ("0", "0.0", "false"):
            return 0.0
        raise FeedbackError(f"{value!r} is not a boolean")
    if isinstance(value, str):
        labels = {_label_key(k): v for k, v in scale.labels.items()}
        key = _label_key(value)
        if key in labels:
            return float(labels[key])
        if kind == "CATEGORICAL":
            raise FeedbackError(
                f"label {value!r} is not on the scale (add it to production.feedback.scale.labels)"
            )
        try:
            value = float(value)
        except ValueError:
            raise FeedbackError(
                f"label {value!r} is not on the scale (add it to production.feedback.scale.labels)"
            ) from None
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise FeedbackError(f"{value!r} is not a feedback value")
    low, high = scale.range
    if not low <= value <= high:
        raise FeedbackError(
            f"{value:g} is outside the declared range [{low:g}, {high:g}] (production.feedback.scale.range)"
        )
    return (float(value) - low) / (high - low)


def _key(value: Any) -> str | None:
    """A trace, span or session id as joined: hex and UUIDs match whatever their case or dashes."""
    return None if _absent(value) else str(value).strip().lower().replace("-", "")


def _stamp(value: Any) -> pd.Timestamp:
    if _absent(value):
        return pd.NaT
    try:
        if isinstance(value, int | float):  # epoch seconds, or milliseconds
            return pd.Timestamp(value / 1000 if value > 1e11 else value, unit="s", tz="UTC")
        stamp = pd.Timestamp(value)
    except (ValueError, TypeError, OverflowError):
        return pd.NaT
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _record(source: str, location: str, **values: Any) -> dict[str, Any]:
    row = dict.fromkeys(RECORD_COLUMNS)
    row.update(values, source=source, location=location)
    row["at"] = _stamp(row["at"])
    for name in ("trace_id", "span_id", "session_id"):
        row[name] = _key(row[name])
    row["comment"] = None if _absent(row["comment"]) else str(row["comment"])
    return row


@dataclass
class FeedbackRead:
    """What a feedback source gave: its records (each with its score on [0, 1]), the problems of
    those it could not read (named by file and line), and the records it was told to leave out
    (other score names, evaluators' scores), counted by why."""

    source: str
    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)
    items: int = 0  # the records the file or service held, read or not

    def leave_out(self, why: str) -> None:
        self.left_out[why] = self.left_out.get(why, 0) + 1

    def add(
        self,
        location: str,
        what: str,
        value: Any,
        scale: FeedbackScale,
        data_type: str | None,
        join_ids: str,
        **values: Any,
    ) -> None:
        """A record of ``value`` read on the scale, joined by the ``trace_id``, ``span_id`` or
        ``session_id`` among ``values``; else a problem naming ``what`` it is: no id to join it
        by (the source calls its ids ``join_ids``) or a value the scale cannot read."""
        try:
            if all(values.get(key) is None for key in ("trace_id", "span_id", "session_id")):
                raise FeedbackError(f"no {join_ids} to join it by")
            score = feedback_score(value, scale, data_type)
        except FeedbackError as err:
            self.problems.append(Problem(f"{location} ({what}): {err}", None))
            return
        self.records.append(_record(self.source, location, value=str(value), score=score, **values))


def field_feedback(interactions: pd.DataFrame, scale: FeedbackScale) -> FeedbackRead:
    """The interactions' own ``user_feedback`` values: a value, or a JSON object with one
    (``score``, ``value``, ``rating``, ``thumbs``, ``label``) and a comment."""
    read = FeedbackRead("field:user_feedback")
    for row in interactions.to_dict(orient="records"):
        raw = row.get("user_feedback")
        if _absent(raw):
            continue
        read.items += 1
        value, comment = raw, None
        if isinstance(raw, str) and raw.strip()[:1] == "{":
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                value = next((parsed[k] for k in VALUE_KEYS if not _absent(parsed.get(k))), None)
                comment = next((parsed[k] for k in COMMENT_KEYS if not _absent(parsed.get(k))), None)
        try:
            score = feedback_score(value, scale)
        except FeedbackError as err:
            read.problems.append(Problem(f"{row['location']}: user_feedback: {err}", row.get("file")))
            continue
        read.records.append(
            _record(
                read.source,
                str(row["location"]),
                name="user_feedback",
                value=str(value),
                score=score,
                comment=comment,
                at=row["timestamp"],
                interaction_id=row["interaction_id"],
            )
        )
    return read


def export_items(path: Path) -> tuple[list[tuple[str, Any]], list[Problem]]:
    """The records of an export file, each with where it is: a CSV file's rows by its header
    (each at the line it starts on: ``data/rows.read_rows``), else JSON: a list, ``{"data":
    [...]}`` (Phoenix's and Langfuse's API pages), one object, or one record (or list) per line."""
    if path.suffix.lower() == ".csv":
        try:
            rows, unread = read_rows(path, "a record")
        except RowFileError as err:
            return [], [Problem(problem, str(path)) for problem in err.problems]
        return [(f"{path}, {where}", row) for where, row in rows], [
            Problem(f"{path}, {problem}", str(path)) for problem in unread
        ]
    documents, problems = json_documents(path, path.read_text(encoding="utf-8"))
    items: list[tuple[str, Any]] = []
    for where, document in documents:
        if isinstance(document, dict) and isinstance(document.get("data"), list):
            document = document["data"]
        if isinstance(document, list):
            items += [(f"{where}, record {n}", item) for n, item in enumerate(document, start=1)]
        else:
            items.append((where, document))
    return items, problems


def _first_of(item: Mapping[str, Any], *names: str) -> Any:
    return next((item[n] for n in names if not _absent(item.get(n))), None)


def _named_objects(
    read: FeedbackRead, items: Iterable[tuple[str, Any]], names: Sequence[str] | None, noun: str
) -> Iterator[tuple[str, dict[str, Any], Any]]:
    """The items that are objects of a wanted name (any, where ``names`` is None), each with where
    it is and its name; every item counted in ``read``, one not an object a problem, one of
    another name left out."""
    for location, item in items:
        read.items += 1
        if not isinstance(item, dict):
            read.problems.append(Problem(f"{location}: not {noun} (an object)", None))
            continue
        name = item.get("name")
        if names is not None and name not in names:
            read.leave_out(f"name {name!r}")
            continue
        yield location, item, name


def langfuse_feedback(
    items: Iterable[tuple[str, Any]], settings: LangfuseFeedback, scale: FeedbackScale, source: str
) -> FeedbackRead:
    """Langfuse score records: ``value`` (``stringValue`` for a CATEGORICAL score's label),
    ``dataType``, ``traceId`` / ``observationId`` / ``sessionId``, ``comment``, ``timestamp``;
    scores of other names (``names``) and of evaluators (``exclude_sources``) are left out."""
    read = FeedbackRead(source)
    excluded = {s.upper() for s in settings.exclude_sources}
    for location, item, name in _named_objects(read, items, settings.names, "a score record"):
        if str(item.get("source") or "").upper() in excluded:
            read.leave_out(f"source {item.get('source')}")
            continue
        data_type = str(_first_of(item, "dataType", "data_type") or "").upper()
        value = item.get("value")
        if data_type == "CATEGORICAL" or (isinstance(value, str) and not data_type):
            value = _first_of(item, "stringValue", "string_value", "value")
        trace, observation = (
            _first_of(item, "traceId", "trace_id"),
            _first_of(item, "observationId", "observation_id"),
        )
        session = _first_of(item, "sessionId", "session_id")
        read.add(
            location,
            f"score {name!r}",
            value,
            scale,
            data_type,
            "traceId, observationId or sessionId",
            name=name,
            comment=item.get("comment"),
            at=_first_of(item, "timestamp", "createdAt", "created_at", "updatedAt"),
            trace_id=trace,
            span_id=observation,
            session_id=session,
        )
    return read


def phoenix_feedback(
    items: Iterable[tuple[str, Any]], settings: PhoenixFeedback, scale: FeedbackScale, source: str
) -> FeedbackRead:
    """Phoenix span annotations (``span_id``, ``name``, ``annotator_kind``, ``result``: ``score``,
    ``label``, ``explanation``): the score where there is one, else the label; annotations of
    other names or annotator kinds (LLM, CODE: not users) are left out."""
    read = FeedbackRead(source)
    kinds = {k.upper() for k in settings.annotator_kinds}
    for location, item, name in _named_objects(read, items, settings.names, "an annotation"):
        kind = str(item.get("annotator_kind") or "HUMAN").upper()  # Phoenix's clients' default
        if kind not in kinds:
            read.leave_out(f"annotator_kind {kind}")
            continue
        result = item.get("result") if isinstance(item.get("result"), dict) else None
        if result is None:  # flattened (a dataframe's export: result.score), or the fields themselves
            flat = {k.split(".", 1)[1]: v for k, v in item.items() if k.startswith("result.")}
            result = flat or item
        value = _first_of(result, "score", "label")
        metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
        span = _first_of(item, "span_id", "spanId", "context.span_id")
        trace = _first_of(item, "trace_id", "traceId", "context.trace_id")
        read.add(
            location,
            f"annotation {name!r}",
            value,
            scale,
            None,
            "span_id or trace_id",
            name=name,
            comment=_first_of(result, "explanation") or _first_of(metadata, *COMMENT_KEYS),
            at=_first_of(item, "updated_at", "created_at"),
            trace_id=trace,
            span_id=span,
        )
    return read


def _sessions(interactions: pd.DataFrame, session_key: str) -> dict[str, list[str]]:
    sessions: dict[str, list[str]] = {}
    for interaction_id, metadata in zip(interactions["interaction_id"], interactions["metadata"]):
        try:
            session = json.loads(metadata).get(session_key) if isinstance(metadata, str) else None
        except (ValueError, AttributeError):
            session = None
        if (key := _key(session)) is not None:
            sessions.setdefault(key, []).append(interaction_id)
    return sessions


def join_records(records: pd.DataFrame, interactions: pd.DataFrame, session_key: str) -> pd.DataFrame:
    """Each record with the interactions it belongs to (one row per pair; none: ``interaction_id``
    null): the interaction itself (a field), else its root span (an observation, an annotated
    span), else its trace, else every interaction of its session (session-level feedback)."""
    known = set(interactions["interaction_id"])
    spans = {_key(s): i for s, i in zip(interactions["span_id"], interactions["interaction_id"]) if _key(s)}
    traces = {_key(t): i for t, i in zip(interactions["trace_id"], interactions["interaction_id"]) if _key(t)}
    sessions = _sessions(interactions, session_key)
    rows = []
    for record in records.to_dict(orient="records"):
        own = record.get("interaction_id")
        if not _absent(own):
            targets = [own] if own in known else []
        elif record["span_id"] in spans:
            targets = [spans[record["span_id"]]]
        elif record["trace_id"] in traces:
            targets = [traces[record["trace_id"]]]
        else:
            targets = sessions.get(record["session_id"], []) if record["session_id"] else []
        rows += [{**record, "interaction_id": t} for t in targets] or [{**record, "interaction_id": None}]
    return pd.DataFrame(rows, columns=RECORD_COLUMNS)


def per_interaction(joined: pd.DataFrame, keep: str) -> pd.DataFrame:
    """One feedback per interaction: the latest record's (``keep: latest``; records without a
    time count as earliest, ties go to the last read) or the mean of all (``keep: all``), with
    how many there were and their comments."""
    rows = joined[joined["interaction_id"].notna()].copy()
    if rows.empty:
        return pd.DataFrame(columns=["interaction_id", *FEEDBACK_COLUMNS])
    rows["order"] = range(len(rows))
    rows["at_key"] = rows["at"].map(lambda t: -math.inf if pd.isna(t) else float(t.value))
    rows = rows.sort_values(["interaction_id", "at_key", "order"], kind="stable")
    groups = rows.groupby("interaction_id", sort=False)  # one pass, whatever the count
    latest = groups.tail(1).set_index("interaction_id")
    comments = rows[rows["comment"].notna()].groupby("interaction_id", sort=False)["comment"].agg(" | ".join)
    out = pd.DataFrame(
        {
            "feedback": latest["score"].astype(float) if keep == "latest" else groups["score"].mean(),
            "feedback_count": groups.size(),
            "feedback_comment": latest["comment"] if keep == "latest" else comments,
            "feedback_at": latest["at"],
        }
    )
    out["feedback_comment"] = (
        out["feedback_comment"].astype(object).where(out["feedback_comment"].notna(), None)
    )
    return out.rename_axis("interaction_id").reset_index()[["interaction_id", *FEEDBACK_COLUMNS]]


def with_feedback(interactions: pd.DataFrame, feedback: pd.DataFrame) -> pd.DataFrame:
    """The interactions with their feedback columns (NaN / 0 / None where a user gave none)."""
    frame = interactions.drop(columns=[c for c in FEEDBACK_COLUMNS if c in interactions])
    frame = frame.merge(feedback, on="interaction_id", how="left")
    frame["feedback_count"] = frame["feedback_count"].fillna(0).astype(int)
    frame["feedback"] = frame["feedback"].astype(float)
    frame["feedback_comment"] = (
        frame["feedback_comment"].astype(object).where(frame["feedback_comment"].notna(), None)
    )
    return frame


def feedback_counts(frame: pd.DataFrame, negative_below: float) -> dict[str, int]:
    """How many interactions, how many with feedback, how many of those a thumbs-down."""
    given = frame["feedback"].notna() if "feedback" in frame else pd.Series(False, index=frame.index)
    negative = int((frame.loc[given, "feedback"] < negative_below).sum()) if given.any() else 0
    return {"interactions": len(frame), "with_feedback": int(given.sum()), "negative": negative}


def _share(hits: int, n: int) -> tuple[float, float, float]:
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    low, high = clopper_pearson_interval(hits / n, n)
    return hits / n, float(low), float(high)


def feedback_rows(frame: pd.DataFrame, negative_below: float, by: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The feedback rate (of all interactions), the mean feedback and the thumbs-down rate (of
    those with feedback), each with its exact 95% interval, overall and per value of ``by``
    (``agent_version``): rows of a day's summary, judge ``users``."""
    groups: list[tuple[str, pd.DataFrame]] = [("all", frame)]
    for column in by:
        groups += [(f"{column}={value}", rows) for value, rows in frame.groupby(column, sort=True)]
    out = []
    for group, rows in groups:
        given = rows["feedback"].dropna()
        mean = float(given.mean()) if len(given) else float("nan")
        low, high = clopper_pearson_interval(mean, len(given)) if len(given) else (float("nan"), float("nan"))
        figures = {
            "feedback_rate": (*_share(len(given), len(rows)), len(rows)),
            "user_feedback": (mean, float(low), float(high), len(given)),
            "thumbs_down_rate": (*_share(int((given < negative_below).sum()), len(given)), len(given)),
        }
        for metric, (value, ci_low, ci_high, n) in figures.items():
            out.append(
                {
                    "judge_id": USERS,
                    "metric": metric,
                    "group": group,
                    "mean": value,
                    "ci_low": ci_low,
                    "ci_high": ci_high,
                    "n": n,
                    "n_cases": len(rows),
                    "ci_method": "clopper_pearson",
                    "note": "self-selected: not the traffic's quality" if metric == "user_feedback" else "",
                }
            )
    return out


@dataclass(frozen=True)
class JudgePairs:
    """One judge's metric beside the users' feedback on the interactions that have both."""

    judge_id: str
    metric: str
    frame: pd.DataFrame  # interaction_id, question, judge, feedback, comment


def judge_pairs(
    scores: pd.DataFrame, feedback: pd.DataFrame, metrics: Mapping[str, Sequence[str]]
) -> list[JudgePairs]:
    """Each judge's declared metrics (``metrics``: judge -> metrics) paired with the feedback of
    the same interactions (``feedback``: interaction_id, feedback, question, feedback_comment)."""
    given = feedback[feedback["feedback"].notna()]
    out = []
    scored = scores[scores["status"] == "ok"] if "status" in scores else scores
    for judge_id, rows in scored.groupby("judge_id", sort=True):
        for metric in metrics.get(str(judge_id), ()):
            if metric not in rows:
                continue
            judged = rows[["qid", metric]].dropna().rename(columns={"qid": "interaction_id", metric: "judge"})
            judged = judged.groupby("interaction_id", as_index=False)["judge"].mean()  # repeats: their mean
            both = judged.merge(given, on="interaction_id")
            if len(both):
                columns = ["interaction_id", "question", "judge", "feedback", "feedback_comment"]
                out.append(JudgePairs(str(judge_id), metric, both[[c for c in columns if c in both]]))
    return out


def agreement_of(pairs: JudgePairs, negative_below: float) -> dict[str, Any]:
    """A judge against users on one metric: the share of interactions where the judge's pass
    (score >= 0.5) is the user's thumbs-up (feedback >= ``negative_below``), Cohen's kappa on
    those two labels with its bootstrap 95% interval, and the two rates (the judge passes what
    users liked, fails what they disliked). Kappa is NaN where either side gives one label."""
    judge = (pairs.frame["judge"].to_numpy(dtype=float) >= PASS_AT).astype(float)
    users = (pairs.frame["feedback"].to_numpy(dtype=float) >= negative_below).astype(float)
    n = len(judge)
    defined = len(set(judge)) > 1 and len(set(users)) > 1
    kappa = cohen_kappa(users, judge) if defined else float("nan")
    low, high = weighted_kappa_interval(users, judge, (0.0, 1.0)) if defined else (float("nan"),) * 2
    liked, disliked = users == 1, users == 0
    note = ""
    if not defined and n:
        note = (
            "kappa undefined: "
            + " and ".join(
                side for side, values in (("users", users), ("the judge", judge)) if len(set(values)) < 2
            )
            + " give one label on every interaction"
        )
    return {
        "judge": pairs.judge_id,
        "metric": pairs.metric,
        "n": n,
        "agreement": float((judge == users).mean()) if n else float("nan"),
        "kappa": kappa,
        "ci_low": low,
        "ci_high": high,
        "passes_liked": _share(int(judge[liked].sum()), int(liked.sum()))[0],
        "fails_disliked": _share(int((1 - judge[disliked]).sum()), int(disliked.sum()))[0],
        "worse_than_chance": bool(not math.isnan(kappa) and kappa < 0),
        "note": note,
    }


def feedback_agreement(pairs: Sequence[JudgePairs], negative_below: float) -> pd.DataFrame:
    columns = [
        "judge",
        "metric",
        "n",
        "agreement",
        "kappa",
        "ci_low",
        "ci_high",
        "passes_liked",
        "fails_disliked",
        "worse_than_chance",
        "note",
    ]
    return pd.DataFrame([agreement_of(p, negative_below) for p in pairs], columns=columns)


def chance_lines(agreement: pd.DataFrame) -> list[str]:
    """One line per judge that agrees with users worse than chance (kappa below 0), saying
    whether its interval excludes chance."""
    lines = []
    for row in agreement[agreement["worse_than_chance"]].itertuples():
        sure = "" if row.ci_high < 0 else " (the interval reaches 0: it may be chance)"
        lines.append(
            f"judge {row.judge} agrees with users on {row.metric} worse than chance: kappa {row.kappa:.2f} "
            f"[{row.ci_low:.2f}, {row.ci_high:.2f}] on {row.n} interactions{sure}"
        )
    return lines


def disagreements(pairs: Sequence[JudgePairs], negative_below: float, worst: int = 5) -> pd.DataFrame:
    """The interactions where a judge and the user are furthest apart, per judge and metric: the
    judge passing a thumbs-down or failing a thumbs-up first, then by |judge - feedback|."""
    frames = []
    for p in pairs:
        frame = p.frame.assign(judge_id=p.judge_id, metric=p.metric)
        frame["gap"] = (frame["judge"] - frame["feedback"]).abs()
        frame["disagree"] = (frame["judge"] >= PASS_AT) != (frame["feedback"] >= negative_below)
        frames.append(
            frame[frame["gap"] > 0]
            .sort_values(["disagree", "gap", "interaction_id"], ascending=[False, False, True])
            .head(worst)
        )
    columns = ["judge_id", "metric", "interaction_id", "question", "judge", "feedback", "comment", "gap"]
    if not frames:
        return pd.DataFrame(columns=columns)
    out = pd.concat(frames, ignore_index=True).rename(columns={"feedback_comment": "comment"})
    return out.reindex(columns=columns)


TOPIC_FEEDBACK_COLUMNS = [
    "topic",
    "terms",
    "size",
    "with_feedback",
    "feedback_rate",
    "user_feedback",
    "negative",
    THUMBS_DOWN_RATE,
    "ci_low",
    "ci_high",
    "representatives",
]


def feedback_by_topic(
    frame: pd.DataFrame, negative_below: float, max_topics: int = 8, seed: int = 0, shown: int = 3
) -> pd.DataFrame:
    """The interactions grouped into topics as knowledge-base health groups questions (its
    analysis, parameters and stable ids, the interactions keyed ``production:<id>`` as its
    traffic comparison keys them), each with its size, how many gave feedback, the feedback
    rate and mean, the thumbs-down count and rate with its exact 95% interval (of those with
    feedback) and its questions closest to the centre; ranked by thumbs-down count
    (``TOPIC_FEEDBACK_COLUMNS``)."""
    rows = frame[frame["question"].fillna("").astype(str).str.strip() != ""]
    questions = production_questions(
        [{"id": i, "question": q} for i, q in zip(rows["interaction_id"], rows["question"])]
    )
    if questions.empty:
        return pd.DataFrame(columns=TOPIC_FEEDBACK_COLUMNS)
    model = cluster_questions(
        questions["question"].tolist(),
        questions["language"].tolist(),
        [f"production:{i}" for i in questions["id"]],
        max_topics,
        seed,
    )
    grouped = questions.assign(
        topic=model.assignments,
        centrality=model.centrality,
        feedback=rows["feedback"].astype(float).to_numpy() if "feedback" in rows else float("nan"),
    )
    out = []
    for topic, group in grouped.groupby("topic", sort=True):
        given = group["feedback"].dropna()
        negative = int((given < negative_below).sum())
        rate, low, high = _share(negative, len(given))
        closest = group.sort_values(["centrality", "id"], ascending=[False, True])["question"].head(shown)
        out.append(
            {
                "topic": topic,
                "terms": model.terms[str(topic)],
                "size": len(group),
                "with_feedback": len(given),
                "feedback_rate": len(given) / len(group),
                "user_feedback": float(given.mean()) if len(given) else float("nan"),
                "negative": negative,
                THUMBS_DOWN_RATE: rate,
                "ci_low": low,
                "ci_high": high,
                "representatives": closest.tolist(),
            }
        )
    table = pd.DataFrame(out, columns=TOPIC_FEEDBACK_COLUMNS)
    return table.sort_values(["negative", "topic"], ascending=[False, True]).reset_index(drop=True)


def topic_lines(by_topic: pd.DataFrame, width: int = 60) -> pd.DataFrame:
    """The per-topic table as shown in a table cell: terms joined, the first representative
    question cut to ``width``."""
    return by_topic.drop(columns=["representatives"]).assign(
        terms=by_topic["terms"].map(", ".join),
        question=by_topic["representatives"].map(lambda q: q[0][:width] if q else ""),
    )


@dataclass(frozen=True)
class FeedbackOverview:
    """What the users said and how the judges agree with them: counts, the rate and mean per day,
    agent version and topic, agreement per judge and metric, the worst disagreements, and the lines
    for judges worse than chance; shown with ``SELECTION_WARNING`` wherever it is shown."""

    counts: dict[str, int]
    by_day: pd.DataFrame
    agreement: pd.DataFrame
    disagreements: pd.DataFrame
    chance: list[str]
    by_topic: pd.DataFrame  # TOPIC_FEEDBACK_COLUMNS: where users are unhappy, by what they ask


def feedback_by_day(frame: pd.DataFrame, negative_below: float) -> pd.DataFrame:
    """Per day, overall and per agent version: interactions, feedback rate, mean, thumbs-down."""
    rows = []
    for day, of_day in frame.groupby("day", sort=True):
        for row in feedback_rows(of_day, negative_below, ("agent_version",)):
            group = row["group"]
            version = "all" if group == "all" else group.split("=", 1)[1]
            rows.append({"day": day, "agent_version": version, **row})
    if not rows:
        return pd.DataFrame(columns=["day", "agent_version", "interactions", *FEEDBACK_METRICS])
    long = pd.DataFrame(rows)
    wide = long.pivot_table(index=["day", "agent_version"], columns="metric", values="mean", dropna=False)
    counts = long[long["metric"] == "feedback_rate"].set_index(["day", "agent_version"])["n"]
    given = long[long["metric"] == "user_feedback"].set_index(["day", "agent_version"])["n"]
    wide = wide.assign(interactions=counts, with_feedback=given).reset_index()
    columns = ["day", "agent_version", "interactions", "with_feedback", *FEEDBACK_METRICS]
    return wide[columns].sort_values(["day", "agent_version"]).reset_index(drop=True)


def feedback_overview(
    frame: pd.DataFrame,
    scores: pd.DataFrame | None,
    metrics: Mapping[str, Sequence[str]],
    negative_below: float,
    worst: int = 5,
) -> FeedbackOverview:
    """The overview of ``frame`` (interactions with feedback columns) against ``scores`` (the
    judges' scores of the sampled ones, where any were scored)."""
    pairs = judge_pairs(scores, frame, metrics) if scores is not None and len(scores) else []
    agreement = feedback_agreement(pairs, negative_below)
    return FeedbackOverview(
        feedback_counts(frame, negative_below),
        feedback_by_day(frame, negative_below),
        agreement,
        disagreements(pairs, negative_below, worst),
        chance_lines(agreement),
        feedback_by_topic(frame, negative_below),
    )


def failing_feedback_days(
    frame: pd.DataFrame, negative_below: float, gates: Sequence[Gate], min_cases: int
) -> dict[str, str]:
    """day -> the failing line, for each day the users' own gates (the thumbs-down limit) fail,
    held as the day's check holds them."""
    mine = [g for g in gates if g.judge_id == USERS]
    over = {}
    for day, rows in frame.groupby("day", sort=True):
        summary = pd.DataFrame(feedback_rows(rows, negative_below, ("agent_version",)))
        line = failed_gates_line(day_gates(summary, mine, min_cases))
        if line:
            over[str(day)] = line
    return over
