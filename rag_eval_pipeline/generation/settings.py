"""The ``generation:`` section of ``rag_eval.yaml``: what a generated judgement list asks for
unless a run says otherwise. Present, the ``generated_judgement_list`` asset and its job are in
the code location; absent, neither is, so the UI's "Materialize all" never pays an LLM to write
questions nobody asked for. ``rag-eval generate`` works either way (its flags win)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.generation.spec import (
    DEFAULT_CASES,
    DEFAULT_GENERATOR,
    DEFAULT_MAX_DOCUMENT_SHARE,
    CaseType,
    GenerationSpec,
    parse_types,
)
from rag_eval_pipeline.llm.providers import parse_llm_name

ALL_TYPES = ",".join(t.value for t in CaseType)


class GenerationSettings(Strict):
    n: int = Field(
        default=DEFAULT_CASES, ge=1, description="candidate cases to write (the kept ones are fewer)"
    )
    model: str = Field(default=DEFAULT_GENERATOR, description="the generator: any LLM name")
    judge: str | None = Field(default=None, description="the validating judge; unset: the generator")
    types: str = Field(default=ALL_TYPES, description="single, multi_hop, comparison, unanswerable")
    seed: int = Field(default=0, description="the same seed plans the same cases")
    max_document_share: float = Field(
        default=DEFAULT_MAX_DOCUMENT_SHARE, gt=0, le=1, description="of the cases, per document"
    )
    max_answer_words: int = Field(default=6, ge=1, description="a longer reference answer is rejected")

    def overridden(self, overrides: Mapping[str, Any]) -> GenerationSettings:
        """These settings with a run's or the command line's choices (None: not chosen)."""
        chosen = {k: v for k, v in overrides.items() if v is not None}
        return GenerationSettings.model_validate({**self.model_dump(), **chosen})

    def spec(self) -> GenerationSpec:
        """Resolved once; an unknown model or type is a ValueError naming it."""
        for name in (self.model, self.judge):
            if name is not None and parse_llm_name(name) is None:
                raise ValueError(
                    f"unknown model {name!r}: use an LLM name (claude-sonnet-4-6, anthropic:<id>, "
                    "openai:<model>, local:<model>)"
                )
        return GenerationSpec(
            n=self.n,
            model=self.model,
            judge=self.judge or self.model,
            types=parse_types(self.types),
            seed=self.seed,
            max_document_share=self.max_document_share,
            max_answer_words=self.max_answer_words,
        )
