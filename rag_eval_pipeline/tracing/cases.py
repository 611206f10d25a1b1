"""One trace per case and answer model, built from the stored tables (pure: no OpenTelemetry).

A case's trace is a root span (the case: question, answer model, run, index, prompt, case set,
and every metric of every judge as attributes), a retrieval span (ids, titles and scores in rank
order), the answer model's LLM span and one span per judge that called a model. Attribute names follow three
conventions at once, each read by a different backend: OpenTelemetry's GenAI semantic conventions
(``gen_ai.*``), OpenInference (``openinference.span.kind``, ``input.value``, ``llm.token_count.*``,
``retrieval.documents.*``: Phoenix renders LLM, retriever and evaluation spans from them) and
Langfuse's (``langfuse.observation.type``, ``langfuse.trace.*``). Cached results are traced too,
marked ``rag_eval.cached``: every materialization can be seen.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rag_eval_pipeline.metrics.schema import TOKEN_COLUMNS, metric_columns, per_answer

AttributeValue = str | bool | int | float | list[str] | list[float] | list[int]


@dataclass(frozen=True)
class SpanSpec:
    """One span to emit: its name, attributes, duration and children (in order)."""

    name: str
    attributes: dict[str, AttributeValue]
    duration_s: float = 0.0
    children: tuple[SpanSpec, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class TraceContext:
    """What every case of one materialization shares."""

    answer_model: str
    provider: str
    model_id: str
    run_id: str
    index_version: str
    case_set: str
    prompt_version: str
    judge_models: dict[str, tuple[str, str]] = field(default_factory=dict)  # judge id -> provider, model
    extra: dict[str, str] = field(default_factory=dict)
    agent: bool = False  # the team's agent answered: an AGENT span, its contexts the retriever's

    def event_attributes(self) -> dict[str, str]:
        """The provenance every evaluation event of this materialization carries (the names
        the case spans use)."""
        return {
            "rag_eval.answer_model": self.answer_model,
            "rag_eval.dagster_run_id": self.run_id,
            "rag_eval.case_set": self.case_set,
            "rag_eval.index_version": self.index_version,
            "gen_ai.request.model": self.model_id,
        }

    def as_metadata(self) -> dict[str, str]:
        """The provenance an experiment records (the names the case spans use, unprefixed)."""
        return {
            "answer_model": self.answer_model,
            "provider": self.provider,
            "model_id": self.model_id,
            "dagster_run_id": self.run_id,
            "index_version": self.index_version,
            "prompt_version": self.prompt_version,
            "case_set": self.case_set,
        }


def _clean(attributes: Mapping[str, Any]) -> dict[str, AttributeValue]:
    """OpenTelemetry takes scalars and homogeneous lists; None and NaN are left out."""
    out: dict[str, AttributeValue] = {}
    for key, value in attributes.items():
        if value is None or (isinstance(value, float) and pd.isna(value)):
            continue
        if hasattr(value, "item") and not isinstance(value, list | str):  # numpy scalars
            value = value.item()
        if isinstance(value, list | tuple):
            value = [v.item() if hasattr(v, "item") else v for v in value]
        out[key] = value
    return out


def _tokens(row: Mapping[str, Any]) -> dict[str, Any]:
    """Token counts in both conventions, cost, and the cache's share where there was one."""
    cache_read = int(row.get("cache_read_tokens") or 0)
    cache_write = int(row.get("cache_write_tokens") or 0)
    prompt = int(row.get("input_tokens") or 0) + cache_read + cache_write
    completion = int(row.get("output_tokens") or 0)
    tokens = {
        "gen_ai.usage.input_tokens": prompt,
        "gen_ai.usage.output_tokens": completion,
        "llm.token_count.prompt": prompt,
        "llm.token_count.completion": completion,
        "llm.token_count.total": prompt + completion,
        "rag_eval.cost_usd": row.get("cost_usd"),
    }
    if cache_read or cache_write:  # left out at 0: every attribute costs encoding time
        tokens["llm.token_count.prompt_details.cache_read"] = cache_read
        tokens["llm.token_count.prompt_details.cache_write"] = cache_write
    return tokens


def retrieval_span(answer: Mapping[str, Any]) -> SpanSpec:
    attributes: dict[str, Any] = {
        "openinference.span.kind": "RETRIEVER",
        "langfuse.observation.type": "retriever",
        "input.value": answer["question"],
        "rag_eval.retrieval.mode": answer.get("retrieval_mode"),
        "rag_eval.retrieval.top_k": answer.get("top_k"),
        "rag_eval.retrieval.titles": list(answer["retrieved_titles"]),  # ids, scores: in the documents
    }
    for n, (pid, title, score, text) in enumerate(
        zip(
            answer["retrieved_ids"],
            answer["retrieved_titles"],
            answer["retrieved_scores"],
            answer["retrieved_passages"],
        )
    ):
        prefix = f"retrieval.documents.{n}.document"
        attributes[f"{prefix}.id"] = str(pid)
        attributes[f"{prefix}.score"] = None if score is None else float(score)  # an agent's: none
        attributes[f"{prefix}.content"] = str(text)
        attributes[f"{prefix}.metadata"] = json.dumps({"title": str(title)})
    images = answer.get("images")
    if images is not None and not isinstance(images, float) and len(images):  # ids, never bytes
        attributes["rag_eval.retrieval.images"] = [str(i) for i in images]
    return SpanSpec("retrieval", _clean(attributes))


def answer_span(answer: Mapping[str, Any], context: TraceContext) -> SpanSpec:
    failed = answer["status"] != "ok"
    attributes = {
        # the team's agent is a whole chain of its own; one of our models is one LLM call
        "openinference.span.kind": "AGENT" if context.agent else "LLM",
        "langfuse.observation.type": "agent" if context.agent else "generation",
        "gen_ai.operation.name": "chat",
        "gen_ai.system": context.provider,
        "gen_ai.request.model": context.model_id,
        "gen_ai.response.model": answer.get("model_id"),
        "llm.model_name": answer.get("model_id") or context.model_id,
        "llm.provider": context.provider,
        "input.value": answer["question"],
        "output.value": None if failed else answer["answer"],
        "rag_eval.prompt_version": answer.get("prompt_version"),
        "rag_eval.cached": bool(answer.get("from_cache", False)),
        # an answer model that called no LLM (offline ones) has no usage to report
        **(_tokens(answer) if _called(answer) else {}),
    }
    return SpanSpec(
        "answer",
        _clean(attributes),
        float(answer.get("latency_s") or 0.0),
        error=str(answer.get("error")) if failed else None,
    )


def _called(row: Mapping[str, Any]) -> bool:
    return any(row.get(column) for column in TOKEN_COLUMNS)


def judge_span(
    score: Mapping[str, Any], metrics: list[str], model: tuple[str, str] | None = None
) -> SpanSpec:
    values = {m: score[m] for m in metrics if m in score and not pd.isna(score[m])}
    failed = score["status"] != "ok"
    attributes = {
        "openinference.span.kind": "EVALUATOR",
        "langfuse.observation.type": "evaluator",
        "rag_eval.judge.id": score["judge_id"],
        "rag_eval.judge.kind": score.get("judge_kind"),
        "rag_eval.judge.status": score["status"],
        "rag_eval.prompt_version": score.get("prompt_version"),
        "rag_eval.diagnosis": score.get("diagnosis") if isinstance(score.get("diagnosis"), str) else None,
        "output.value": json.dumps(values),
        "rag_eval.rationales": score.get("rationales") if isinstance(score.get("rationales"), str) else None,
        **{f"rag_eval.score.{m}": float(v) for m, v in values.items()},
        # a judge that called no model (the reference metrics) has no usage to report
        **(_tokens(score) if _called(score) else {}),
    }
    if model is not None:
        provider, model_id = model
        attributes.update(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.system": provider,
                "gen_ai.request.model": model_id,
                "llm.provider": provider,
                "llm.model_name": model_id,
            }
        )
    return SpanSpec(
        f"judge {score['judge_id']}", _clean(attributes), error=score.get("error") if failed else None
    )


def build_case_traces(
    candidate_answers: pd.DataFrame, judge_scores: pd.DataFrame, context: TraceContext
) -> list[SpanSpec]:
    """One root span per answered case, with its retrieval span, answer span and a span per LLM
    judge; every metric of every judge (the reference metrics too) on the root
    (``rag_eval.score.<judge>.<metric>``), where dashboards and Langfuse's scores read them."""
    judge_scores = per_answer(judge_scores)  # a judge asked K times: its median, and its flips
    metrics = metric_columns(judge_scores)
    by_case: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in judge_scores.to_dict(orient="records"):  # one pass: no frame per case
        by_case.setdefault((row["qid"], int(row.get("repeat", 0) or 0)), []).append(row)
    traces = []
    for answer in candidate_answers.to_dict(orient="records"):
        rows = by_case.get((answer["qid"], int(answer.get("repeat", 0) or 0)), [])
        # a span per judge that called a model; the reference metrics (no model) are on the root
        judges = tuple(
            judge_span(row, metrics, context.judge_models[row["judge_id"]])
            for row in rows
            if row["judge_id"] in context.judge_models
        )
        scores = {
            f"rag_eval.score.{row['judge_id']}.{m}": float(row[m])
            for row in rows
            for m in metrics
            if m in row and not pd.isna(row[m])
        }
        diagnoses = sorted({row["diagnosis"] for row in rows if isinstance(row.get("diagnosis"), str)})
        root = {
            "openinference.span.kind": "CHAIN",
            "langfuse.observation.type": "span",
            "langfuse.trace.name": f"case {answer['qid']}",
            "langfuse.trace.tags": [context.answer_model],
            "langfuse.trace.metadata.answer_model": context.answer_model,
            "langfuse.session.id": context.run_id,
            "session.id": context.run_id,
            "input.value": answer["question"],
            "output.value": answer["answer"] if answer["status"] == "ok" else None,
            "rag_eval.qid": answer["qid"],
            "rag_eval.answer_model": context.answer_model,
            "rag_eval.dagster_run_id": context.run_id,
            "rag_eval.index_version": context.index_version,
            "rag_eval.prompt_version": context.prompt_version,
            "rag_eval.case_set": context.case_set,
            "rag_eval.status": answer["status"],
            "rag_eval.cached": bool(answer.get("from_cache", False)),
            "rag_eval.diagnosis": diagnoses,
            **scores,
            **{f"rag_eval.{k}": v for k, v in context.extra.items()},
        }
        children = (retrieval_span(answer), answer_span(answer, context), *judges)
        traces.append(
            SpanSpec(
                f"case {answer['qid']}",
                _clean(root),
                sum(c.duration_s for c in children),
                children,
                error=str(answer.get("error")) if answer["status"] != "ok" else None,
            )
        )
    return traces
