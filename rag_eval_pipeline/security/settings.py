"""The configuration file's ``security:`` section: what `rag-eval probe` runs when its flags do
not say."""

from __future__ import annotations

from pydantic import Field, field_validator

from rag_eval_pipeline.common.settings import Strict
from rag_eval_pipeline.retrieval.base import DEFAULT_TOP_K
from rag_eval_pipeline.security.attacks import DEFAULT_POISON_COUNT, Attack

DEFAULT_SAMPLE = 50


class SecuritySettings(Strict):
    """Security probes (docs/security.md)."""

    attacks: list[str] = Field(
        default_factory=lambda: [a.value for a in Attack],
        description="injection, poisoning, exfiltration",
    )
    sample: int = Field(default=DEFAULT_SAMPLE, ge=1, description="judgement-list cases probed")
    models: list[str] | None = Field(
        default=None, description="answer models and agents probed (default: the registered ones)"
    )
    poison_count: int = Field(
        default=DEFAULT_POISON_COUNT, ge=1, le=50, description="planted passages per case"
    )
    top_k: int = Field(default=DEFAULT_TOP_K, ge=1, description="passages given to an agent that takes them")

    @field_validator("attacks")
    @classmethod
    def _known(cls, attacks: list[str]) -> list[str]:
        return [a.value for a in Attack.parse_list(",".join(attacks))]
