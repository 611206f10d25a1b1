"""Stage 1: answer models. A partition key resolves once into an ``AnswerSpec`` through
``answering.registry.AnswerRegistry``; providers implement ``AnswerProvider``."""

from rag_eval_pipeline.answering.base import AnswerModel, AnswerProvider, AnswerRequest, AnswerResult
from rag_eval_pipeline.answering.spec import AnswerSpec, CalibrationRole, InvalidNameError, check_name

__all__ = [
    "AnswerModel",
    "AnswerProvider",
    "AnswerRequest",
    "AnswerResult",
    "AnswerSpec",
    "CalibrationRole",
    "InvalidNameError",
    "check_name",
]
