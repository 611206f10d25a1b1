"""Vision judges, ``vision:<LLM>``: a model that sees the case's retrieved images (as image
blocks before the text, never base64 in a text block) scores ``visual_relevance`` (one verdict
per image, 0 / 0.5 / 1, the case's mean) and ``image_text_consistency`` (the answer against
the images; 0 is the diagnosis ``image_contradiction``). Two pure halves around each call:
``render_*`` builds the request, ``parse_tool_output`` reads the verdict. The scales are
``VISION_SCALES``'s, which the checks read too: visual relevance is stored as the mean of its
per-image verdicts, on [0, 1], with each image's verdict kept apart."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from rag_eval_pipeline.judges.base import JudgeCase, JudgeOutcome
from rag_eval_pipeline.judges.engine import (
    InvalidJudgeOutput,
    JudgeEndpoint,
    LLMJudge,
    ThreePointScore,
    parse_tool_output,
    rubric_request,
)
from rag_eval_pipeline.language.prompts import judge_clause
from rag_eval_pipeline.llm.client import FatalLLMError, LLMCallError, LLMRequest, Tool
from rag_eval_pipeline.llm.images import ImageTooLargeError, PreparedImage, prepare_image
from rag_eval_pipeline.metrics.grounding import VISION_METRICS, VISION_SCALES

if TYPE_CHECKING:
    from rag_eval_pipeline.data.images import ImageCatalog

VISION_PROMPT_VERSION = "vision-v1"
MAX_JUDGED_IMAGES = 5  # the top-ranked retrieved images a case's judge sees (cost grows with each)
IMAGE_CONTRADICTION = "image_contradiction"

RELEVANCE_RUBRIC = (
    "You judge a retrieval-augmented question-answering system that retrieved the image shown. "
    "Score visual_relevance: 1 if the image shows what the question asks about, 0.5 if it is "
    "related but does not show the answer, 0 if it is unrelated. When in doubt, pick the lower "
    "score. Report the verdict and a one-sentence reason with the tool."
)
CONSISTENCY_RUBRIC = (
    "You judge a retrieval-augmented question-answering system. The images shown are the ones "
    "it retrieved. Score image_text_consistency of its answer: 1 if what the answer says agrees "
    "with what the images show, 0.5 if the images neither confirm nor contradict it, 0 if the "
    "images contradict it. Report the verdict and a one-sentence reason with the tool."
)


class VisionVerdict(BaseModel):
    verdict: ThreePointScore  # every verdict of the judge, per image or on all of them
    reason: str = Field(min_length=1)


def _tool(name: str, metric: str) -> Tool:
    return Tool(
        name=name,
        description=f"Record the {metric} verdict and its reason.",
        input_schema={
            "type": "object",
            "properties": {"verdict": {"type": "number", "enum": [0, 0.5, 1]}, "reason": {"type": "string"}},
            "required": ["verdict", "reason"],
            "additionalProperties": False,
        },
    )


RELEVANCE_TOOL = _tool("record_visual_relevance", "visual_relevance")
CONSISTENCY_TOOL = _tool("record_image_consistency", "image_text_consistency")


def _request(model: str, rubric: str, images: Sequence[PreparedImage], text: str, tool: Tool) -> LLMRequest:
    """The images first, each as an image block, then the case's text in its own block."""
    content = [*(image.block() for image in images), {"type": "text", "text": text}]
    return rubric_request(model, rubric, content, 300, tool)


def render_relevance_prompt(model: str, case: JudgeCase, image: PreparedImage) -> LLMRequest:
    text = f"<image_id>{image.image_id}</image_id>\n<question>{case.question}</question>"
    return _request(model, RELEVANCE_RUBRIC, [image], text + judge_clause(case.language), RELEVANCE_TOOL)


def render_consistency_prompt(model: str, case: JudgeCase, images: Sequence[PreparedImage]) -> LLMRequest:
    shown = ", ".join(i.image_id for i in images)
    text = f"<images>{shown}</images>\n<question>{case.question}</question>\n<answer>{case.answer}</answer>"
    return _request(model, CONSISTENCY_RUBRIC, images, text + judge_clause(case.language), CONSISTENCY_TOOL)


class VisionLLMJudge(LLMJudge):
    """Shows the case's top retrieved images to a vision model. A case without retrieved images
    has both metrics absent; an image the catalog does not hold is a note; an image that cannot
    be brought within the provider's limits is the case's judge error, never a 0."""

    kind = "vision"
    metrics = VISION_METRICS
    reference_free_metrics = VISION_METRICS  # the images and the answer, not the reference
    prompt_version = VISION_PROMPT_VERSION

    def __init__(self, judge_id: str, endpoint: JudgeEndpoint, images: ImageCatalog | None) -> None:
        super().__init__(judge_id, endpoint)
        self._images = images

    def _prepared(self, case: JudgeCase) -> tuple[list[PreparedImage], list[str]]:
        wanted = list(case.visual.images or ()) if case.visual is not None else []
        prepared, notes = [], []
        for image_id in wanted[:MAX_JUDGED_IMAGES]:
            info = self._images.images.get(image_id) if self._images is not None else None
            if info is None or not info.usable:
                notes.append(f"image '{image_id}' is not a readable image of the knowledge base: not judged")
                continue
            prepared.append(prepare_image(image_id, info.path.read_bytes()))  # ImageTooLargeError: the case's
        return prepared, notes

    async def judge(self, case: JudgeCase) -> JudgeOutcome:
        try:
            images, notes = self._prepared(case)
        except (ImageTooLargeError, OSError) as err:
            return JudgeOutcome({}, error=f"{type(err).__name__}: {err}")
        if not images:
            return JudgeOutcome(dict.fromkeys(VISION_METRICS), notes=notes)
        caller = self._caller(case)
        parse = lambda response: parse_tool_output(response, VisionVerdict)  # noqa: E731
        rationales: dict[str, str] = {}
        try:
            relevance = [
                await caller.ask(render_relevance_prompt(self.model, case, i), parse) for i in images
            ]
            consistency = await caller.ask(render_consistency_prompt(self.model, case, images), parse)
        except FatalLLMError:
            raise
        except (InvalidJudgeOutput, LLMCallError) as err:
            return JudgeOutcome(
                {}, usage=caller.usage, cost_usd=caller.cost, error=f"{type(err).__name__}: {err}"
            )
        rationales["visual_relevance"] = " | ".join(
            f"{i.image_id} ({i.sha256[:12]}, {i.width}x{i.height}): {v.verdict:g} {v.reason}"
            for i, v in zip(images, relevance)
        )
        rationales["image_text_consistency"] = consistency.reason
        per_image = {i.image_id: v.verdict for i, v in zip(images, relevance)}
        scores: dict[str, float | None] = {
            "visual_relevance": _stored("visual_relevance", [v.verdict for v in relevance]),
            "image_text_consistency": _stored("image_text_consistency", [consistency.verdict]),
        }
        kept = {"visual_relevance": per_image}
        return JudgeOutcome(scores, rationales, caller.usage, caller.cost, notes=notes, item_verdicts=kept)


def _stored(metric: str, verdicts: list[float]) -> float:
    """What a metric stores of its verdicts, as ``VISION_SCALES`` declares it: the mean of a
    per-item metric's, the one verdict of any other."""
    if VISION_SCALES[metric].aggregates:
        return sum(verdicts) / len(verdicts)
    (verdict,) = verdicts
    return verdict
