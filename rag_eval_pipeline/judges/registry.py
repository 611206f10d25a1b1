"""The one place a judge id becomes a ``JudgeSpec``, and a spec a judge.

Judge ids: ``reference``; an LLM name (``claude-sonnet-4-6``, ``anthropic:<id>``,
``openai:<model>``, ``local:smollm2``) or ``strict:<LLM name>`` for the STRICT rubric;
``ragas:<LLM name>`` for RAGAS-style metrics; and the configuration file's custom metrics by name.
LLM names are resolved by ``llm/targets.py``, the same as answer models'. Adding a judge kind is one entry in
``JUDGE_KINDS`` plus its own module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rag_eval_pipeline.judges.base import Judge
from rag_eval_pipeline.judges.custom import PythonMetricJudge, RubricMetricJudge, load_callable
from rag_eval_pipeline.judges.ragas import RAGAS_METRICS, RagasLLMJudge
from rag_eval_pipeline.judges.reference import REFERENCE_JUDGE_ID, REFERENCE_METRICS, ReferenceJudge
from rag_eval_pipeline.judges.strict import STRICT_METRICS, StrictLLMJudge
from rag_eval_pipeline.llm.services import LLMServices
from rag_eval_pipeline.llm.targets import (
    ANTHROPIC,
    ANTHROPIC_ENDPOINT,
    LLMEndpoint,
    LLMTarget,
    parse_llm_name,
)

if TYPE_CHECKING:
    from rag_eval_pipeline.config import PythonMetricSettings, RubricMetricSettings

DEFAULT_LLM_JUDGE = "claude-sonnet-4-6"
Embed = Callable[[list[str]], np.ndarray]


class UnknownJudgeError(ValueError):
    pass


@dataclass(frozen=True)
class JudgeSpec:
    """A judge resolved once: its id and kind, the model behind it (if any), the metrics it
    declares and which of them are on the 0 / 0.5 / 1 scale."""

    judge_id: str
    kind: str
    metrics: tuple[str, ...]
    three_point_metrics: tuple[str, ...] = ()
    provider: str | None = None
    model_id: str | None = None
    endpoint: LLMEndpoint | None = None

    @property
    def needs_llm(self) -> bool:
        return self.provider is not None


@dataclass(frozen=True)
class JudgeKind:
    """A family of judges: ``parse`` claims a judge id (None if it is not its own), ``build``
    makes the judge from its spec."""

    name: str
    parse: Callable[[str], JudgeSpec | None]
    build: Callable[[JudgeSpec, LLMServices, Embed | None], Judge]


def _llm_target(name: str, prefix: str) -> LLMTarget | None:
    """``<prefix>:<LLM name>`` -> the LLM it names, else None; a bare model after the prefix is
    a Claude model id, as it always was (``ragas:claude-opus-4-5``)."""
    kind, sep, model = name.partition(":")
    if not (sep and kind == prefix and model):
        return None
    return parse_llm_name(model) or LLMTarget(ANTHROPIC, model, ANTHROPIC_ENDPOINT)


def _parse_reference(name: str) -> JudgeSpec | None:
    if name != REFERENCE_JUDGE_ID:
        return None
    return JudgeSpec(name, "reference", REFERENCE_METRICS, ("correctness", "context_relevance"))


def _parse_strict(name: str) -> JudgeSpec | None:
    target = _llm_target(name, "strict") or parse_llm_name(name)
    if target is None:
        return None
    return JudgeSpec(
        name, "strict", STRICT_METRICS, STRICT_METRICS, target.provider, target.model_id, target.endpoint
    )


def _parse_ragas(name: str) -> JudgeSpec | None:
    target = _llm_target(name, "ragas")
    if target is None:
        return None
    return JudgeSpec(name, "ragas", RAGAS_METRICS, (), target.provider, target.model_id, target.endpoint)


JUDGE_KINDS: tuple[JudgeKind, ...] = (
    JudgeKind("reference", _parse_reference, lambda spec, services, embed: ReferenceJudge()),
    JudgeKind(
        "strict",
        _parse_strict,
        lambda spec, services, embed: StrictLLMJudge(
            spec.judge_id,
            spec.model_id or "",
            services.client(spec.endpoint),
            services.prices_for(spec.endpoint),
        ),
    ),
    JudgeKind(
        "ragas",
        _parse_ragas,
        lambda spec, services, embed: RagasLLMJudge(
            spec.judge_id,
            spec.model_id or "",
            services.client(spec.endpoint),
            services.prices_for(spec.endpoint),
            embed,
        ),
    ),
)


class JudgeRegistry:
    """Judge ids -> specs -> judges, including the configuration file's custom metrics (Python
    callables and LLM rubrics), which every run scores beside the named judges."""

    def __init__(self, custom_metrics: Sequence[PythonMetricSettings | RubricMetricSettings] = ()) -> None:
        self._custom = {m.name: m for m in custom_metrics}

    def resolve(self, judge_id: str) -> JudgeSpec:
        for kind in JUDGE_KINDS:
            spec = kind.parse(judge_id)
            if spec is not None:
                return spec
        if judge_id in self._custom:
            return self._custom_spec(judge_id)
        raise UnknownJudgeError(
            f"unknown judge '{judge_id}': use reference, an LLM (claude-sonnet-4-6, anthropic:<id>, "
            "openai:<model>, local:<model>) for the STRICT rubric, or ragas:<LLM> for RAGAS-style metrics"
        )

    def for_run(self, judge_ids: Iterable[str]) -> list[JudgeSpec]:
        """The named judges, then every custom metric of the configuration file."""
        specs = [self.resolve(j) for j in dict.fromkeys(judge_ids)]
        return specs + [self._custom_spec(name) for name in self._custom]

    def declared_metrics(self, judge_ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """What each judge declares, for judge ids found in stored scores (unknown ids omitted)."""
        return {j: spec.metrics for j in judge_ids if (spec := self._try_resolve(j)) is not None}

    def three_point_metrics(self, judge_ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        return {j: spec.three_point_metrics for j in judge_ids if (spec := self._try_resolve(j)) is not None}

    def build(self, spec: JudgeSpec, services: LLMServices, embed: Embed | None = None) -> Judge:
        if spec.kind == "python":
            return PythonMetricJudge(spec.judge_id, load_callable(self._custom[spec.judge_id].callable))
        if spec.kind == "rubric":
            rubric = self._custom[spec.judge_id]
            return RubricMetricJudge(
                spec.judge_id,
                rubric.instructions,  # type: ignore[union-attr]
                rubric.allowed_scores,  # type: ignore[union-attr]
                spec.model_id or "",
                services.client(spec.endpoint),
                services.prices_for(spec.endpoint),
            )
        return next(k for k in JUDGE_KINDS if k.name == spec.kind).build(spec, services, embed)

    def _try_resolve(self, judge_id: str) -> JudgeSpec | None:
        try:
            return self.resolve(judge_id)
        except UnknownJudgeError:
            return None

    def _custom_spec(self, name: str) -> JudgeSpec:
        metric = self._custom[name]
        if metric.kind == "python":
            return JudgeSpec(name, "python", (name,))
        target = parse_llm_name(metric.model)
        if target is None:
            raise UnknownJudgeError(f"custom metric '{name}': unknown model '{metric.model}'")
        return JudgeSpec(name, "rubric", (name,), (), target.provider, target.model_id, target.endpoint)
