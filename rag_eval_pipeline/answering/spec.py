"""What an answer-model partition means, resolved once: ``AnswerSpec``."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from enum import Enum

from rag_eval_pipeline.llm.targets import LLMEndpoint
from rag_eval_pipeline.metrics.diagnosis import AnswerSource
from rag_eval_pipeline.retrieval.base import RetrievalMode

MAX_NAME_LENGTH = 120
# a leading letter or digit: "." or ".." would name the storage folder itself
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]*")


class InvalidNameError(ValueError):
    """A partition key or model name outside the allowed grammar (it could name a path)."""


def check_name(name: str, what: str = "answer model") -> str:
    """Partition keys and model names: a letter or digit first, then letters, digits and
    ``._:@+-``, at most 120 characters, never ``..``. Storage paths are built from them, so
    nothing else is allowed anywhere."""
    if not name or len(name) > MAX_NAME_LENGTH or not _NAME.fullmatch(name) or ".." in name:
        raise InvalidNameError(
            f"invalid {what} name {name!r}: start with a letter or digit, then letters, digits and "
            f". _ : @ + - only (no '/', '\\', '..', spaces), at most {MAX_NAME_LENGTH} characters"
        )
    return name


class CalibrationRole(Enum):
    """What a sound judge must say of this model's correctness: the oracle bounds it from above,
    the null model from below; every other model is what is being measured."""

    MEASURED = None
    UPPER_BOUND = 1.0
    LOWER_BOUND = 0.0

    @property
    def expected_correctness(self) -> float | None:
        return self.value


@dataclass(frozen=True)
class AnswerSpec:
    """Everything an answer partition means: which provider and model answer, retrieving how
    many passages in which mode, with which prompt, and what a judge must give it if it is a
    calibration model. Consumers receive this, never a partition key to split."""

    partition_key: str
    provider: str
    model: str  # the model as the key or the configuration file names it
    model_id: str  # the model as its provider names it
    retrieval_mode: RetrievalMode
    top_k: int
    prompt_version: str
    system_prompt: str | None = None
    calibration: CalibrationRole = CalibrationRole.MEASURED
    source: AnswerSource = AnswerSource.GENERATIVE  # memory (an LLM), copied text, or the truth
    endpoint: LLMEndpoint | None = None  # where an LLM's calls go; None for offline models

    @property
    def answer_config(self) -> str:
        """The canonical ``MODEL@MODE-kK`` stored with every answer."""
        return f"{self.model}@{self.retrieval_mode.value}-k{self.top_k}"

    @property
    def fingerprint(self) -> str:
        """What the answers depend on, hashed: provider, model id, where its calls go, retrieval
        mode, k and prompt version. Stored with every answer and summary; results made under
        another fingerprint (the configuration points the name at another model) are stale."""
        endpoint = self.endpoint
        identity = {
            "provider": self.provider,
            "model_id": self.model_id,
            "endpoint": [endpoint.base_url, endpoint.model_file] if endpoint is not None else None,
            "retrieval_mode": self.retrieval_mode.value,
            "top_k": self.top_k,
            "prompt_version": self.prompt_version,
        }
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]
