"""What an answer-model partition means, resolved once: ``AnswerSpec``."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rag_eval_pipeline.llm.targets import LLMEndpoint
from rag_eval_pipeline.metrics.diagnosis import AnswerSource
from rag_eval_pipeline.retrieval.base import RetrievalMode

MAX_NAME_LENGTH = 120
AGENT_RETRIEVAL = "agent"  # the retrieval_mode of an agent's cases: it retrieved on its own
# evaluated when the configuration names no answer model: a real baseline and the two bounds
DEFAULT_MODELS = ("extractive-baseline", "oracle", "null")
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
    calibration model; or which agent of the team's answers, retrieving on its own (``agent``,
    its configuration entry; ``retrieval_mode`` None). Consumers receive this, never a partition
    key to split."""

    partition_key: str
    provider: str
    model: str  # the model as the key or the configuration file names it
    model_id: str  # the model as its provider names it
    retrieval_mode: RetrievalMode | None  # None: the agent retrieves its own contexts
    top_k: int | None
    prompt_version: str
    system_prompt: str | None = None
    calibration: CalibrationRole = CalibrationRole.MEASURED
    source: AnswerSource = AnswerSource.GENERATIVE  # memory (an LLM), copied text, or the truth
    endpoint: LLMEndpoint | None = None  # where an LLM's calls go; None for offline models
    agent: Any = field(default=None, compare=False)  # the agent's configuration entry
    agent_identity: str | None = None  # what an agent's answers depend on (its fingerprint part)
    retrieval_identity: str | None = None  # a mode's own settings (rerank: its stage and model)

    @property
    def is_agent(self) -> bool:
        return self.agent is not None

    @property
    def repeats(self) -> int:
        """Answers asked per question (an agent's ``repeats``; one for every model)."""
        return int(getattr(self.agent, "repeats", 1))

    @property
    def agent_matches_by_text(self) -> bool:
        """An agent whose contexts come back as texts alone (no ids, no titles): matching them to
        the knowledge base needs its text index."""
        return self.agent is not None and self.agent.mapping().matches_by_text

    @property
    def calls_in_flight(self) -> int | None:
        """An agent's own bound on calls in flight (None: the provider's, for models)."""
        return getattr(self.agent, "concurrency", None)

    @property
    def answer_config(self) -> str:
        """The canonical ``MODEL@MODE-kK`` stored with every answer (an agent: its name)."""
        if self.retrieval_mode is None:
            return self.model
        return f"{self.model}@{self.retrieval_mode.value}-k{self.top_k}"

    @property
    def fingerprint(self) -> str:
        """What the answers depend on, hashed: provider, model id, where its calls go, retrieval
        mode, k and prompt version (an agent: its entry, version and file). Stored with every
        answer and summary; results made under another fingerprint (the configuration points
        the name at another model or agent build) are stale."""
        endpoint = self.endpoint
        identity = {
            "provider": self.provider,
            "model_id": self.model_id,
            "endpoint": [endpoint.base_url, endpoint.model_file] if endpoint is not None else None,
            "retrieval_mode": self.retrieval_mode.value if self.retrieval_mode is not None else None,
            "top_k": self.top_k,
            "prompt_version": self.prompt_version,
        }
        if self.agent_identity is not None:  # absent for models: their fingerprints stay as they were
            identity["agent"] = self.agent_identity
        if self.retrieval_identity is not None:  # only modes with settings of their own
            identity["retrieval"] = self.retrieval_identity
        return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]
