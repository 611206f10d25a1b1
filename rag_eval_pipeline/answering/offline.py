"""Answer models that need no network: a weak real baseline, the two calibration bounds, and the
security probes' compliant stand-in."""

from __future__ import annotations

from rag_eval_pipeline.answering.base import AnswerModel, AnswerRequest, AnswerResult, BehindOurRetriever
from rag_eval_pipeline.answering.settings import OFFLINE_MODELS
from rag_eval_pipeline.answering.spec import AnswerSpec, CalibrationRole
from rag_eval_pipeline.language.analysis import split_sentences
from rag_eval_pipeline.language.attacks import PLACEHOLDER
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.metrics.diagnosis import AnswerSource
from rag_eval_pipeline.metrics.grounding import VisualAnswer
from rag_eval_pipeline.metrics.reference import content_tokens

UNKNOWN = "unknown"


class ExtractiveBaseline:
    """Answers with the retrieved sentence sharing most content words with the question.

    Ties go to the higher-ranked passage, then the earlier sentence; no overlap at all -> "unknown".
    """

    name = "extractive-baseline"
    prompt_version = "extractive-v1"
    calibration = CalibrationRole.MEASURED
    source = AnswerSource.EXTRACTIVE  # copies a retrieved sentence: it has no memory

    def answer(self, request: AnswerRequest) -> AnswerResult:
        question_tokens = set(content_tokens(request.question, request.language))
        best, best_overlap = UNKNOWN, 0
        for hit in request.passages:
            for sentence in split_sentences(hit.passage):
                overlap = len(question_tokens & set(content_tokens(sentence, request.language)))
                if overlap > best_overlap:
                    best, best_overlap = sentence, overlap
        return AnswerResult(answer=best, model_id=self.name, prompt_version=self.prompt_version)


class _CalibrationBound:
    """A bound a sound judge is calibrated against: it answers from the reference's side, never
    from the passages, and costs nothing."""

    name: str
    prompt_version = "none"
    source = AnswerSource.REFERENCE

    def _said(self, answer: str, visual: VisualAnswer | None = None) -> AnswerResult:
        return AnswerResult(answer, self.name, self.prompt_version, visual=visual)


class OracleAnswerer(_CalibrationBound):
    """Returns the ground truth: the upper bound a sound judge scores 1.0 on correctness."""

    name = "oracle"
    calibration = CalibrationRole.UPPER_BOUND

    def answer(self, request: AnswerRequest) -> AnswerResult:
        if request.reference_answer is None:  # a failed case, not an abstention scored as one
            raise ValueError("the case has no reference answer yet: the oracle has nothing to return")
        # the gold images and boxes: grounding's upper bound too
        return self._said(request.reference_answer, request.reference_visual)


class NullAnswerer(_CalibrationBound):
    """Always abstains: the lower bound a sound judge scores 0.0 on correctness."""

    name = "null"
    calibration = CalibrationRole.LOWER_BOUND

    def answer(self, request: AnswerRequest) -> AnswerResult:
        return self._said(UNKNOWN)


class CompliantStandIn:
    """Does whatever the passages say: writes every retrieved passage out, in rank order, with
    the placeholder an instruction asks to fill (``SESSION_TOKEN``) replaced by the secret it was
    told to keep. The most compliant model there can be: the security probes' golden values (it
    fails every probe), never a model to ship."""

    name = "compliant"
    prompt_version = "compliant-v1"
    calibration = CalibrationRole.MEASURED
    source = AnswerSource.EXTRACTIVE

    def answer(self, request: AnswerRequest) -> AnswerResult:
        secret = request.secret if request.secret is not None else PLACEHOLDER
        text = "\n\n".join(hit.passage.replace(PLACEHOLDER, secret) for hit in request.passages)
        return AnswerResult(answer=text or UNKNOWN, model_id=self.name, prompt_version=self.prompt_version)


OFFLINE_ANSWER_MODELS: dict[
    str, type[ExtractiveBaseline | OracleAnswerer | NullAnswerer | CompliantStandIn]
] = {
    "extractive-baseline": ExtractiveBaseline,
    "baseline": ExtractiveBaseline,
    "oracle": OracleAnswerer,
    "null": NullAnswerer,
    "compliant": CompliantStandIn,
}
assert tuple(OFFLINE_ANSWER_MODELS) == OFFLINE_MODELS  # the names the configuration accepts


class OfflineProvider(BehindOurRetriever):
    """Answer models that need no network: the extractive baseline and the calibration bounds."""

    name = "offline"

    def claims(self, model: str) -> bool:
        return model in OFFLINE_ANSWER_MODELS

    def model_id(self, model: str) -> str:
        return OFFLINE_ANSWER_MODELS[model].name

    def prompt_version(self, model: str, system_prompt: str | None) -> str:
        return OFFLINE_ANSWER_MODELS[model].prompt_version

    def calibration(self, model: str) -> CalibrationRole:
        return OFFLINE_ANSWER_MODELS[model].calibration

    def source(self, model: str) -> AnswerSource:
        return OFFLINE_ANSWER_MODELS[model].source

    def endpoint(self, model: str, base_url: str | None, api_key_env: str | None) -> None:
        return None

    def build(self, spec: AnswerSpec, services: LLMServices) -> AnswerModel:
        return OFFLINE_ANSWER_MODELS[spec.model]()
