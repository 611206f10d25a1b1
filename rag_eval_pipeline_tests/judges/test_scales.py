"""Every judge's scale is the scale of what it stores: whatever per-item verdicts a judge is
given (none, one, several, mixed), the rows it writes pass the blocking range check, which reads
the same declaration (``metrics.scales``) the judge does. A value off its scale is named with
its case, judge and value."""

from __future__ import annotations

import asyncio
import functools
import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_eval_pipeline.data.images import image_catalog
from rag_eval_pipeline.judges.base import JudgeCase
from rag_eval_pipeline.judges.engine import JudgeEndpoint
from rag_eval_pipeline.judges.registry import JUDGE_KINDS, JudgeRegistry
from rag_eval_pipeline.judges.strict import STRICT_METRICS, StrictLLMJudge
from rag_eval_pipeline.judges.vision import VisionLLMJudge
from rag_eval_pipeline.llm.client import LLMResponse, Usage
from rag_eval_pipeline.metrics.grounding import VisualAnswer
from rag_eval_pipeline.metrics.scales import Scale
from rag_eval_pipeline.metrics.schema import ITEM_VERDICTS
from rag_eval_pipeline.metrics.validation import score_range_problems
from rag_eval_pipeline.retrieval.base import SearchHit
from rag_eval_pipeline_tests.support.images import draw

VISION = "vision:claude-sonnet-4-6"
VERDICT = st.sampled_from([0, 0.5, 1])
IMAGES = [f"img{i}.png" for i in range(6)]  # one more than a case's judge sees


class Verdicts:
    """An LLM client that answers each call with the next of a list of tool inputs."""

    def __init__(self, outputs: list[dict]) -> None:
        self._outputs = list(outputs)

    async def complete(self, request, accept=None) -> LLMResponse:
        return LLMResponse(text="", tool_input=self._outputs.pop(0), usage=Usage(), model="m")


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    folder = tmp_path_factory.mktemp("images")
    for name in IMAGES:
        draw(folder / name, (8, 8), "red")
    return image_catalog(folder)


def _rows(judge_id: str, kind: str, outcome, qid: str = "q1") -> pd.DataFrame:
    row = {"qid": qid, "judge_id": judge_id, "judge_kind": kind, "status": "ok", **outcome.scores}
    if outcome.item_verdicts:
        row[ITEM_VERDICTS] = json.dumps(outcome.item_verdicts)
    return pd.DataFrame([row])


def _case(images: list[str]) -> JudgeCase:
    return JudgeCase(
        "Which colour?", "red", "red", (SearchHit("p", "T", "Text.", 1.0),), qid="q1",
        visual=VisualAnswer(images=tuple(images)),
    )  # fmt: skip


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(per_image=st.lists(VERDICT, min_size=0, max_size=len(IMAGES)), consistency=VERDICT)
def test_any_mix_of_per_image_verdicts_gives_rows_the_range_check_accepts(catalog, per_image, consistency):
    judged = per_image[:5]  # MAX_JUDGED_IMAGES
    outputs = [{"verdict": v, "reason": "seen"} for v in judged] + [{"verdict": consistency, "reason": "r"}]
    registry = JudgeRegistry()
    judge = VisionLLMJudge(VISION, JudgeEndpoint("claude-sonnet-4-6", Verdicts(outputs), {}), catalog)
    outcome = asyncio.run(judge.judge(_case(IMAGES[: len(per_image)])))
    rows = _rows(VISION, "vision", outcome)
    assert score_range_problems(rows, registry.metric_scales([VISION])) == []
    if not judged:  # no image: both absent, never 0
        assert outcome.scores == {"visual_relevance": None, "image_text_consistency": None}
        return
    assert outcome.scores["visual_relevance"] == pytest.approx(sum(judged) / len(judged))
    assert outcome.item_verdicts == {"visual_relevance": dict(zip(IMAGES, map(float, judged)))}


@settings(max_examples=20, deadline=None)
@given(verdicts=st.fixed_dictionaries({m: VERDICT for m in STRICT_METRICS}))
def test_any_strict_verdict_gives_rows_the_range_check_accepts(verdicts):
    output = {**verdicts, **{f"{m}_rationale": "why" for m in STRICT_METRICS}}
    judge = StrictLLMJudge("claude-sonnet-4-6", JudgeEndpoint("claude-sonnet-4-6", Verdicts([output]), {}))
    case = JudgeCase("Who?", "Temple", "Temple", (SearchHit("p", "T", "Text.", 1.0),), qid="q1")
    outcome = asyncio.run(judge.judge(case))
    rows = _rows("claude-sonnet-4-6", "strict", outcome)
    assert score_range_problems(rows, JudgeRegistry().metric_scales(["claude-sonnet-4-6"])) == []


JUDGE_IDS = [
    "reference",
    "grounding",
    "claude-sonnet-4-6",
    "strict-blind:m",
    "ragas:m",
    "claims:m",
    "sufficiency:m",
    VISION,
]


def _stored(scale, items: list[float]) -> float:
    """What a metric of this declared scale stores of item verdicts: their mean when it
    aggregates, the one verdict (the first) otherwise."""
    return sum(items) / len(items) if scale.aggregates else items[0]


@functools.cache
def _declared() -> dict:
    return JudgeRegistry().metric_scales(JUDGE_IDS)


def test_the_declarations_cover_every_built_in_judge_kind():
    registry = JudgeRegistry()
    covered = {registry.resolve(j).kind for j in JUDGE_IDS}
    assert {k.name for k in JUDGE_KINDS} - {"python", "rubric"} == covered
    assert _declared()[VISION]["visual_relevance"].aggregates  # the mean of its per-image verdicts


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_declared_metric_stores_what_its_scale_says_whatever_its_verdicts(data):
    """For every judge kind and every metric it declares, values as the declaration says they
    are made (a verdict on its scale, or the mean of any number of them) pass the check."""
    scales = _declared()
    rows = []
    for judge_id, metrics in scales.items():
        row = {"qid": "q", "judge_id": judge_id, "status": "ok"}
        items: dict[str, dict[str, float]] = {}
        for metric, scale in metrics.items():
            verdict_scale = scale.item_scale if scale.aggregates else scale.stored
            one = VERDICT if verdict_scale is Scale.THREE_POINT else st.floats(0, 1)
            verdicts = data.draw(st.lists(one, min_size=1, max_size=6), label=f"{judge_id} {metric}")
            row[metric] = _stored(scale, verdicts)
            if scale.aggregates:
                items[metric] = {f"item{i}": v for i, v in enumerate(verdicts)}
        row[ITEM_VERDICTS] = json.dumps(items) if items else None
        rows.append(row)
    assert score_range_problems(pd.DataFrame(rows), scales) == []


def test_visual_relevance_is_a_mean_on_zero_to_one_and_its_verdicts_are_held_to_three_points():
    scales = JudgeRegistry().metric_scales([VISION])
    rows = pd.DataFrame(
        [
            {"qid": "plan", "judge_id": VISION, "visual_relevance": 0.75, "image_text_consistency": 1.0,
             ITEM_VERDICTS: json.dumps({"visual_relevance": {"a.png": 1, "b.png": 0.5}})},
            {"qid": "chart", "judge_id": VISION, "visual_relevance": 0.4, "image_text_consistency": 0.25,
             ITEM_VERDICTS: json.dumps({"visual_relevance": {"c.png": 0.4}})},
            {"qid": "sign", "judge_id": VISION, "visual_relevance": 1.5, "image_text_consistency": 1.0},
        ]
    )  # fmt: skip
    assert score_range_problems(rows, scales) == [
        f"visual_relevance: 1 values outside [0, 1]: case sign ({VISION}) 1.5",
        f"image_text_consistency: 1 values not in {{0, 0.5, 1}}: case chart ({VISION}) 0.25",
        f"visual_relevance per item: 1 verdicts not in {{0, 0.5, 1}}: case chart ({VISION}) c.png 0.4",
    ]
