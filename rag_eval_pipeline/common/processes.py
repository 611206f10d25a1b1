"""Whether a process of this machine is still running: how a `rag-eval` command's runs are told
apart from those of one that was killed, and from one that is between its own runs."""

from __future__ import annotations

import os


def process_alive(pid: int) -> bool:
    """True while ``pid`` runs on this machine (someone else's process too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True
