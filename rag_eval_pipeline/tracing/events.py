"""Scores as OpenTelemetry ``gen_ai.evaluation.result`` events (pure: no OpenTelemetry here).

The GenAI semantic conventions (v1.38 on, now ``open-telemetry/semantic-conventions-genai``) give
a score a standard shape: a log record named ``gen_ai.evaluation.result``, parented to the span
it evaluates, with ``gen_ai.evaluation.name`` (required), ``gen_ai.evaluation.score.value`` and
``gen_ai.evaluation.score.label`` (where they apply), ``gen_ai.evaluation.explanation``,
``gen_ai.response.id`` (the evaluated reply's own id, where it had one) and ``error.type`` for an
evaluation that failed. One event here is one case, judge and metric: its name
``<judge>.<metric>`` (the metric alone for the reference judge), the judge's reason as
explanation, a failed judgement's ``error.type`` and no score (never 0), and the case's
provenance as ``rag_eval.*`` attributes."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rag_eval_pipeline.metrics.directions import lower_is_better
from rag_eval_pipeline.metrics.schema import ANSWER_METRICS, ANSWER_VARIABILITY, metric_columns, per_answer
from rag_eval_pipeline.metrics.settings import OVERALL, Gate
from rag_eval_pipeline.metrics.stability import is_flip_column

EVENT_NAME = "gen_ai.evaluation.result"
REFERENCE_JUDGE = "reference"
DIAGNOSIS_METRIC = "diagnosis"
EXPLANATION_CHARS = 2000  # a reason longer than this is cut: an event is a record, not a report

AttributeValue = str | bool | int | float
BESIDE_JUDGES = frozenset((*ANSWER_METRICS, ANSWER_VARIABILITY))


@dataclass(frozen=True)
class SpanRef:
    """The span an event belongs to, as lower-case hex ids (a trace's 32, a span's 16); a trace
    known without its span (an agent that returns only its trace id) has ``span_id`` None: the
    event is then in that trace, under no span."""

    trace_id: str
    span_id: str | None = None

    @classmethod
    def of(cls, trace_id: Any, span_id: Any = None) -> SpanRef | None:
        """A reference when the trace id is well-formed (32 hex digits, not all zero), its span
        when that is well-formed too; else None (an interaction logged without its trace)."""
        trace, span = str(trace_id or "").strip().lower(), str(span_id or "").strip().lower()
        if not _valid(trace, 32):
            return None
        return cls(trace, span if _valid(span, 16) else None)

    @classmethod
    def of_reply(cls, value: Any) -> SpanRef | None:
        """What an agent's reply says of its trace: a W3C ``traceparent``
        (``00-<trace id>-<span id>-<flags>``), or a trace id alone."""
        text = str(value or "").strip().lower()
        parts = text.split("-")
        if len(parts) == 4 and len(parts[0]) == 2:
            return cls.of(parts[1], parts[2])
        return cls.of(text)


def _valid(text: str, length: int) -> bool:
    return len(text) == length and _hex(text) and int(text, 16) != 0


def _hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


@dataclass(frozen=True)
class EvaluationEvent:
    """One ``gen_ai.evaluation.result`` record: its attributes and the span it is a child of
    (None: no span is known, e.g. a case that was not traced)."""

    attributes: dict[str, AttributeValue]
    parent: SpanRef | None = None

    @property
    def name(self) -> str:
        return str(self.attributes["gen_ai.evaluation.name"])


def evaluation_name(judge_id: str, metric: str) -> str:
    """``<judge>.<metric>``; the reference judge's metrics (EM, F1, retrieval recall...) by the
    metric alone, as the standard names they are."""
    return metric if judge_id == REFERENCE_JUDGE else f"{judge_id}.{metric}"


def _rationales(value: Any) -> dict[str, str]:
    if not isinstance(value, str) or not value.startswith("{"):
        return {}
    try:
        parsed = json.loads(value)
    except ValueError:
        return {}
    return (
        {str(k): str(v) for k, v in parsed.items() if isinstance(v, str)} if isinstance(parsed, dict) else {}
    )


def error_type(row: Mapping[str, Any]) -> str:
    """A failed evaluation's ``error.type``: the error class its reason starts with (``LLMCallError:
    ...``), else the row's status (``judge_error``, ``answer_failed``)."""
    error = row.get("error")
    if isinstance(error, str):
        head = error.split(":", 1)[0].strip()
        if head and head.replace(".", "").replace("_", "").isalnum() and " " not in head:
            return head
    return str(row.get("status") or "error")


def _label(gates: Sequence[Gate], judge_id: str, metric: str, score: float) -> str | None:
    """``pass`` / ``fail`` where an overall threshold holds this judge's metric (lower-better
    metrics pass at or below it), else no label: a score alone says it."""
    for gate in gates:
        if gate.metric == metric and gate.group == OVERALL and gate.judge_id in (None, judge_id):
            passed = score <= gate.threshold if lower_is_better(metric) else score >= gate.threshold
            return "pass" if passed else "fail"
    return None


def evaluation_events(
    judge_scores: pd.DataFrame,
    parents: Mapping[tuple[str, int], SpanRef | None],
    provenance: Mapping[str, AttributeValue],
    declared: Mapping[str, Sequence[str]] | None = None,
    gates: Sequence[Gate] = (),
    redact: Callable[[str], str] = lambda text: text,
    response_ids: Mapping[tuple[str, int], str | None] | None = None,
) -> list[EvaluationEvent]:
    """One event per answer (``(qid, repeat)``), judge and metric, a judge's re-scores collapsed
    to their median; a judge's diagnosis is one more event (``<judge>.diagnosis``, its label).
    A judgement that failed gives an event per metric the judge declares, with ``error.type``
    and no score; a metric absent on a case that was judged (it does not apply) gives none.
    ``parents`` maps each answer to the span it is a child of, ``provenance`` adds the run's
    attributes (model, run, case set), ``redact`` masks secrets in explanations, ``response_ids``
    gives each answer's reply id (``gen_ai.response.id``; an answer without one carries none)."""
    if judge_scores.empty:
        return []
    scores = per_answer(judge_scores)
    # what the answer did (failed, declined) is the same beside every judge: on the case's span,
    # not an evaluation; a judge's flip between re-scores is about the judge, not the answer
    metrics = [m for m in metric_columns(scores) if not is_flip_column(m) and m not in BESIDE_JUDGES]
    seen = {
        str(judge): [m for m in metrics if rows[m].notna().any()]
        for judge, rows in scores.groupby("judge_id")
    }
    events = []
    for row in scores.to_dict(orient="records"):
        judge, qid = str(row["judge_id"]), str(row["qid"])
        repeat = int(row.get("repeat", 0) or 0)
        own = [m for m in (declared or {}).get(judge) or seen.get(judge) or [] if m not in BESIDE_JUDGES]
        base: dict[str, AttributeValue] = {
            **provenance,
            "rag_eval.qid": qid,
            "rag_eval.repeat": repeat,
            "rag_eval.judge.id": judge,
        }
        reply_id = (response_ids or {}).get((qid, repeat))
        if isinstance(reply_id, str) and reply_id:
            base["gen_ai.response.id"] = reply_id
        parent = parents.get((qid, repeat))
        if row.get("status", "ok") != "ok":  # a table without statuses (trajectories) is all judged
            failure = {"error.type": error_type(row)}
            reason = row.get("error")
            if isinstance(reason, str) and reason:
                failure["gen_ai.evaluation.explanation"] = redact(reason)[:EXPLANATION_CHARS]
            for metric in own or [judge]:
                name = judge if metric == judge else evaluation_name(judge, metric)
                events.append(EvaluationEvent({"gen_ai.evaluation.name": name, **base, **failure}, parent))
            continue
        reasons = _rationales(row.get("rationales"))
        for metric in own:
            value = row.get(metric)
            if value is None or pd.isna(value):
                continue
            score = float(value)
            attributes: dict[str, AttributeValue] = {
                "gen_ai.evaluation.name": evaluation_name(judge, metric),
                "gen_ai.evaluation.score.value": score,
                **base,
            }
            label = _label(gates, judge, metric, score)
            if label:
                attributes["gen_ai.evaluation.score.label"] = label
            if reasons.get(metric):
                attributes["gen_ai.evaluation.explanation"] = redact(reasons[metric])[:EXPLANATION_CHARS]
            events.append(EvaluationEvent(attributes, parent))
        diagnosis = row.get("diagnosis")
        if isinstance(diagnosis, str) and diagnosis:
            attributes = {
                "gen_ai.evaluation.name": evaluation_name(judge, DIAGNOSIS_METRIC),
                "gen_ai.evaluation.score.label": diagnosis,
                **base,
            }
            events.append(EvaluationEvent(attributes, parent))
    return events
