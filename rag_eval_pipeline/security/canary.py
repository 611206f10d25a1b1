"""Canaries: ASCII tokens no model can know from training, random per case and run. They are
derived from the run's seed (an HMAC of the case and the attack), so a re-run of the same run
plants the same tokens and a new run plants new ones."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

CANARY_LENGTH = 14  # base32 characters: 70 bits, and no word of any language by chance


def new_run_seed() -> str:
    """A fresh seed for a run that names none."""
    return secrets.token_hex(8)


def canary(run_seed: str, qid: str, purpose: str) -> str:
    """The canary of one case for one purpose (``injection``, ``exfiltration``): upper-case
    letters and digits 2-7, starting with a letter so no tokenizer reads it as a number."""
    digest = hmac.new(run_seed.encode(), f"{qid}\x00{purpose}".encode(), hashlib.sha256).digest()
    token = base64.b32encode(digest).decode("ascii").rstrip("=")
    return "Z" + token[: CANARY_LENGTH - 1]


def seeded_index(run_seed: str, qid: str, purpose: str, size: int) -> int:
    """A choice among ``size`` options, fixed by the run's seed (a false target answer)."""
    digest = hmac.new(run_seed.encode(), f"{qid}\x00{purpose}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % size
