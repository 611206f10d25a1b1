"""The one place a judge id becomes a ``JudgeSpec``, and a spec a judge.

Judge ids: ``reference``; an LLM name (``claude-sonnet-4-6``, ``anthropic:<id>``,
``openai:<model>``, ``local:smollm2``) or ``strict:<LLM name>`` for the STRICT rubric in one call;
``strict-blind:<LLM name>`` for the same axes with faithfulness and context relevance asked
without the ground truth;
``ragas:<LLM name>`` for RAGAS-style metrics; ``claims:<LLM name>`` for claim precision,
claim recall and citation support; ``sufficiency:<LLM name>`` for whether the passages suffice
to answer (knowledge-base health reads it); and the configuration file's custom metrics (a
Python callable or an LLM rubric) by name. LLM names are resolved by the provider table
(``llm/providers.py``), the same as answer models'. Adding a judge kind is one entry in
``JUDGE_KINDS`` plus its own module; a custom metric may not take a built-in judge's name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np

from rag_eval_pipeline.judges.alignment import PromptStore, PromptVersion
from rag_eval_pipeline.judges.base import Judge
from rag_eval_pipeline.judges.claims import CLAIM_METRICS, CLAIM_REFERENCE_FREE_METRICS, ClaimsLLMJudge
from rag_eval_pipeline.judges.custom import PythonMetricJudge, RubricMetricJudge, load_callable
from rag_eval_pipeline.judges.grounding import GROUNDING_JUDGE_ID, GroundingJudge
from rag_eval_pipeline.judges.ragas import RAGAS_METRICS, RAGAS_REFERENCE_FREE_METRICS, RagasLLMJudge
from rag_eval_pipeline.judges.reference import (
    REFERENCE_FREE_METRICS,
    REFERENCE_JUDGE_ID,
    REFERENCE_METRICS,
    ReferenceJudge,
)
from rag_eval_pipeline.judges.settings import CustomMetricSettings, JudgeRepeats
from rag_eval_pipeline.judges.strict import (
    GROUNDING_METRICS,
    STRICT_METRICS,
    StrictBlindLLMJudge,
    StrictLLMJudge,
)
from rag_eval_pipeline.judges.sufficiency import SUFFICIENCY_METRICS, SufficiencyLLMJudge
from rag_eval_pipeline.judges.vision import VISION_METRICS, VisionLLMJudge
from rag_eval_pipeline.llm.client import AtTemperature, LLMClient, LLMRequest
from rag_eval_pipeline.llm.providers import DEFAULT_LLM_PROVIDER, parse_llm_name
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.llm.targets import LLMEndpoint, LLMTarget
from rag_eval_pipeline.metrics.grounding import IMAGE_METRICS, VISION_SCALES
from rag_eval_pipeline.metrics.reference import DEFAULT_ABSTENTION, AbstentionPolicy
from rag_eval_pipeline.metrics.reliability import JURY
from rag_eval_pipeline.metrics.scales import THREE_POINT, UNIT, MetricScale, three_point_of

if TYPE_CHECKING:
    from rag_eval_pipeline.data.images import ImageCatalog

DEFAULT_LLM_JUDGE = "claude-sonnet-4-6"
Embed = Callable[[list[str]], np.ndarray]


class UnknownJudgeError(ValueError):
    pass


# the calls one scoring of a case makes by kind: the STRICT rubric one, strict-blind two (with
# and without the truth), RAGAS-style four (statements, verdicts, passages, questions), claims two
JUDGE_CALLS = {"strict": 1, "strict-blind": 2, "ragas": 4, "claims": 2, "rubric": 1, "sufficiency": 1}
JURY_JUDGE_ID = JURY  # the run's LLM judges combined (``judges.jury``): not a judge of its own


@dataclass(frozen=True)
class JudgeSpec:
    """A judge resolved once: its id and kind, the model behind it (if any), the metrics it
    declares, which of them are on the 0 / 0.5 / 1 scale and which it measures without a
    reference answer (production traffic); a custom metric carries its own settings."""

    judge_id: str
    kind: str
    metrics: tuple[str, ...]
    three_point_metrics: tuple[str, ...] = ()
    reference_free_metrics: tuple[str, ...] = ()
    provider: str | None = None
    model_id: str | None = None
    endpoint: LLMEndpoint | None = None
    custom: CustomMetricSettings | None = field(default=None, compare=False)
    repeats: int = 1  # independent scorings per case (an LLM judge's re-scores; 1 for the rest)
    temperature: float | None = None  # an LLM judge's sampling temperature (None: its own, 0)
    prompt: PromptVersion | None = field(default=None, compare=False)  # an aligned prompt, if adopted
    # the kind's own declaration of metrics that aggregate verdicts (``metrics.scales``); the
    # three-point ones above are derived from it for such a kind
    declared_scales: Mapping[str, MetricScale] = field(default_factory=dict, compare=False)

    @property
    def scales(self) -> dict[str, MetricScale]:
        """Each metric's stored scale, as the judge writes it and the checks hold it to."""
        return {
            m: self.declared_scales.get(m) or (THREE_POINT if m in self.three_point_metrics else UNIT)
            for m in self.metrics
        }

    @property
    def needs_llm(self) -> bool:
        return self.provider is not None

    @property
    def calls_per_case(self) -> int:
        """The calls one scoring of a case makes at least (re-asks of invalid output aside)."""
        return JUDGE_CALLS.get(self.kind, 1) if self.needs_llm else 0


CustomMetrics = Mapping[str, CustomMetricSettings]


class Juror(Protocol):
    """What a jury needs of a juror (a judge or its spec): who it is and what it scores."""

    judge_id: str
    metrics: tuple[str, ...]


def jury_axes(jurors: Sequence[Juror]) -> list[str]:
    """The metrics two jurors or more declare, in the order the first declares them."""
    declared = [m for s in jurors for m in s.metrics]
    return [m for m in dict.fromkeys(declared) if declared.count(m) >= 2]


JURY_MODES = ("median", "weighted")


@dataclass(frozen=True)
class Judging:
    """A run's judging, resolved once: its judges (each LLM judge with its re-scores) and, with
    a jury, the jurors it combines (every LLM judge of the run) and how."""

    specs: tuple[JudgeSpec, ...]
    jury: str | None = None

    @property
    def jurors(self) -> tuple[JudgeSpec, ...]:
        return tuple(s for s in self.specs if s.needs_llm) if self.jury else ()

    @property
    def judge_ids(self) -> list[str]:
        """Every judge whose rows the scores hold, the jury last."""
        return [s.judge_id for s in self.specs] + ([JURY_JUDGE_ID] if self.jury else [])

    def as_asked(self, requests: list[LLMRequest]) -> list[LLMRequest]:
        """Judges' first calls as they will be sent (at the run's temperature): what a batch
        pre-fetches must be what the judges then ask for."""
        temperature = next((s.temperature for s in self.specs if s.temperature is not None), None)
        return requests if temperature is None else [replace(r, temperature=temperature) for r in requests]

    def with_prompts(self, store: PromptStore, pinned: Mapping[str, str]) -> Judging:
        """Each STRICT judge with the prompt it uses: the version ``pinned`` names, else the newest
        its alignment adopted, else its own (``judges.alignment``)."""
        unknown = sorted(set(pinned) - {s.judge_id for s in self.specs if s.kind == "strict"})
        if unknown:
            raise UnknownJudgeError(
                f"judge_prompts names {', '.join(unknown)}: not a STRICT judge of this run"
            )
        specs = tuple(
            replace(s, prompt=store.chosen(s.judge_id, pinned.get(s.judge_id))) if s.kind == "strict" else s
            for s in self.specs
        )
        return replace(self, specs=specs)

    @property
    def calls_per_case(self) -> int:
        """The LLM calls one case costs at least: each judge's calls times its re-scores."""
        return sum(s.calls_per_case * s.repeats for s in self.specs)


@dataclass(frozen=True)
class JudgeContext:
    """What a judge kind may need to build its judge: the LLM clients and prices, an embedder
    (RAGAS answer relevancy) and which answers count as abstentions."""

    services: LLMServices
    embed: Embed | None = None
    abstention: AbstentionPolicy = DEFAULT_ABSTENTION
    images: ImageCatalog | None = None  # the knowledge base's images (None: not read)


@dataclass(frozen=True)
class JudgeKind:
    """A family of judges: ``parse`` claims a judge id (None if it is not its own; the
    configuration file's custom metrics are passed for the kinds they declare), ``build`` makes
    the judge from its spec. A ``builtin`` kind's ids cannot be taken by a custom metric."""

    name: str
    parse: Callable[[str, CustomMetrics], JudgeSpec | None]
    build: Callable[[JudgeSpec, JudgeContext], Judge]
    builtin: bool = True


def _llm_target(name: str, prefix: str) -> LLMTarget | None:
    """``<prefix>:<LLM name>`` -> the LLM it names, else None; a bare model after the prefix is
    a Claude model id, as it always was (``ragas:claude-opus-4-5``)."""
    kind, sep, model = name.partition(":")
    if not (sep and kind == prefix and model):
        return None
    return parse_llm_name(model) or parse_llm_name(f"{DEFAULT_LLM_PROVIDER}:{model}")


def _parse_reference(name: str, custom: CustomMetrics) -> JudgeSpec | None:
    if name != REFERENCE_JUDGE_ID:
        return None
    return JudgeSpec(
        name, "reference", REFERENCE_METRICS, ("correctness", "context_relevance"), REFERENCE_FREE_METRICS
    )


def _parse_grounding(name: str, custom: CustomMetrics) -> JudgeSpec | None:
    if name != GROUNDING_JUDGE_ID:
        return None
    return JudgeSpec(name, "grounding", IMAGE_METRICS, (), IMAGE_METRICS)


def _parse_vision(name: str, custom: CustomMetrics) -> JudgeSpec | None:
    target = _llm_target(name, "vision")
    if target is None:
        return None
    # its calls carry images: preflight asks whether the model can see them (a local one's mmproj)
    seeing = replace(target, endpoint=replace(target.endpoint, images=True))
    spec = _llm_judge_spec(
        name, "vision", seeing, VISION_METRICS, three_point_of(VISION_SCALES), VISION_METRICS
    )
    return replace(spec, declared_scales=VISION_SCALES)


def _build_grounding(spec: JudgeSpec, context: JudgeContext) -> Judge:
    return GroundingJudge(None if context.images is None else context.images.images.keys())


def _llm_judge_spec(
    name: str,
    kind: str,
    target: LLMTarget,
    metrics: tuple[str, ...],
    three_point_metrics: tuple[str, ...],
    reference_free_metrics: tuple[str, ...],
    custom: CustomMetricSettings | None = None,
) -> JudgeSpec:
    return JudgeSpec(
        name,
        kind,
        metrics,
        three_point_metrics,
        reference_free_metrics,
        target.provider,
        target.model_id,
        target.endpoint,
        custom=custom,
    )


def _parse_strict(name: str, custom: CustomMetrics) -> JudgeSpec | None:
    target = _llm_target(name, "strict") or parse_llm_name(name)
    if target is None:
        return None
    return _llm_judge_spec(name, "strict", target, STRICT_METRICS, STRICT_METRICS, GROUNDING_METRICS)


def _prefixed_llm_judge(
    kind: str,
    metrics: tuple[str, ...],
    three_point_metrics: tuple[str, ...],
    reference_free_metrics: tuple[str, ...],
) -> Callable[[str, CustomMetrics], JudgeSpec | None]:
    """The parser of an LLM judge named ``<kind>:<LLM name>`` that declares these metrics."""

    def parse(name: str, custom: CustomMetrics) -> JudgeSpec | None:
        target = _llm_target(name, kind)
        if target is None:
            return None
        return _llm_judge_spec(name, kind, target, metrics, three_point_metrics, reference_free_metrics)

    return parse


def _parse_python(name: str, custom: CustomMetrics) -> JudgeSpec | None:
    metric = custom.get(name)
    if metric is None or metric.kind != "python":
        return None
    return JudgeSpec(
        name,
        "python",
        (name,),
        reference_free_metrics=(name,) if metric.reference_free else (),
        custom=metric,
    )


def _build_python(spec: JudgeSpec, context: JudgeContext) -> Judge:
    metric = spec.custom
    assert metric is not None and metric.kind == "python", spec
    return PythonMetricJudge(spec.judge_id, load_callable(metric.callable), metric.reference_free)


def _parse_rubric(name: str, custom: CustomMetrics) -> JudgeSpec | None:
    metric = custom.get(name)
    if metric is None or metric.kind != "rubric":
        return None
    target = parse_llm_name(metric.model)
    if target is None:
        raise UnknownJudgeError(f"custom metric '{name}': unknown model '{metric.model}'")
    reference_free = (name,) if metric.reference_free else ()
    return _llm_judge_spec(name, "rubric", target, (name,), (), reference_free, custom=metric)


def _build_rubric(spec: JudgeSpec, context: JudgeContext) -> Judge:
    rubric = spec.custom
    assert rubric is not None and rubric.kind == "rubric", spec
    return RubricMetricJudge(
        spec.judge_id,
        rubric.instructions,
        rubric.allowed_scores,
        spec.model_id or "",
        _client_of(spec, context),
        context.services.prices_for(spec.endpoint),  # type: ignore[arg-type]
        rubric.reference_free,
    )


def _llm_judge_arguments(spec: JudgeSpec, context: JudgeContext) -> tuple:
    """What every LLM judge is built from: its id, model, the client and prices of its endpoint
    (an LLM judge's spec always names one)."""
    return (
        spec.judge_id,
        spec.model_id or "",
        _client_of(spec, context),
        context.services.prices_for(spec.endpoint),  # type: ignore[arg-type]
    )


def _client_of(spec: JudgeSpec, context: JudgeContext) -> LLMClient:
    """The client of an LLM judge's endpoint, asking at its configured temperature if it has one."""
    client = context.services.client(spec.endpoint)  # type: ignore[arg-type]
    return client if spec.temperature is None else AtTemperature(client, spec.temperature)


JUDGE_KINDS: tuple[JudgeKind, ...] = (
    JudgeKind("reference", _parse_reference, lambda spec, context: ReferenceJudge(context.abstention)),
    JudgeKind(
        "strict",
        _parse_strict,
        lambda spec, context: StrictLLMJudge(*_llm_judge_arguments(spec, context), prompt=spec.prompt),
    ),
    JudgeKind(
        "strict-blind",
        _prefixed_llm_judge("strict-blind", STRICT_METRICS, STRICT_METRICS, GROUNDING_METRICS),
        lambda spec, context: StrictBlindLLMJudge(*_llm_judge_arguments(spec, context)),
    ),
    JudgeKind(
        "ragas",
        _prefixed_llm_judge("ragas", RAGAS_METRICS, (), RAGAS_REFERENCE_FREE_METRICS),
        lambda spec, context: RagasLLMJudge(
            *_llm_judge_arguments(spec, context),
            context.embed,
            getattr(context.embed, "reads", lambda code: code == "en"),
        ),
    ),
    JudgeKind(
        "claims",
        _prefixed_llm_judge("claims", CLAIM_METRICS, (), CLAIM_REFERENCE_FREE_METRICS),
        lambda spec, context: ClaimsLLMJudge(*_llm_judge_arguments(spec, context)),
    ),
    JudgeKind(
        "sufficiency",
        _prefixed_llm_judge("sufficiency", SUFFICIENCY_METRICS, (), SUFFICIENCY_METRICS),
        lambda spec, context: SufficiencyLLMJudge(*_llm_judge_arguments(spec, context)),
    ),
    JudgeKind("grounding", _parse_grounding, _build_grounding),
    JudgeKind(
        "vision",
        _parse_vision,
        lambda spec, context: VisionLLMJudge(*_llm_judge_arguments(spec, context), context.images),
    ),
    JudgeKind("python", _parse_python, _build_python, builtin=False),
    JudgeKind("rubric", _parse_rubric, _build_rubric, builtin=False),
)


class JudgeRegistry:
    """Judge ids -> specs -> judges, including the configuration file's custom metrics (Python
    callables and LLM rubrics), which every run scores beside the named judges."""

    def __init__(
        self,
        custom_metrics: Sequence[CustomMetricSettings] = (),
        abstention: AbstentionPolicy = DEFAULT_ABSTENTION,
    ) -> None:
        self._custom: dict[str, CustomMetricSettings] = {m.name: m for m in custom_metrics}
        self._abstention = abstention

    def resolve(self, judge_id: str) -> JudgeSpec:
        for kind in JUDGE_KINDS:
            spec = kind.parse(judge_id, self._custom)
            if spec is not None:
                return spec
        raise UnknownJudgeError(
            f"unknown judge '{judge_id}': use reference, grounding (image metrics), an LLM "
            "(claude-sonnet-4-6, anthropic:<id>, "
            "openai:<model>, local:<model>) for the STRICT rubric, strict-blind:<LLM> for it without "
            "the ground truth on faithfulness, ragas:<LLM> for RAGAS-style metrics, or claims:<LLM> "
            "for claim precision, claim recall and citation support, vision:<LLM> for visual "
            "relevance and image-text consistency, or sufficiency:<LLM> for whether the passages "
            "suffice to answer"
        )

    def for_run(self, judge_ids: Iterable[str], repeats: JudgeRepeats = 1) -> list[JudgeSpec]:
        """The named judges, then every custom metric of the configuration file; each LLM judge
        asked ``repeats`` times per case (a number for all, or judge id -> number), every other
        judge once (the same input gives it the same score)."""
        specs = [self.resolve(j) for j in dict.fromkeys([*judge_ids, *self._custom])]
        if isinstance(repeats, Mapping):
            unknown = sorted(set(repeats) - {s.judge_id for s in specs})
            if unknown:
                raise UnknownJudgeError(
                    f"judge_repeats names {', '.join(unknown)}, not a judge of this run "
                    f"({', '.join(s.judge_id for s in specs)})"
                )
        return [replace(s, repeats=_repeats_of(s, repeats)) if s.needs_llm else s for s in specs]

    def judging(
        self,
        judge_ids: Iterable[str],
        repeats: JudgeRepeats = 1,
        jury: str | None = None,
        temperature: float | None = None,
    ) -> Judging:
        """The judges of a run with their re-scores, temperature and its jury; a jury that cannot
        be (an unknown mode, fewer than two LLM judges sharing a metric) is an error with its
        remedy."""
        specs = tuple(
            replace(s, temperature=temperature) if s.needs_llm else s
            for s in self.for_run(judge_ids, repeats)
        )
        if jury is not None and jury not in JURY_MODES:
            raise UnknownJudgeError(f"unknown jury '{jury}': use {' or '.join(JURY_MODES)}")
        jurors = [s for s in specs if s.needs_llm]
        if jury is not None and (len(jurors) < 2 or not jury_axes(jurors)):
            named = ", ".join(s.judge_id for s in jurors) or "none"
            raise UnknownJudgeError(
                f"a jury needs two LLM judges or more that score the same metric (this run's: {named}): "
                "add one, e.g. --judges claude-sonnet-4-6,claude-haiku-4-5"
            )
        return Judging(specs, jury)

    def declared_metrics(self, judge_ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """What each judge declares, for judge ids found in stored scores (unknown ids omitted)."""
        return {j: spec.metrics for j in judge_ids if (spec := self._try_resolve(j)) is not None}

    def reference_free(self, judge_ids: Iterable[str]) -> tuple[list[JudgeSpec], list[JudgeSpec]]:
        """The judges of a run on cases without reference answers (production traffic): those
        that measure something without one, and those left out because they measure nothing
        (a custom metric not marked ``reference_free``)."""
        specs = self.for_run(judge_ids)
        kept = [s for s in specs if s.reference_free_metrics]
        return kept, [s for s in specs if not s.reference_free_metrics]

    def declared_reference_free(self, judge_ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """What each judge declares on cases without a reference answer (unknown ids omitted)."""
        return {
            j: spec.reference_free_metrics for j in judge_ids if (spec := self._try_resolve(j)) is not None
        }

    def three_point_metrics(self, judge_ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        return {j: spec.three_point_metrics for j in judge_ids if (spec := self._try_resolve(j)) is not None}

    def metric_scales(self, judge_ids: Iterable[str]) -> dict[str, dict[str, MetricScale]]:
        """Judge id -> each metric's declared scale, for the judge ids found in stored scores
        (unknown ids, the jury's, omitted: their values are held to [0, 1] only)."""
        return {j: spec.scales for j in judge_ids if (spec := self._try_resolve(j)) is not None}

    def build(
        self,
        spec: JudgeSpec,
        services: LLMServices,
        embed: Embed | None = None,
        images: ImageCatalog | None = None,
    ) -> Judge:
        context = JudgeContext(services, embed, self._abstention, images)
        return next(k for k in JUDGE_KINDS if k.name == spec.kind).build(spec, context)

    def _try_resolve(self, judge_id: str) -> JudgeSpec | None:
        try:
            return self.resolve(judge_id)
        except UnknownJudgeError:
            return None


def judging_line(judging: Judging) -> str | None:
    """What re-scores and a jury cost, said before a run (None when neither is asked)."""
    asked = [s for s in judging.specs if s.repeats > 1]
    if not asked and not judging.jury:
        return None
    parts = [f"{s.judge_id} asked {s.repeats} times a case" for s in asked]
    if judging.jury:
        jurors = ", ".join(s.judge_id for s in judging.jurors)
        parts.append(f"a jury ({judging.jury}) of {jurors}, from their scores: no call of its own")
    once = sum(s.calls_per_case for s in judging.specs)
    return (
        f"judging: {'; '.join(parts)}: at least {judging.calls_per_case} LLM judge calls a case "
        f"({judging.calls_per_case / once:.1f}x one scoring each; cached, a re-run pays none)"
        if once
        else f"judging: {'; '.join(parts)}"
    )


def judging_rules(judging: Judging) -> dict[str, str]:
    """How a run's re-scores and jury make its per-case scores, for the scores' metadata."""
    rules = {}
    asked = {s.judge_id: s.repeats for s in judging.specs if s.repeats > 1}
    if asked:
        rules["re-scores"] = (
            ", ".join(f"{judge} x{k}" for judge, k in asked.items())
            + ": each case's score is the median of its re-scores (the lower middle one of an even "
            "number), <metric>_flip_rate the share of cases whose re-scores are not all equal"
        )
    if judging.jury:
        rules["jury"] = (
            f"{judging.jury} of {', '.join(s.judge_id for s in judging.jurors)}: per case the median "
            "of the jurors' scores; <metric>_juror_alpha their Krippendorff's alpha (ordinal)"
        )
    return rules


def _repeats_of(spec: JudgeSpec, repeats: JudgeRepeats) -> int:
    return repeats.get(spec.judge_id, 1) if isinstance(repeats, Mapping) else repeats


def builtin_judge_kind(name: str) -> str | None:
    """The built-in kind that claims ``name`` as a judge id (a custom metric may not take it)."""
    if name == JURY_JUDGE_ID:
        return "jury"
    for kind in JUDGE_KINDS:
        if kind.builtin and kind.parse(name, {}) is not None:
            return kind.name
    return None
