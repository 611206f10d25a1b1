"""Stage 2: every judge scores every answered case; a row per case per judge."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from rag_eval_pipeline.judges.base import BatchableJudge, Judge, JudgeCase, JudgeOutcome
from rag_eval_pipeline.llm.client import FatalLLMError, LLMRequest
from rag_eval_pipeline.llm.concurrency import run_bounded
from rag_eval_pipeline.metrics.diagnosis import diagnose
from rag_eval_pipeline.metrics.schema import SCORE_ID_COLUMNS, TOKEN_COLUMNS
from rag_eval_pipeline.retrieval.base import SearchHit


def join_cases(candidate_answers: pd.DataFrame, judgement_list: pd.DataFrame) -> pd.DataFrame:
    """Candidate answers with the ground truth, gold labels, type and level of their question."""
    columns = ["qid", "answer", "type", "level", "gold_titles", "gold_facts"]
    columns += ["tags"] if "tags" in judgement_list else []
    labels = judgement_list[columns].rename(columns={"answer": "ground_truth"})
    return candidate_answers.merge(labels, on="qid", how="left", validate="one_to_one")


def judge_case(case: Mapping[str, Any]) -> JudgeCase:
    """A joined case row as what every judge sees."""
    hits = tuple(
        SearchHit(pid, title, text, float(score))
        for pid, title, text, score in zip(
            case["retrieved_ids"],
            case["retrieved_titles"],
            case["retrieved_passages"],
            case["retrieved_scores"],
        )
    )
    tags = case.get("tags")
    return JudgeCase(
        case["question"],
        case["ground_truth"],
        case["answer"],
        hits,
        qid=case["qid"],
        gold_titles=tuple(case["gold_titles"]),
        gold_facts=tuple((f["title"], int(f["sent_id"])) for f in case["gold_facts"]),
        tags=() if tags is None else tuple(tags),
    )


async def _score_one(judge: Judge, case: Mapping[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "qid": case["qid"],
        "judge_id": judge.judge_id,
        "judge_kind": judge.kind,
        "answer_config": case["answer_config"],
        "type": case["type"],
        "level": case["level"],
        "tags": list(case["tags"]) if "tags" in case and case["tags"] is not None else [],
        "prompt_version": judge.prompt_version,
    }
    if case["status"] != "ok":
        row.update(status="answer_failed", error=case["error"])
        return row
    try:
        outcome: JudgeOutcome = await judge.judge(judge_case(case))
    except FatalLLMError:
        raise  # a bad key or unknown judge model: every case would fail the same way
    except Exception as err:  # one bad case must not sink the run; LLM judges return their errors
        row.update(status="judge_error", error=f"{type(err).__name__}: {err}")
        return row
    row.update(outcome.usage.to_dict(), cost_usd=outcome.cost_usd)
    if outcome.error is not None:
        row.update(status="judge_error", error=outcome.error)
    else:
        row.update(outcome.scores, status="ok", error=None)
    row["rationales"] = json.dumps(outcome.rationales) if outcome.rationales else None
    row["notes"] = "; ".join(outcome.notes) or None
    return row


def score_cases(
    cases: pd.DataFrame,
    judges: Sequence[Judge],
    on_progress: Callable[[int, int], None] | None = None,
    concurrency: int | None = 8,
    prefill: Callable[[list[LLMRequest]], None] | None = None,
    generative: bool = True,
) -> pd.DataFrame:
    """A row per case per judge with every metric the judges declare (absent metrics are NaN).

    A case whose answer failed is kept with status ``answer_failed`` and no scores; a judge that
    fails on a case (an API error after retries, or invalid output twice) gives status
    ``judge_error``. Both are counted as failed, never scored 0. At most ``concurrency`` cases
    are judged at once; None judges every case at once and leaves the bound to the LLM client's
    calls in flight, so a judge that makes several dependent calls per case (RAGAS-style) keeps
    every slot busy instead of finishing its last cases' chains alone. ``generative`` says
    whether the answer model could answer from memory (it decides between the diagnoses
    parametric_answer and correct_from_non_gold).
    """
    metric_names = list(dict.fromkeys(m for judge in judges for m in judge.metrics))
    pairs = [(judge, case) for judge in judges for case in cases.to_dict(orient="records")]
    if prefill is not None:  # the first call of each case of judges that can say it in advance
        prefill(
            [
                judge.first_request(judge_case(case))
                for judge, case in pairs
                if isinstance(judge, BatchableJudge) and case["status"] == "ok"
            ]
        )
    bound = concurrency if concurrency is not None else max(1, len(pairs))
    rows = run_bounded(pairs, lambda pair: _score_one(*pair), bound, on_progress)
    frame = pd.DataFrame(rows, columns=SCORE_ID_COLUMNS + metric_names)
    frame[metric_names] = frame[metric_names].astype("float64")
    frame[TOKEN_COLUMNS] = frame[TOKEN_COLUMNS].fillna(0).astype("int64")
    frame["cost_usd"] = frame["cost_usd"].astype("float64")
    frame["diagnosis"] = [diagnose_row(row, generative) for row in frame.to_dict(orient="records")]
    return frame


def diagnose_row(row: Mapping[str, Any], generative: bool = True) -> str | None:
    """The judge's own faithfulness where it has one, the lexical proxy otherwise."""
    faithfulness = row.get("faithfulness")
    if faithfulness is None or pd.isna(faithfulness):
        faithfulness = row.get("faithfulness_lexical")
    return diagnose(row.get("correctness"), faithfulness, row.get("context_relevance"), generative)
