"""Stage 1: retrieve passages for every question and ask the answer model, case by case."""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

import pandas as pd

from rag_eval_pipeline.answering.agents.contexts import ContextMatcher, Match, MatchedContext, cited_titles
from rag_eval_pipeline.answering.base import (
    AnswerModel,
    AnswerRequest,
    AnswerResult,
    PreparedAnswerModel,
    ReturnedContext,
)
from rag_eval_pipeline.answering.spec import AGENT_RETRIEVAL, AnswerSpec
from rag_eval_pipeline.answering.visual import VISUAL_COLUMNS, gold_visual, visual_columns
from rag_eval_pipeline.common.secrets import NO_SECRETS, Redactor
from rag_eval_pipeline.common.text import nfc
from rag_eval_pipeline.data.knowledge_base import REFERENCE_PENDING
from rag_eval_pipeline.language.table import ENGLISH
from rag_eval_pipeline.limits.in_flight import run_bounded
from rag_eval_pipeline.llm.client import FatalLLMError
from rag_eval_pipeline.retrieval.base import LANGUAGE_COLUMN, SearchHit
from rag_eval_pipeline.retrieval.knowledge_base import Retriever

CANDIDATE_COLUMNS = [
    "qid",
    "repeat",
    "question",
    "answer_config",
    "model_id",
    "prompt_version",
    "answer_spec",
    "retrieval_mode",
    "top_k",
    "retrieved_ids",
    "retrieved_titles",
    "retrieved_scores",
    "retrieved_passages",
    "contexts_known",
    "context_match",
    "citations",
    "cited_titles",
    *VISUAL_COLUMNS,
    "answer",
    "answer_length",
    "latency_s",
    "status",
    "error",
    "input_tokens",
    "output_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "cost_usd",
    "from_cache",
    "agent_trace",  # the agent's own trace of its reply, where its mapping reads one
    "response_id",  # the reply's own id (gen_ai.response.id): an LLM's message id, an agent's mapped id
]


DEFAULT_MAX_ANSWER_CHARS = 20_000
# a case column a security probe sets: the secret the model is told to keep (AnswerRequest.secret)
SECRET_COLUMN = "probe_secret"
RETRIEVAL_CHUNK = 25  # questions retrieved between two progress reports, when they are watched


def capped_answer(answer: str, max_chars: int) -> str:
    """The answer as stored: at most ``max_chars`` characters, a cut one marked with its length."""
    if len(answer) <= max_chars:
        return answer
    return f"{answer[:max_chars]} [...cut: {len(answer):,} characters]"


def one_line_reason(err: BaseException) -> str:
    """What stopped a stage, in the one line the command line says: the error's own words (a
    wrapped cause's first line, not its type's name)."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__


class AllCasesFailedError(RuntimeError):
    """Not one case was answered: the partition failed (its rows would only be dashes)."""


def cases_not_answered(
    judgement_list: pd.DataFrame, spec: AnswerSpec, model_id: str, reason: str
) -> pd.DataFrame:
    """A model that could not answer at all, as a table: every case of the list failed with the
    one ``reason`` (no contexts, no answer, nothing spent). What a model's chain stores so the
    cross-model assets can go on without it, and the summary's check fail with the reason."""
    rows = [
        {
            **_case_row(case, 0, spec, []),
            "contexts_known": False,
            "model_id": model_id,
            "prompt_version": None,
            "answer": None,
            "status": "failed",
            "error": reason,
            "latency_s": float("nan"),
            "cost_usd": None,
            "from_cache": False,
        }
        for case in judgement_list.to_dict(orient="records")
    ]
    return _candidate_frame(rows)


def not_answered_reason(candidate_answers: pd.DataFrame) -> str | None:
    """Why no case of these answers was answered, in one line (None: some case was): the reason
    every case shares (a model that could not run), else how many failed and the first reason."""
    if len(candidate_answers) and (candidate_answers["status"] == "ok").any():
        return None
    if not len(candidate_answers):
        return "no case to answer"
    errors = candidate_answers["error"].fillna("failed").astype(str)
    if errors.nunique() == 1:
        return errors.iloc[0]
    return f"all {len(errors)} cases failed; the first: {errors.iloc[0]}"


ProgressCallback = Callable[[int, int], None]


async def _call(model: AnswerModel, request: AnswerRequest) -> AnswerResult:
    answer_async = getattr(model, "answer_async", None)
    if answer_async is not None and inspect.iscoroutinefunction(answer_async):
        return await answer_async(request)
    return model.answer(request)


def _reference(case: dict[str, Any]) -> str | None:
    """The case's reference answer, None while it is still to be written."""
    return None if case.get(REFERENCE_PENDING) else case["answer"]


def answer_cases(
    judgement_list: pd.DataFrame,
    spec: AnswerSpec,
    model: AnswerModel,
    retrieve: Retriever | None,
    on_progress: ProgressCallback | None = None,
    concurrency: int = 8,
    prefill: Callable[[list[AnswerRequest]], None] | None = None,
    max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
    matcher: ContextMatcher | None = None,
    match_by_text: bool = False,
    redact: Redactor = NO_SECRETS,
    on_retrieved: ProgressCallback | None = None,
) -> pd.DataFrame:
    """One row per question (per repeat, for an agent asked several times): the contexts the
    answer was given from, the answer, its tokens and cost.

    A model of ours answers from the passages ``retrieve`` finds (``context_match`` says
    ``retrieved``); the team's agent retrieves on its own, and the contexts it returned are the
    ones stored and judged, each matched to a knowledge-base passage by ``matcher`` (how, in
    ``context_match``) so reference retrieval metrics can be computed on them. An agent that
    returns no contexts stores none, with ``contexts_known`` false: what needs them is absent.

    Asynchronous models run with at most ``concurrency`` calls in flight. A model error on one
    case is recorded on that case (status ``failed`` with the error), never turned into an
    answer; the other cases go on. An error no retry can fix (FatalLLMError: bad key, unknown
    model, an agent's 401) is raised at once, and a run in which every case failed raises
    AllCasesFailedError: either way the partition fails instead of storing a table of
    failures. ``prefill`` sees every request before any is answered (the Message Batches API
    fills the response cache through it). An answer longer than ``max_answer_chars`` is stored
    cut, its full length in ``answer_length``: a model that answers with megabytes must not
    fill every later report. ``redact`` masks the run's secrets in what is stored (a reason, an
    answer that echoes a header). ``on_retrieved`` hears how many questions have their passages,
    for a retrieval slow enough to be watched (a reranker's).
    """
    agent = model if isinstance(model, PreparedAnswerModel) else None
    work = _work(judgement_list.to_dict(orient="records"), spec, retrieve, agent, on_retrieved)
    if prefill is not None:
        prefill([_request(c, h, r) for c, h, r in work])

    async def one(item: tuple[dict[str, Any], list[SearchHit], int]) -> dict[str, Any]:
        case, hits, repeat = item
        request = _request(case, hits, repeat)
        started = time.perf_counter()
        row = _case_row(case, repeat, spec, hits)
        result: AnswerResult | None = None
        try:
            result = await _call(model, request)
        except FatalLLMError:
            raise  # the same for every case: the partition fails now
        except Exception as err:  # recorded on the case; the run goes on
            row.update(
                model_id=getattr(model, "model_id", model.name),
                prompt_version=None,
                answer=None,
                status="failed",
                error=redact(f"{type(err).__name__}: {err}"),  # where a failure is recorded: no secret in it
                cost_usd=None,
                from_cache=False,
            )
            if spec.is_agent:  # nothing came back: no contexts to judge
                row.update(_agent_contexts(None, None, matcher))
        else:
            row.update(_answered(result, max_answer_chars, redact))
            if spec.is_agent:
                row.update(_agent_contexts(result.contexts, result.citations, matcher))
            if spec.is_agent or result.visual is not None:  # what it says it looked at
                row.update(visual_columns(result.visual))
        row["latency_s"] = _latency(row, result, started)
        return row

    if matcher is not None and match_by_text:  # indexed while the first calls wait
        threading.Thread(target=matcher.warm, daemon=True).start()
    rows = run_bounded(work, one, concurrency, on_progress, agent.aclose if agent is not None else None)
    if rows and all(row["status"] != "ok" for row in rows):
        raise AllCasesFailedError(f"all {len(rows)} cases failed; the first: {rows[0]['error']}")
    return _candidate_frame(rows)


def _latency(row: dict[str, Any], result: AnswerResult | None, started: float) -> float:
    """The case's latency: the call's own where the model measured it, a cached answer's first
    one (NaN when the cache did not record it: absent, never 0 s), else the time asked here."""
    if result is not None and result.latency_s is not None:
        return float(result.latency_s)
    if row.get("from_cache"):
        return float("nan")
    return time.perf_counter() - started


def _work(
    cases: list[dict[str, Any]],
    spec: AnswerSpec,
    retrieve: Retriever | None,
    agent: PreparedAnswerModel | None,
    on_retrieved: ProgressCallback | None = None,
) -> list[tuple[dict[str, Any], list[SearchHit], int]]:
    """Each (case, the passages we retrieved for it, repeat) to answer: every case's passages
    retrieved in one batch (in batches of RETRIEVAL_CHUNK when someone watches the progress);
    an agent asked as many times as it prepared for each question."""
    repeats = dict(agent.prepare([(c["qid"], c["question"]) for c in cases])) if agent is not None else {}
    if retrieve is not None and spec.retrieval_mode is not None:
        chunk = RETRIEVAL_CHUNK if on_retrieved is not None else max(len(cases), 1)
        hits_per_case = []
        for start in range(0, len(cases), chunk):
            part = cases[start : start + chunk]
            hits_per_case += retrieve(
                [c["question"] for c in part], spec.top_k or 0, [c.get(LANGUAGE_COLUMN) for c in part]
            )
            if on_retrieved is not None:
                on_retrieved(len(hits_per_case), len(cases))
    else:
        hits_per_case = [[] for _ in cases]
    return [
        (case, hits, repeat)
        for case, hits in zip(cases, hits_per_case)
        for repeat in range(repeats.get(case["qid"], 1))
    ]


def _request(case: dict[str, Any], hits: list[SearchHit], repeat: int) -> AnswerRequest:
    return AnswerRequest(
        case["qid"],
        case["question"],
        tuple(hits),
        _reference(case),
        repeat,
        case.get(LANGUAGE_COLUMN) or ENGLISH,
        gold_visual(case),
        secret if isinstance(secret := case.get(SECRET_COLUMN), str) else None,
    )


def _case_row(case: dict[str, Any], repeat: int, spec: AnswerSpec, hits: list[SearchHit]) -> dict[str, Any]:
    """What a case's row says before its answer: the question, how it was answered, its passages."""
    return {
        "qid": case["qid"],
        "repeat": repeat,
        "question": case["question"],
        "answer_config": spec.answer_config,
        "answer_spec": spec.fingerprint,
        "retrieval_mode": spec.retrieval_mode.value if spec.retrieval_mode is not None else AGENT_RETRIEVAL,
        "top_k": spec.top_k,
        **_contexts(hits),
    }


def _answered(result: AnswerResult, max_answer_chars: int, redact: Redactor) -> dict[str, Any]:
    """An answer as stored: cut to ``max_answer_chars`` (its full length kept), secrets masked."""
    return {
        "model_id": result.model_id,
        "prompt_version": result.prompt_version,
        "answer": redact(capped_answer(nfc(result.answer), max_answer_chars)),  # any provider, composed
        "answer_length": len(result.answer),
        "status": "ok",
        "error": None,
        "cost_usd": result.cost_usd,
        "from_cache": result.from_cache,
        "agent_trace": result.trace,
        "response_id": result.response_id,
        **result.usage.to_dict(),
    }


def _candidate_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The rows in the asset's columns and types (tokens whole, none of a failed call counted)."""
    frame = pd.DataFrame(rows, columns=CANDIDATE_COLUMNS)
    token_columns = ["input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens"]
    frame[token_columns] = frame[token_columns].fillna(0).astype("int64")
    frame["cost_usd"] = frame["cost_usd"].astype("float64")
    frame["repeat"] = frame["repeat"].astype("int64")
    return frame


def _contexts(hits: list[SearchHit]) -> dict[str, Any]:
    """The passages this project's retriever found, as the case's contexts."""
    return {
        "retrieved_ids": [h.passage_id for h in hits],
        "retrieved_titles": [h.title for h in hits],
        "retrieved_scores": [h.score for h in hits],
        "retrieved_passages": [h.passage for h in hits],
        "contexts_known": True,
        "context_match": [Match.RETRIEVED] * len(hits),
        "citations": None,  # our answer models cite nothing
        "cited_titles": None,
        **visual_columns(None, [h.passage_id for h in hits]),  # the images whose captions were found
    }


def _agent_contexts(
    contexts: tuple[ReturnedContext, ...] | None,
    citations: tuple[int | str, ...] | None,
    matcher: ContextMatcher | None,
) -> dict[str, Any]:
    """The contexts the agent returned, in its order, each with the passage it was matched to
    (ids and titles of the knowledge base where matched; the agent's own where not), and the
    sources it cites with the passage each names."""
    cited = {"citations": None if citations is None else [str(c) for c in citations]}
    if contexts is None:
        return {
            **_contexts([]),
            "contexts_known": False,
            **cited,
            "cited_titles": cited_titles(citations, (), (), matcher),
        }
    matched = (
        matcher.match_all(contexts)
        if matcher is not None
        else [MatchedContext(c.id or "", c.title or "", c.text, Match.UNMATCHED) for c in contexts]
    )
    return {
        **cited,
        "cited_titles": cited_titles(citations, contexts, matched, matcher),
        "retrieved_ids": [m.passage_id for m in matched],
        "retrieved_titles": [m.title for m in matched],
        "retrieved_scores": [float("nan")] * len(matched),  # the agent's ranking, not its scores
        "retrieved_passages": [m.text for m in matched],
        "contexts_known": True,
        "context_match": [m.how for m in matched],
    }
