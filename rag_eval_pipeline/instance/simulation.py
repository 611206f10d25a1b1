"""Simulations through the instance, as `rag-eval simulate` drives them: the agent version a
partition, a run of the simulation job on it, and the run's tables read back (the session
sources' shared runner, ``instance.sessions``)."""

from __future__ import annotations

from collections.abc import Callable

import dagster as dg
import pandas as pd

from rag_eval_pipeline.defs.session_sources import SESSION_SOURCES
from rag_eval_pipeline.instance import sessions
from rag_eval_pipeline.instance.sessions import VersionOutcome
from rag_eval_pipeline.metrics.agreement import SIMULATION_PREFIX

SimulationOutcome = VersionOutcome  # one agent version's simulation as its run left it
SIMULATED = SESSION_SOURCES[SIMULATION_PREFIX]


def run_simulation(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    version: str,
    verbose: bool = False,
    echo: Callable[[str], None] = print,
) -> SimulationOutcome:
    """A run of the simulation job on the agent version's partition (shown in the UI)."""
    echo(f"agent version {version}: conversations, scores, summary ...")
    return sessions.run_version(defs, instance, SIMULATED, version, verbose)


def stored_scores(instance: dg.DagsterInstance, version: str) -> tuple[pd.DataFrame, str] | None:
    """The newest stored session scores of an agent version, with their run (None: never run)."""
    return sessions.stored_scores(instance, SIMULATED, version)
