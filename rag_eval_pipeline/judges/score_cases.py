"""Stage 2: judges score each answered case. The reference judge uses HotpotQA's labels, no LLM."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import pandas as pd

from rag_eval_pipeline.judges.llm import JudgeCase, JudgeOutcome
from rag_eval_pipeline.llm.client import LLMRequest
from rag_eval_pipeline.llm.concurrency import map_bounded
from rag_eval_pipeline.metrics import reference
from rag_eval_pipeline.metrics.diagnosis import diagnose
from rag_eval_pipeline.retrieval.base import SearchHit

REFERENCE_JUDGE_ID = "reference"
REFERENCE_METRICS = (
    "exact_match",
    "f1",
    "correctness",
    "context_relevance",
    "context_precision",
    "context_recall",
    "faithfulness_lexical",
)
SCORE_ID_COLUMNS = [
    "qid",
    "judge_id",
    "judge_kind",
    "answer_config",
    "type",
    "level",
    "tags",
    "status",
    "error",
    "prompt_version",
    "rationales",
    "notes",
    "input_tokens",
    "output_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "cost_usd",
    "diagnosis",
]


class Judge(Protocol):
    """Scores one case. Reference judges are synchronous (``score``), LLM judges asynchronous
    (``judge`` on a JudgeCase); both name their metrics."""

    judge_id: str
    kind: str
    metrics: Sequence[str]


class ReferenceJudge:
    """Every reference metric from the ground truth and the gold supporting facts."""

    judge_id = REFERENCE_JUDGE_ID
    kind = "reference"
    metrics = REFERENCE_METRICS
    prompt_version = None

    def score(self, case: Mapping[str, Any]) -> dict[str, float | None]:
        answer, truth = case["answer"], case["ground_truth"]
        titles = list(case["retrieved_titles"])
        gold_titles = list(case["gold_titles"])
        gold_facts = [(f["title"], int(f["sent_id"])) for f in case["gold_facts"]]
        return {
            "exact_match": reference.exact_match(answer, truth),
            "f1": reference.f1(answer, truth),
            "correctness": reference.correctness(answer, truth),
            "context_relevance": reference.context_relevance(titles, gold_titles),
            "context_precision": reference.context_precision(titles, gold_titles),
            "context_recall": reference.context_recall(titles, gold_facts),
            "faithfulness_lexical": reference.faithfulness_lexical(answer, list(case["retrieved_passages"])),
        }


def join_cases(candidate_answers: pd.DataFrame, judgement_list: pd.DataFrame) -> pd.DataFrame:
    """Candidate answers with the ground truth, gold labels, type and level of their question."""
    columns = ["qid", "answer", "type", "level", "gold_titles", "gold_facts"]
    columns += ["tags"] if "tags" in judgement_list else []
    labels = judgement_list[columns].rename(columns={"answer": "ground_truth"})
    return candidate_answers.merge(labels, on="qid", how="left", validate="one_to_one")


def _judge_case(case: Mapping[str, Any]) -> JudgeCase:
    hits = tuple(
        SearchHit(pid, title, text, float(score))
        for pid, title, text, score in zip(
            case["retrieved_ids"],
            case["retrieved_titles"],
            case["retrieved_passages"],
            case["retrieved_scores"],
        )
    )
    return JudgeCase(case["question"], case["ground_truth"], case["answer"], hits)


async def _score_one(judge: Any, case: Mapping[str, Any]) -> dict[str, Any]:
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
    if hasattr(judge, "score"):
        try:
            row.update(judge.score(case), status="ok", error=None, cost_usd=0.0)
        except Exception as err:  # one bad case must not sink the run
            row.update(status="judge_error", error=f"{type(err).__name__}: {err}")
        return row
    outcome: JudgeOutcome = await judge.judge(_judge_case(case))
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
    judges: Sequence[Any],
    on_progress: Callable[[int, int], None] | None = None,
    concurrency: int = 8,
    prefill: Callable[[list[LLMRequest]], None] | None = None,
) -> pd.DataFrame:
    """A row per case per judge with every metric the judges know (absent metrics are NaN).

    A case whose answer failed is kept with status ``answer_failed`` and no scores; a judge that
    fails on a case (an API error after retries, or invalid output twice) gives status
    ``judge_error``. Both are counted as failed, never scored 0. LLM judges run with at most
    ``concurrency`` cases in flight.
    """
    metric_names = list(dict.fromkeys(m for judge in judges for m in judge.metrics))
    pairs = [(judge, case) for judge in judges for case in cases.to_dict(orient="records")]
    if prefill is not None:  # the first call of each case of judges that can say it in advance
        prefill(
            [
                judge.first_request(_judge_case(case))
                for judge, case in pairs
                if hasattr(judge, "first_request") and case["status"] == "ok"
            ]
        )
    rows = asyncio.run(map_bounded(pairs, lambda pair: _score_one(*pair), concurrency, on_progress))
    frame = pd.DataFrame(rows, columns=SCORE_ID_COLUMNS + metric_names)
    frame[metric_names] = frame[metric_names].astype("float64")
    tokens = ["input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens"]
    frame[tokens] = frame[tokens].fillna(0).astype("int64")
    frame["cost_usd"] = frame["cost_usd"].astype("float64")
    frame["diagnosis"] = [diagnose_row(row) for row in frame.to_dict(orient="records")]
    return frame


def diagnose_row(row: Mapping[str, Any]) -> str | None:
    """The judge's own faithfulness where it has one, the lexical proxy otherwise."""
    faithfulness = row.get("faithfulness")
    if faithfulness is None or pd.isna(faithfulness):
        faithfulness = row.get("faithfulness_lexical")
    return diagnose(row.get("correctness"), faithfulness, row.get("context_relevance"))
