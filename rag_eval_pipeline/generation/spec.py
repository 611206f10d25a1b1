"""What a generation run asks for, resolved once: how many cases, of which types, the generator
and the validating judge, and the bars a case must clear to be kept."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

GENERATE_PROMPT_VERSION = "generate-v2"  # v2: passages are data, never instructions
# what a generation asks for unless the configuration or the command line says otherwise
DEFAULT_CASES = 100
DEFAULT_GENERATOR = "claude-sonnet-4-6"
DEFAULT_MAX_DOCUMENT_SHARE = 0.1


class CaseType(str, Enum):
    """The kinds of question a case can be, in HotpotQA's terms where they have one."""

    SINGLE = "single"  # answered by one passage
    MULTI_HOP = "multi_hop"  # a bridge: the first passage leads to the second, which holds the answer
    COMPARISON = "comparison"  # two subjects compared on a property both passages state
    UNANSWERABLE = "unanswerable"  # about a subject of the documents, which do not hold the answer

    @property
    def sources(self) -> int:
        return 2 if self in (CaseType.MULTI_HOP, CaseType.COMPARISON) else 1


def parse_types(text: str) -> tuple[CaseType, ...]:
    """``single,multi_hop`` -> the types, each once; a ValueError naming the known ones."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    known = ", ".join(t.value for t in CaseType)
    types = []
    for name in names:
        try:
            types.append(CaseType(name))
        except ValueError:
            raise ValueError(f"unknown question type {name!r}: use {known}") from None
    if not types:
        raise ValueError(f"no question type: use {known}")
    return tuple(dict.fromkeys(types))


@dataclass(frozen=True)
class GenerationSpec:
    """One generation run: ``n`` candidate cases spread over ``types`` (equal shares), from
    ``model``, validated by ``judge``; a document may be the source of at most
    ``max_document_share`` of the cases; a reference answer has at most ``max_answer_words``; a
    question as similar as ``duplicate_overlap`` (content words) or ``duplicate_cosine`` (vectors)
    to a kept one is a duplicate."""

    n: int
    model: str
    judge: str
    types: tuple[CaseType, ...] = tuple(CaseType)
    seed: int = 0
    max_document_share: float = DEFAULT_MAX_DOCUMENT_SHARE
    max_answer_words: int = 6
    duplicate_overlap: float = 0.8
    duplicate_cosine: float = 0.92
    prompt_version: str = GENERATE_PROMPT_VERSION
