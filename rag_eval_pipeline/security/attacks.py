"""The attacks a probe can run, by name: what the configuration and the command line accept
(nothing heavy imported: reading a configuration file builds nothing)."""

from __future__ import annotations

from enum import Enum

DEFAULT_POISON_COUNT = 5  # PoisonedRAG's five planted passages per question


class Attack(str, Enum):
    """A probe: a planted instruction to reply with a canary, planted passages asserting a false
    answer, or a planted request to put a secret in a URL."""

    INJECTION = "injection"
    POISONING = "poisoning"
    EXFILTRATION = "exfiltration"

    @classmethod
    def parse_list(cls, text: str) -> list[Attack]:
        """``injection,poisoning`` -> the attacks; an unknown name raises a ValueError naming them."""
        attacks = []
        for name in (n.strip() for n in text.split(",")):
            if not name:
                continue
            try:
                attacks.append(cls(name))
            except ValueError:
                known = ", ".join(a.value for a in cls)
                raise ValueError(f"unknown attack '{name}'; known: {known}") from None
        if not attacks:
            raise ValueError(f"no attack named; known: {', '.join(a.value for a in cls)}")
        return list(dict.fromkeys(attacks))
