"""Generating a judgement list from documents, every case checked: written by the generator from
its planned passages, then held to its checks in order, cheapest first, so a case that fails a
free check costs no validation call. A case that fails is kept in the table with its reason
(``rejected``), never in the list quietly.

The checks: the answer has the form its type asks (short: an entity, a number, yes or no, a
phrase; "unknown" for an unanswerable question and only for it); the question is not a
near-duplicate of an earlier case; the judge, answering from the source passages, agrees with the
reference; answering from memory alone, it does not (a question answered without context tests
nothing); for a case over two passages, neither passage alone lets it agree; for an unanswerable
question, the judge answering from what the knowledge base retrieves for it abstains."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rag_eval_pipeline.answering.chat import first_line
from rag_eval_pipeline.generation.plan import Plan, Planned
from rag_eval_pipeline.generation.prompts import (
    GeneratedCase,
    hits,
    render_answer_from,
    render_closed_book,
    render_generation,
)
from rag_eval_pipeline.generation.spec import CaseType, GenerationSpec
from rag_eval_pipeline.judges.engine import InvalidJudgeOutput, JudgeCaller, parse_tool_output
from rag_eval_pipeline.language.analysis import analyzer
from rag_eval_pipeline.limits.in_flight import run_bounded
from rag_eval_pipeline.llm.client import FatalLLMError, LLMCallError, LLMClient, LLMRequest, Usage
from rag_eval_pipeline.llm.pricing import ModelPrice, cost_usd
from rag_eval_pipeline.metrics.reference import content_tokens, correctness, is_abstention, normalize_answer
from rag_eval_pipeline.retrieval.base import SearchHit

AGREES = 0.5  # the judge's answer agrees with the reference: correctness at least this
RETRIEVED_FOR_UNANSWERABLE = 4
GENERATED_COLUMNS = [
    "case_id",
    "type",
    "question",
    "answer",
    "bridge",
    "source_ids",
    "source_titles",
    "language",
    "kept",
    "reason",
    "checks",
    "generator",
    "judge",
    "prompt_version",
    "input_tokens",
    "output_tokens",
    "cost_usd",
]
Retrieve = Callable[[str, int], Sequence[SearchHit]]
Embed = Callable[[list[str]], np.ndarray]


@dataclass
class _Case:
    planned: Planned
    generated: GeneratedCase | None = None
    reason: str | None = None
    checks: dict[str, str] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0

    @property
    def language(self) -> str:
        """The case's language: its first source passage's (what it is written and checked in)."""
        return self.planned.sources[0].language if self.planned.sources else "en"

    def add(self, usage: Usage, cost: float | None) -> None:
        """Tokens and dollars of calls made for this case (a cost unknown stays unknown)."""
        self.input_tokens += usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        self.output_tokens += usage.output_tokens
        self.cost = None if cost is None or self.cost is None else self.cost + cost

    def reject(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason


@dataclass(frozen=True)
class Models:
    """The generator and the judge, each a client with its model id and prices."""

    generator: LLMClient
    generator_id: str
    generator_prices: Mapping[str, ModelPrice]
    judge: LLMClient
    judge_id: str
    judge_prices: Mapping[str, ModelPrice]


def answer_words(answer: str, language: str = "en") -> int:
    """An answer's length in its language's words (a Chinese answer is not one long word)."""
    return (
        len(analyzer(language).words(answer)) if language != "en" else len(normalize_answer(answer).split())
    )


def _near(question: str, others: Sequence[tuple[str, str]], bar: float, language: str = "en") -> str | None:
    """The id of an earlier question sharing at least ``bar`` of their content words."""
    words = set(content_tokens(question, language))
    for case_id, other in others:
        theirs = set(content_tokens(other, language))
        if words and theirs and len(words & theirs) / len(words | theirs) >= bar:
            return case_id
    return None


# what a case written from a passage that gave the generator orders looks like: instructions,
# markup, a link; each is refused (a question asked of the team's agent must be a question)
INSTRUCTION_LIKE = re.compile(
    r"\b(ignore|disregard|forget|override)\b.{0,40}\b(instruction|prompt|rule|above|previous|prior)s?\b"
    r"|\bsystem prompt\b|\byou are now\b|\bas an ai\b|\bnew instructions?\b",
    re.IGNORECASE,
)
MARKUP = re.compile(r"<\s*/?\s*[a-z][a-z0-9]*\b[^>]*>|```|javascript:|\bon[a-z]+\s*=", re.IGNORECASE)
URL = re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE)


def _evidence(case: _Case) -> str:
    """What the case's sources say up to the first order one gives: a passage that gives orders
    is no evidence for what it orders, nor for what follows them."""
    return " ".join(
        f"{source.title} {INSTRUCTION_LIKE.split(source.passage, maxsplit=1)[0]}"
        for source in case.planned.sources
    )


def _injection_problem(case: _Case) -> str | None:
    """Instruction-like text, markup, or a link its sources do not hold, in a question or answer."""
    generated = case.generated
    assert generated is not None
    written = f"{generated.question}\n{generated.answer}\n{generated.bridge}"
    if INSTRUCTION_LIKE.search(written):
        return "instruction-like text in the case (a source passage may be giving orders)"
    if MARKUP.search(written):
        return "markup in the case (tags or code: a question is plain text)"
    sources = _evidence(case)
    for link in URL.findall(written):
        if link.rstrip(".,;)") not in sources:
            return f"a link its sources do not hold ({link[:60]})"
    return None


def _answer_in_sources(case: _Case) -> str | None:
    """The reference answer stands in a cited passage (its title or text), or is a yes/no of a
    comparison: an answer planted by a passage's own instructions, or made up, is neither."""
    generated, case_type = case.generated, case.planned.case_type
    assert generated is not None
    language = case.language
    answer = normalize_answer(generated.answer, language)
    yes_no = ("yes", "no") if language == "en" else ("yes", "no", *_yes_no(language))
    if case_type is CaseType.UNANSWERABLE or (case_type is CaseType.COMPARISON and answer in yes_no):
        return None
    cited = normalize_answer(_evidence(case), language)
    if f" {answer} " not in f" {cited} ":
        return f"the reference answer is not in its cited passages ({generated.answer[:60]!r})"
    return None


def _yes_no(language: str) -> tuple[str, ...]:
    lexicon = analyzer(language).lexicon
    return tuple(lexicon.yes | lexicon.no) if lexicon else ()


def _form_problem(case: _Case, spec: GenerationSpec) -> str | None:
    generated, case_type = case.generated, case.planned.case_type
    assert generated is not None
    injected = _injection_problem(case)
    if injected:
        return injected
    language = case.language
    if not normalize_answer(generated.answer, language):
        return f"no reference answer ({generated.answer!r})"
    if case_type is CaseType.UNANSWERABLE:
        return (
            None
            if is_abstention(generated.answer, language=language)
            else f"an unanswerable question with an answer ({generated.answer!r})"
        )
    if is_abstention(generated.answer, language=language):
        return f"a {case_type.value} question whose reference answer abstains ({generated.answer!r})"
    words = answer_words(generated.answer, language)
    if words > spec.max_answer_words:
        return f"reference answer too long ({words} words; at most {spec.max_answer_words})"
    return _answer_in_sources(case)


async def _generate(case: _Case, models: Models) -> None:
    caller = JudgeCaller(models.generator, models.generator_id, models.generator_prices)
    try:
        case.generated = await caller.ask(
            render_generation(models.generator_id, case.planned.case_type, case.planned.sources),
            lambda r: parse_tool_output(r, GeneratedCase),
        )
    except FatalLLMError:
        raise
    except (InvalidJudgeOutput, LLMCallError) as err:
        case.reject(f"the generator gave no valid case ({type(err).__name__}: {str(err)[:120]})")
    case.add(caller.usage, caller.cost)


def _quoted(answer: str, limit: int = 80) -> str:
    """A judge's answer as a reason quotes it: whole when short."""
    return repr(answer if len(answer) <= limit else answer[: limit - 1] + "…")


async def _judge_says(case: _Case, models: Models, request: LLMRequest) -> str:
    response = await models.judge.complete(request)
    case.add(response.usage, cost_usd(models.judge_id, response.usage, models.judge_prices, response.batch))
    return first_line(response.text)


async def _validate(case: _Case, models: Models, retrieve: Retrieve | None) -> None:
    generated, planned = case.generated, case.planned
    assert generated is not None
    question, truth, judge, language = generated.question, generated.answer, models.judge_id, case.language
    try:
        if planned.case_type is CaseType.UNANSWERABLE:
            found = (
                tuple(retrieve(question, RETRIEVED_FOR_UNANSWERABLE)) if retrieve else hits(planned.sources)
            )
            said = await _judge_says(case, models, render_answer_from(judge, question, found, language))
            case.checks["from the knowledge base"] = said
            if not is_abstention(said, language=language):
                where = found[0].title if found else "its passage"
                case.reject(
                    f"answerable from the knowledge base (the judge answered {_quoted(said)} from {where!r})"
                )
            return
        said = await _judge_says(
            case, models, render_answer_from(judge, question, hits(planned.sources), language)
        )
        case.checks["from its sources"] = said
        if not _agrees(said, truth, language):
            case.reject(f"not answerable from its source passages (the judge answered {_quoted(said)})")
            return
        said = await _judge_says(case, models, render_closed_book(judge, question, language))
        case.checks["without context"] = said
        if _agrees(said, truth, language):
            case.reject(f"answerable without context (the judge answered {_quoted(said)} from memory)")
            return
        if len(planned.sources) > 1:
            for source in planned.sources:
                said = await _judge_says(
                    case, models, render_answer_from(judge, question, hits([source]), language)
                )
                case.checks[f"from {source.title!r} alone"] = said
                if _agrees(said, truth, language):
                    case.reject(f"single-hop: answerable from {source.title!r} alone")
                    return
    except FatalLLMError:
        raise
    except LLMCallError as err:
        case.reject(f"a validation call failed ({str(err)[:120]})")


def _agrees(said: str, truth: str, language: str) -> bool:
    """Whether the judge's answer says the truth; one the offline rule cannot judge (absent in
    a language without a lexicon) does not agree, as before it could be absent."""
    return (correctness(said, truth, language=language) or 0.0) >= AGREES


def _duplicates(cases: Sequence[_Case], spec: GenerationSpec, embed: Embed | None) -> None:
    """Each case against the earlier ones still standing: by embedding similarity when there are
    vectors, by shared content words otherwise."""
    standing = [c for c in cases if c.reason is None and c.generated is not None]
    vectors = None
    if embed is not None and standing:
        vectors = embed([c.generated.question for c in standing])  # type: ignore[union-attr]
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    kept: list[int] = []
    for i, case in enumerate(standing):
        question = case.generated.question  # type: ignore[union-attr]
        if vectors is not None and kept:
            similarity = vectors[kept] @ vectors[i]
            best = int(np.argmax(similarity))
            if similarity[best] >= spec.duplicate_cosine:
                twin = standing[kept[best]].planned.case_id
                case.reject(f"near-duplicate of {twin} (cosine {similarity[best]:.2f})")
                continue
        other = _near(
            question,
            [(standing[k].planned.case_id, standing[k].generated.question) for k in kept],  # type: ignore[union-attr]
            spec.duplicate_overlap,
            case.language,
        )
        if other is not None:
            case.reject(f"near-duplicate of {other}")
            continue
        kept.append(i)


def generate_cases(
    plan: Plan,
    spec: GenerationSpec,
    models: Models,
    retrieve: Retrieve | None = None,
    embed: Embed | None = None,
    concurrency: int = 8,
    on_progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Every planned case written and checked: a row each, ``kept`` or with its ``reason``."""
    cases = [_Case(p) for p in plan.cases]
    run_bounded(cases, lambda c: _generate(c, models), concurrency, on_progress)
    for case in cases:
        if case.reason is None:
            problem = _form_problem(case, spec)
            if problem:
                case.reject(problem)
    _duplicates(cases, spec, embed)
    standing = [c for c in cases if c.reason is None]
    run_bounded(standing, lambda c: _validate(c, models, retrieve), concurrency, on_progress)
    return pd.DataFrame(
        [
            {
                "case_id": c.planned.case_id,
                "type": c.planned.case_type.value,
                "question": c.generated.question if c.generated else None,
                "answer": c.generated.answer if c.generated else None,
                "bridge": c.generated.bridge if c.generated else None,
                "source_ids": [s.passage_id for s in c.planned.sources],
                "source_titles": [s.title for s in c.planned.sources],
                "language": c.language,
                "kept": c.reason is None,
                "reason": c.reason,
                "checks": json.dumps(c.checks, ensure_ascii=False),
                "generator": models.generator_id,
                "judge": models.judge_id,
                "prompt_version": spec.prompt_version,
                "input_tokens": c.input_tokens,
                "output_tokens": c.output_tokens,
                "cost_usd": c.cost,
            }
            for c in cases
        ],
        columns=GENERATED_COLUMNS,
    )
