"""`rag-eval simulate`: simulated users talk to the team's agent, every scenario over several
trials, as a partition (the agent's version) of the instance; printed as a table per scenario
with pass^k and the transcript of the worst session, or as JSON in the layout `rag-eval
trajectories` prints. Exit 2 on input that cannot be used, 1 when a threshold fails, a
scenario line was refused or the run failed, 0 otherwise."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    import dagster as dg

from rag_eval_pipeline.answering.agents.provider import holds_conversations
from rag_eval_pipeline.cli.context import instance_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.cli.output import error, wall_time_and_ui
from rag_eval_pipeline.cli.session_json import add_session_judges, gate_records, pass_hat_k, version_record
from rag_eval_pipeline.common.plain import plain
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.definitions import build_definitions, llm_resource
from rag_eval_pipeline.instance.simulation import SimulationOutcome, run_simulation, stored_scores
from rag_eval_pipeline.llm.providers import parse_llm_name
from rag_eval_pipeline.metrics.diff import DiffSpec, Evaluation, RunDiff, diff_evaluations
from rag_eval_pipeline.metrics.gates import GateResult, check_gates, failed_gates_line
from rag_eval_pipeline.metrics.settings import parse_gate, parse_threshold
from rag_eval_pipeline.reporting.diff import as_json, as_markdown, as_text
from rag_eval_pipeline.reporting.simulation import simulation_section
from rag_eval_pipeline.trajectories.scoring import MATCH_METRICS
from rag_eval_pipeline.trajectories.simulation.scenarios import ScenarioFileError, read_scenarios
from rag_eval_pipeline.trajectories.simulation.settings import SimulationSettings
from rag_eval_pipeline.trajectories.simulation.success import unread_negations
from rag_eval_pipeline.trajectories.simulation.tables import TASK_SUCCESS, worst_transcript
from rag_eval_pipeline.trajectories.simulation.users import user_note
from rag_eval_pipeline.trajectories.tables import PASS_HAT, SCORE_METRICS, SUMMARY_COLUMNS

UNVERSIONED = "unversioned"
COUNTS = ("agent_calls", "agent_cached", "user_calls", "user_cached")


def _settings(args: argparse.Namespace) -> Settings:
    """The file's settings with the command's options written into its simulation section."""
    settings = settings_of(args)
    chosen = settings.simulation or SimulationSettings()
    updates: dict[str, Any] = {"scenarios": str(Path(args.scenarios).resolve())} if args.scenarios else {}
    for option in ("agent", "trials", "user", "judge", "tool_calls"):
        if getattr(args, option) is not None:
            updates[option] = getattr(args, option)
    if args.session_judge:
        updates["session_judges"] = list(args.session_judge)
    try:
        chosen = SimulationSettings.model_validate({**chosen.model_dump(), **updates})
    except ValueError as err:
        raise CommandError(f"simulate: {str(err).splitlines()[-1].strip()}") from None
    update: dict[str, Any] = {"simulation": chosen}
    if args.rerun:  # ask the agent and the simulated user again, and keep the new answers
        update["cache"] = settings.cache.model_copy(update={"refresh": True})
    return settings.model_copy(update=update)


def _gates(args: argparse.Namespace, settings: Settings) -> list:
    try:
        gates = [parse_gate(k, v, args.bound) for k, v in (parse_threshold(t) for t in args.thresholds or [])]
    except ValueError as err:
        raise CommandError(f"--min: {err}") from None
    return gates or settings.simulation.gates()  # type: ignore[union-attr]


def _preflight(settings: Settings) -> tuple[str, list[str], list[str]]:
    """The agent's version, the scenario lines refused and the notes due before a run (what the
    simulated user model plays when some scenarios are scripted, the languages whose negations
    a marker is not checked against); what makes any run futile (no
    scenario file, no such agent, a user or judge model without its key): an error line."""
    chosen = settings.simulation
    assert chosen is not None
    if not chosen.scenarios:
        raise CommandError(
            "give the scenarios: --scenarios FILE (a JSON object per line, docs/trajectories.md)"
        )
    if not chosen.agent:
        raise CommandError("give the agent: --agent NAME (an http or python entry of answer_models)")
    try:
        read = read_scenarios(Path(chosen.scenarios))
    except ScenarioFileError as err:
        raise CommandError(str(err)) from None
    if not read.scenarios:
        for line in read.errors[:-1]:
            error(line)
        raise CommandError(f"{read.errors[-1]} (no scenario left to run)")
    entry = settings.answer_model(chosen.agent)
    if entry is None:
        named = ", ".join(m.name for m in settings.answer_models) or "none"
        raise CommandError(f"--agent {chosen.agent}: no such entry in answer_models (named: {named})")
    if not holds_conversations(entry):
        raise CommandError(
            f"--agent {chosen.agent} is a {entry.provider} entry: a conversation needs an http or "
            "python agent"
        )
    llm = llm_resource(settings)
    needed = []
    unscripted = [s.task_id for s in read.scenarios if s.user_turns is None]
    if unscripted:
        needed.append(("--user", chosen.user, f"scenario {unscripted[0]} has no user_turns"))
    rubric = [s.task_id for s in read.scenarios if s.success.rubric]
    if rubric:
        needed.append(("--judge", chosen.judge or "", f"scenario {rubric[0]} has a rubric"))
    needed += [("--session-judge", name, "a session judge") for name in chosen.session_judges]
    for option, name, why in needed:
        target = parse_llm_name(name) if name else None
        if target is None:
            raise CommandError(
                f"{why}: give {option} MODEL (claude-haiku-4-5, openai:<model>, local:<model>)"
            )
        missing = llm.missing(target.endpoint)
        if missing:
            raise CommandError(f"{option} {name} needs {missing}")
    notes = [n for n in (user_note(read.scenarios, chosen.user),) if n] + unread_negations(read.scenarios)
    return getattr(entry, "version", None) or UNVERSIONED, read.errors, notes


def session_records(outcome: SimulationOutcome) -> list[dict[str, Any]]:
    """A record per session: ids, task_success, stop_reason, turns, the criteria, the trajectory
    figures (absent where the scenario expects no tool calls) and the transcript."""
    assert outcome.scores is not None and outcome.sessions is not None
    sessions = outcome.sessions.set_index("session_id")
    judged: dict[str, dict[str, Any]] = {}
    add_session_judges(judged, outcome.judged)
    records = []
    for row in outcome.scores.to_dict("records"):
        extra = sessions.loc[row["session_id"]]
        record = {k: plain(row[k]) for k in ("session_id", "task_id", "trial", "agent_version")}
        value = plain(row[TASK_SUCCESS])
        record.update(
            task_success=None if value is None else bool(value),
            stop_reason=row["stop_reason"],
            stop_detail=row["stop_detail"] or None,
            turns=int(row["turns"]),
            simulator_fault=plain(row["simulator_fault"]) or None,
            reply_missing=row["reply_missing"] or None,
            rubric_passed=plain(row["rubric_passed"]),
        )
        for metric in SCORE_METRICS:
            figure = plain(row.get(metric))
            record[metric] = bool(figure) if metric in MATCH_METRICS and figure is not None else figure
        record.update(made_calls=row["made_calls"], expected_calls=row["expected_calls"])
        record["tool_calls_from"] = extra["calls_from"]
        record["transcript"] = json.loads(extra["transcript"])
        if row["session_id"] in judged:
            record["judges"] = judged[row["session_id"]]
        records.append(record)
    return records


def as_document(outcome: SimulationOutcome, gates: list[GateResult], refused: list[str]) -> dict[str, Any]:
    summary = outcome.summary if outcome.summary is not None else pd.DataFrame(columns=SUMMARY_COLUMNS)
    values, intervals = pass_hat_k(summary[summary["metric"].str.startswith(PASS_HAT)].to_dict("records"))
    faults = summary[summary["metric"] == "simulator_faults"]
    sessions = outcome.sessions
    return {
        "sessions": session_records(outcome) if outcome.error is None else [],
        "pass_hat_k": values,
        "pass_hat_k_intervals": intervals,
        "simulator_faults": int(faults["n"].iloc[0]) if len(faults) else 0,
        "calls": {k: int(sessions[k].sum()) for k in COUNTS} if sessions is not None else {},
        "invalid_scenarios": refused,
        "agent_versions": {
            outcome.version: version_record(outcome.run_id, outcome.error, outcome.failed_checks, summary)
        },
        "gates": gate_records(gates),
    }


def section(outcome: SimulationOutcome, agent: str, markdown: bool) -> str:
    """The report's section of this run: the scenarios, pass^k, the worst transcript."""
    assert outcome.scores is not None and outcome.summary is not None and outcome.sessions is not None
    worst = worst_transcript(outcome.sessions, outcome.scores)
    title = f"{agent}@{outcome.version} (run {outcome.run_id[:8]})"
    heading = "## " if markdown else ""
    return simulation_section(title, outcome.scores, outcome.summary, worst, heading)


def _evaluation(version: str, scores: pd.DataFrame, run_id: str) -> Evaluation:
    """A version's sessions as one side of a diff: a trial is a case (``task/trial-n``), its
    scenario the question and the expected calls the truth (a changed scenario shows)."""
    cases = scores[["qid", "task_id", "expected_calls"]].rename(
        columns={"task_id": "question", "expected_calls": "answer"}
    )
    table = scores[["qid", "judge_id", "prompt_version"]].copy()
    for metric in (TASK_SUCCESS, *SCORE_METRICS):
        table[metric] = pd.to_numeric(scores[metric], errors="coerce")
    return Evaluation(version, version, run_id, table, cases=cases)


def _diff(
    instance: dg.DagsterInstance, before: str, outcome: SimulationOutcome, settings: Settings
) -> RunDiff:
    stored = stored_scores(instance, before)
    if stored is None:
        raise CommandError(f"--diff: agent version {before} has no stored simulation (run it first)")
    assert outcome.scores is not None
    after = _evaluation(outcome.version, outcome.scores, outcome.run_id)
    return diff_evaluations(_evaluation(before, *stored), after, DiffSpec.of(settings.statistics))


def handle(args: argparse.Namespace) -> int:
    settings = _settings(args)
    gates = _gates(args, settings)
    version, refused, notes = _preflight(settings)
    for line in refused:
        error(line)
    for line in notes:
        print(f"note: {line}", file=sys.stderr)
    defs = build_definitions(settings)
    instance = instance_of(args)
    quiet = args.format == "json"
    with contextlib.redirect_stdout(sys.stderr) if quiet else contextlib.nullcontext():
        print(f"Dagster instance: {instance.root_directory}")
        outcome = run_simulation(defs, instance, version, args.verbose)
    run_diff = (
        _diff(instance, args.diff, outcome, settings) if args.diff and outcome.scores is not None else None
    )
    results = (
        check_gates(outcome.summary, gates, min_cases=settings.statistics.min_cases)
        if outcome.summary is not None
        else []
    )
    if quiet:
        document = as_document(outcome, results, refused)
        if run_diff is not None:
            document["diff"] = json.loads(as_json(run_diff))
        print(json.dumps(document, indent=2, ensure_ascii=False))
    elif outcome.error is None:
        markdown = args.format == "markdown"
        print()
        print(section(outcome, str(settings.simulation.agent), markdown))  # type: ignore[union-attr]
        if run_diff is not None:
            print()
            print(as_markdown(run_diff) if markdown else as_text(run_diff))
        print(wall_time_and_ui(instance.root_directory, args.config))
    if outcome.error is None and outcome.scores is not None:
        for row in outcome.scores.itertuples():
            if row.stop_reason != "user_stop":
                print(
                    f"note: {row.session_id} ended by {row.stop_reason}: {row.stop_detail}", file=sys.stderr
                )
            elif isinstance(row.simulator_fault, str):
                print(
                    f"note: {row.session_id} flagged {row.simulator_fault}: left out of the agent's figures",
                    file=sys.stderr,
                )
    failed = bool(refused)
    if outcome.error is not None:
        error(f"{version}: {outcome.error}")
        failed = True
    if run_diff is not None and args.fail_on_regression and not run_diff.significant_regressions().empty:
        error(f"{outcome.version} is significantly worse than {args.diff} (Holm-adjusted)")
        failed = True
    line = failed_gates_line(results)
    if line:
        error(f"simulation threshold failed: {line}")
        failed = True
    return 1 if failed else 0
