"""Stage 2: every judge scores every answered case; a row per case per judge."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from rag_eval_pipeline.common.secrets import NO_SECRETS, Redactor
from rag_eval_pipeline.data.knowledge_base import REFERENCE_PENDING
from rag_eval_pipeline.data.visual_labels import VISUAL_LABEL_COLUMNS
from rag_eval_pipeline.judges.base import BatchableJudge, Judge, JudgeCase, JudgeOutcome
from rag_eval_pipeline.judges.claims import unsupported_claims
from rag_eval_pipeline.judges.grounding import case_labels, case_visual
from rag_eval_pipeline.judges.jury import Juror, jury_scores
from rag_eval_pipeline.judges.vision import IMAGE_CONTRADICTION
from rag_eval_pipeline.language.table import ENGLISH
from rag_eval_pipeline.limits.in_flight import run_bounded
from rag_eval_pipeline.llm.budget import BudgetExhaustedError
from rag_eval_pipeline.llm.client import FatalLLMError, LLMRequest
from rag_eval_pipeline.metrics.diagnosis import AnswerSource, diagnose
from rag_eval_pipeline.metrics.reference import DEFAULT_ABSTENTION, AbstentionPolicy
from rag_eval_pipeline.metrics.schema import (
    ANSWER_METRICS,
    ITEM_VERDICTS,
    SCORE_ID_COLUMNS,
    TOKEN_COLUMNS,
    case_key,
)
from rag_eval_pipeline.retrieval.base import LANGUAGE_COLUMN, SearchHit


def join_cases(candidate_answers: pd.DataFrame, judgement_list: pd.DataFrame) -> pd.DataFrame:
    """Candidate answers with the ground truth, gold labels, type, level and answerability of
    their question (a judgement list without ``answerable`` holds answerable questions only);
    a question whose reference answer is still to be written has none (None)."""
    columns = ["qid", "answer", "type", "level", "gold_titles", "gold_facts"]
    columns += [
        c for c in ("tags", "answerable", LANGUAGE_COLUMN, *VISUAL_LABEL_COLUMNS) if c in judgement_list
    ]
    labels = judgement_list[columns].rename(columns={"answer": "ground_truth"})
    if REFERENCE_PENDING in judgement_list:
        pending = judgement_list[REFERENCE_PENDING].fillna(False).astype(bool).to_numpy()
        labels["ground_truth"] = labels["ground_truth"].astype(object).where(~pending, None)
    # an agent asked several times has a row per repeat, each joined to its question's labels
    joined = candidate_answers.merge(labels, on="qid", how="left", validate="many_to_one")
    return joined if "answerable" in joined else joined.assign(answerable=True)


def judge_case(case: Mapping[str, Any]) -> JudgeCase:
    """A joined case row as what every judge sees."""
    hits = tuple(
        SearchHit(pid, title, text, float("nan") if score is None else float(score))  # an agent's: none
        for pid, title, text, score in zip(
            case["retrieved_ids"],
            case["retrieved_titles"],
            case["retrieved_passages"],
            case["retrieved_scores"],
        )
    )
    tags = case.get("tags")
    truth = case.get("ground_truth")
    return JudgeCase(
        case["question"],
        None if truth is None or (isinstance(truth, float) and pd.isna(truth)) else str(truth),
        case["answer"],
        hits,
        qid=case["qid"],
        gold_titles=tuple(case["gold_titles"]),
        gold_facts=tuple((f["title"], int(f["sent_id"])) for f in case["gold_facts"]),
        tags=() if tags is None else tuple(tags),
        answerable=bool(case.get("answerable", True)),
        contexts_known=bool(case.get("contexts_known", True)),
        cited_titles=_listed(case.get("cited_titles")),
        language=case_language(case),
        gold_visual=case_labels(case),
        visual=case_visual(case),
    )


def case_language(case: Mapping[str, Any]) -> str:
    """A joined case's language code (English for a list stored before languages)."""
    code = case.get(LANGUAGE_COLUMN)
    return ENGLISH if code is None or (isinstance(code, float) and pd.isna(code)) else str(code)


def _listed(value: Any) -> tuple[str, ...] | None:
    """A stored list column (a list, or parquet's array) as a tuple; None (or NaN) as None."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    return tuple(str(v) for v in value)


def answer_outcome(answered: bool, abstained: bool, answerable: bool) -> dict[str, float]:
    """What the answer did, as 1/0 shares (absent where it does not apply): the call failed
    (``error_rate``, over every case); and, over the cases that got a reply, it answered; it
    answered a question the documents cannot answer; it abstained on one they can. A failure is
    not a decline: a failed call has no answer rate, and counts in the error rate only."""
    nan = float("nan")
    if not answered:
        return {"error_rate": 1.0, "answer_rate": nan, "false_answer_rate": nan, "over_abstention_rate": nan}
    return {
        "error_rate": 0.0,
        "answer_rate": float(not abstained),
        "false_answer_rate": float(not abstained) if not answerable else nan,
        "over_abstention_rate": float(abstained) if answerable else nan,
    }


OVER_BUDGET = "over_budget"  # a case the budget left unjudged


async def _score_one(
    judge: Judge,
    case: Mapping[str, Any],
    judge_repeat: int,
    abstention: AbstentionPolicy,
    redact: Redactor = NO_SECRETS,
) -> dict[str, Any]:
    answered = case["status"] == "ok"
    abstained = answered and abstention.matches(str(case["answer"]), case_language(case))
    answerable = bool(case.get("answerable", True))
    row: dict[str, Any] = {
        "qid": case["qid"],
        "repeat": int(case.get("repeat", 0) or 0),
        "judge_repeat": judge_repeat,
        "judge_id": judge.judge_id,
        "judge_kind": judge.kind,
        "answer_config": case["answer_config"],
        "type": case["type"],
        "level": case["level"],
        "tags": list(case["tags"]) if "tags" in case and case["tags"] is not None else [],
        "language": case_language(case),
        "prompt_version": judge.prompt_version,
        "answerable": answerable,
        "abstained": abstained,
        **answer_outcome(answered, abstained, answerable),
    }
    if not answered:
        row.update(status="answer_failed", error=case["error"])
        return row
    judged = replace(judge_case(case), judge_repeat=judge_repeat)
    try:
        outcome: JudgeOutcome = await judge.judge(judged)
    except FatalLLMError:
        raise  # a bad key or unknown judge model: every case would fail the same way
    except BudgetExhaustedError as err:  # not called: unscored, never 0
        row.update(status=OVER_BUDGET, error=str(err))
        return row
    except Exception as err:  # one bad case must not sink the run; LLM judges return their errors
        row.update(status="judge_error", error=redact(f"{type(err).__name__}: {err}"))
        return row
    row.update(outcome.usage.to_dict(), cost_usd=outcome.cost_usd)
    if outcome.error is not None:
        row.update(status="judge_error", error=redact(outcome.error))
    else:
        known = _known(outcome.scores, bool(case.get("contexts_known", True)))
        if judged.ground_truth is None:  # no reference: what needs one is absent, whatever came back
            known = {m: (v if m in judge.reference_free_metrics else None) for m, v in known.items()}
        row.update(known, status="ok", error=None)
    row["rationales"] = json.dumps(outcome.rationales) if outcome.rationales else None
    row["notes"] = "; ".join(outcome.notes) or None
    if outcome.item_verdicts:
        row[ITEM_VERDICTS] = json.dumps(outcome.item_verdicts, ensure_ascii=False)
    return row


# what needs the contexts an answer was given from: absent (never 0) for an agent that returns none
CONTEXT_METRICS = (
    "faithfulness",
    "faithfulness_lexical",
    "context_relevance",
    "context_precision",
    "context_recall",
)


def _known(scores: Mapping[str, float | None], contexts_known: bool) -> dict[str, float | None]:
    if contexts_known:
        return dict(scores)
    return {m: (None if m in CONTEXT_METRICS else v) for m, v in scores.items()}


def score_cases(
    cases: pd.DataFrame,
    judges: Sequence[Judge],
    on_progress: Callable[[int, int], None] | None = None,
    concurrency: int | None = 8,
    prefill: Callable[[list[LLMRequest]], None] | None = None,
    source: AnswerSource = AnswerSource.GENERATIVE,
    abstention: AbstentionPolicy = DEFAULT_ABSTENTION,
    redact: Redactor = NO_SECRETS,
    repeats: Mapping[str, int] | None = None,
    jurors: Sequence[Juror] = (),
    jury: str = "median",
) -> pd.DataFrame:
    """A row per case per judge with every metric the judges declare (absent metrics are NaN);
    a judge asked K times per case (``repeats``: judge id -> K, 1 where not given) has K rows
    per case, ``judge_repeat`` 0..K-1, each an independent call cached apart; with ``jurors``
    the rows of the judge ``jury`` follow (``judges.jury``: their median, no call).

    A case whose answer failed is kept with status ``answer_failed`` and no scores; a judge that
    fails on a case (an API error after retries, or invalid output twice) gives status
    ``judge_error``. Both are counted as failed, never scored 0. At most ``concurrency`` cases
    are judged at once; None judges every case at once and leaves the bound to the LLM client's
    calls in flight, so a judge that makes several dependent calls per case (RAGAS-style) keeps
    every slot busy instead of finishing its last cases' chains alone. ``source`` says where the
    answer model's answers come from (it decides between the diagnoses parametric_answer and
    correct_from_non_gold); ``abstention`` which answers decline to answer. Every row also
    says what the answer did (``ANSWER_METRICS``): an abstention leaves faithfulness's
    denominator, and the answer rate says how often that happened. ``redact`` masks the run's
    secrets in a judge's reason.
    """
    metric_names = list(dict.fromkeys([*(m for judge in judges for m in judge.metrics), *ANSWER_METRICS]))
    records = cases.to_dict(orient="records")
    asked = {judge.judge_id: (repeats or {}).get(judge.judge_id, 1) for judge in judges}
    work = [(judge, case, r) for judge in judges for case in records for r in range(asked[judge.judge_id])]
    if prefill is not None:  # the first call of each case of judges that can say it in advance
        prefill(
            [
                replace(judge.first_request(judge_case(case)), sample=r)
                for judge, case, r in work
                if isinstance(judge, BatchableJudge) and case["status"] == "ok"
            ]
        )
    bound = concurrency if concurrency is not None else max(1, len(work))
    rows = run_bounded(work, lambda item: _score_one(*item, abstention, redact), bound, on_progress)
    frame = pd.DataFrame(rows, columns=SCORE_ID_COLUMNS + metric_names)
    frame[metric_names] = frame[metric_names].astype("float64")
    frame[TOKEN_COLUMNS] = frame[TOKEN_COLUMNS].fillna(0).astype("int64")
    frame["cost_usd"] = frame["cost_usd"].astype("float64")
    if jurors:
        combined = jury_scores(frame, jurors, jury).reindex(columns=frame.columns)
        frame = pd.concat([frame, combined.astype(frame.dtypes.to_dict())], ignore_index=True)
    unsupported = unsupported_claims(frame)  # where a claim judge read the case, its claims decide
    blind = _without_contexts(cases)
    frame["diagnosis"] = [
        diagnose_row(
            row, source, unsupported.get(case_key(row)), (str(row["qid"]), int(row["repeat"])) not in blind
        )
        for row in frame.to_dict(orient="records")
    ]
    return frame


def _without_contexts(cases: pd.DataFrame) -> set[tuple[str, int]]:
    """(qid, repeat) of the answers given without the contexts they came from (an agent that
    returns none): no diagnosis of retrieval is made for them."""
    if "contexts_known" not in cases:
        return set()
    unknown = cases[~cases["contexts_known"].fillna(True).astype(bool)]
    repeats = unknown["repeat"] if "repeat" in unknown else [0] * len(unknown)
    return {(str(q), int(r)) for q, r in zip(unknown["qid"], repeats)}


def diagnose_row(
    row: Mapping[str, Any],
    source: AnswerSource = AnswerSource.GENERATIVE,
    unsupported: Sequence[str] | None = None,
    contexts_known: bool = True,
) -> str | None:
    """The judge's own faithfulness where it read the claims, the lexical proxy otherwise (then
    a low value is ``unsupported_words``, never ``hallucination``); where a claim judge checked
    the answer's claims (``unsupported``: those no context states), hallucination is one of them.
    An answer given without its contexts gets no diagnosis of retrieval (``contexts_known``)."""
    if row.get("image_text_consistency") == 0.0:  # a vision judge saw the images contradict it
        return IMAGE_CONTRADICTION
    faithfulness, judged = row.get("faithfulness"), True
    if faithfulness is None or pd.isna(faithfulness):
        faithfulness, judged = row.get("faithfulness_lexical"), False
    return diagnose(
        row.get("correctness"),
        faithfulness,
        row.get("context_relevance"),
        source,
        answerable=bool(row.get("answerable", True)),
        abstained=bool(row.get("abstained", False)),
        faithfulness_judged=judged,
        unsupported_claims=None if unsupported is None else len(unsupported),
        contexts_known=contexts_known,
    )
