"""Judges: one protocol (``Judge``), one registry (``JudgeRegistry``), one module per kind, and
the call/re-ask engine of the LLM judges. Formulas and aggregation stay in ``metrics/``."""

from rag_eval_pipeline.judges.base import Judge, JudgeCase, JudgeOutcome
from rag_eval_pipeline.judges.engine import InvalidJudgeOutput, JudgeCaller
from rag_eval_pipeline.judges.reference import REFERENCE_JUDGE_ID
from rag_eval_pipeline.judges.registry import JudgeRegistry, JudgeSpec, UnknownJudgeError
from rag_eval_pipeline.judges.score_cases import join_cases, score_cases

__all__ = [
    "REFERENCE_JUDGE_ID",
    "InvalidJudgeOutput",
    "Judge",
    "JudgeCaller",
    "JudgeCase",
    "JudgeOutcome",
    "JudgeRegistry",
    "JudgeSpec",
    "UnknownJudgeError",
    "join_cases",
    "score_cases",
]
