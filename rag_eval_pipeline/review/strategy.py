"""How a review queue picks its cases: a name the command line and the configuration accept,
kept apart from the queue's code so that parsing a command imports nothing heavy."""

from __future__ import annotations

from enum import Enum


class Strategy(str, Enum):
    """``disagreement``: where two judges (or a judge and the reference) disagree most, then the
    rest at random; ``random``; ``low``: the judge's lowest scores first; ``failed``: answers or
    judgements that failed first, then at random."""

    DISAGREEMENT = "disagreement"
    RANDOM = "random"
    LOW = "low"
    FAILED = "failed"
