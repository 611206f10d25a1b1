"""A named answer model of the configuration file, whichever provider it names: one type,
discriminated by ``provider`` (a model of an LLM or offline provider, or a team's agent over
HTTP, as a Python callable or as a file of answers). Settings only: no provider is built here."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Discriminator, Tag

from rag_eval_pipeline.answering.agents.settings import (
    FILE,
    HTTP,
    PYTHON,
    AnswersFileEntry,
    HttpAgentEntry,
    PythonAgentEntry,
)
from rag_eval_pipeline.answering.settings import ModelEntry

# the entry type of each agent provider (the provider table checks it has one for each)
AGENT_ENTRY_TYPES: dict[str, type] = {HTTP: HttpAgentEntry, PYTHON: PythonAgentEntry, FILE: AnswersFileEntry}
ENTRY_TAGS = ("model", *AGENT_ENTRY_TYPES)  # the union's tags, which are not fields of the file


def _entry_kind(entry: Any) -> str:
    """Which entry type validates a named answer model: its provider's, else ``ModelEntry``
    (which names the unknown provider with the registered ones)."""
    provider = entry.get("provider") if isinstance(entry, dict) else getattr(entry, "provider", None)
    return provider if provider in AGENT_ENTRY_TYPES else "model"


AnswerModelSettings = Annotated[
    Annotated[ModelEntry, Tag("model")]
    | Annotated[HttpAgentEntry, Tag(HTTP)]
    | Annotated[PythonAgentEntry, Tag(PYTHON)]
    | Annotated[AnswersFileEntry, Tag(FILE)],
    Discriminator(_entry_kind),
]
