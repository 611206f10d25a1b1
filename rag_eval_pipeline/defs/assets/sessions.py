"""What the assets of every session source share (traced sessions, simulated ones): the agent
version partitions, the session judges, the summary's quality gates and the job over one
version. Each is parameterised by the source's row of ``defs.session_sources``, so a new source
writes only the assets that read its own sessions."""

import asyncio
import warnings
from dataclasses import dataclass

import dagster as dg
import pandas as pd

from rag_eval_pipeline.defs.assets.progress import progress_logger
from rag_eval_pipeline.defs.names import AGENT_VERSION_PARTITIONS
from rag_eval_pipeline.defs.resources import SettingsResource
from rag_eval_pipeline.defs.session_sources import SessionSource
from rag_eval_pipeline.judges.engine import JudgeCaller
from rag_eval_pipeline.metrics.gates import check_gates, failed_gates_line, gate_table
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.trajectories.judges import judge_sessions

AGENT_VERSIONS = dg.DynamicPartitionsDefinition(name=AGENT_VERSION_PARTITIONS)
# a check per agent version is Dagster's partitioned asset check, a preview (as defs/checks.py
# says): its warning stays out of every CLI call
warnings.filterwarnings("ignore", category=dg.PreviewWarning, message=".*partitions_def.*")


def judged_sessions(
    context, judge_ids, sessions, tasks, services, settings: SettingsResource, trajectory_judge: bool
) -> pd.DataFrame:
    """Every session judged by each of ``judge_ids`` (traced or simulated sessions alike), one
    table of verdicts with its judge's id; no judge: an empty table."""
    registry = settings.judge_registry()
    frames = []
    for judge_id in judge_ids:
        spec = registry.resolve(judge_id)
        assert spec.endpoint is not None and spec.model_id is not None
        client, prices = services.client(spec.endpoint), services.prices_for(spec.endpoint)
        rows = asyncio.run(
            judge_sessions(
                sessions,
                tasks,
                lambda: JudgeCaller(client, spec.model_id, prices),  # noqa: B023 (used before the next judge)
                trajectory_judge,
                settings.settings.concurrency,
                progress_logger(context, f"sessions judged by {judge_id}"),
                client.aclose,
            )
        )
        frames.append(pd.DataFrame(rows).assign(judge_id=judge_id))
    return (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["session_id", "judge_id"])
    )


def judges_metadata(judge_ids: list[str], services) -> dict[str, object]:
    """Which judges read the sessions and the calls they cost, as a judge-scores asset says it."""
    return {"judges": ", ".join(judge_ids) or "none configured", "api_calls": services.api_calls}


def sessions_gate_result(
    summary: pd.DataFrame, gates: list, min_cases: int, noun: str
) -> dg.AssetCheckResult:
    """A session summary (traced or simulated) against its section's thresholds, as one check
    result: the failed gates' line, or that every one passed, or that ``noun`` has none set."""
    results = check_gates(summary, gates, min_cases=min_cases)
    failed = failed_gates_line(results)
    return dg.AssetCheckResult(
        passed=not failed,
        description=failed or ("every threshold passed" if gates else f"no {noun} threshold set"),
        metadata={"gates": dg.MetadataValue.md(to_markdown(gate_table(results)) if results else "none")},
    )


def quality_gates_check(summary: dg.AssetsDefinition, source: SessionSource) -> dg.AssetChecksDefinition:
    """The source's summary held to its section's thresholds, blocking, per agent version."""

    @dg.asset_check(
        asset=summary,
        name="quality_gates",
        partitions_def=AGENT_VERSIONS,
        blocking=True,
        description=f"The summary against ``{source.section}.thresholds`` (none: passes, saying so).",
    )
    def quality_gates(held: pd.DataFrame, settings: SettingsResource) -> dg.AssetCheckResult:
        chosen = getattr(settings.settings, source.section)
        gates = chosen.gates() if chosen is not None else []
        return sessions_gate_result(held, gates, settings.settings.statistics.min_cases, source.noun)

    return quality_gates


@dataclass(frozen=True)
class SessionDefinitions:
    """A session source's assets, their checks and the job over one agent version."""

    assets: list
    checks: list
    jobs: list


def session_definitions(
    source: SessionSource, assets: list, checks: list, description: str
) -> SessionDefinitions:
    """The source's assets and checks, with its summary's quality gates (the last asset is the
    summary) and the job that runs them on one agent version."""
    job = dg.define_asset_job(
        source.job,
        selection=dg.AssetSelection.assets(*assets),
        partitions_def=AGENT_VERSIONS,
        description=description,
    )
    return SessionDefinitions(list(assets), [*checks, quality_gates_check(assets[-1], source)], [job])
