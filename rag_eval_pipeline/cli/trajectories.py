"""`rag-eval trajectories`: an agent's sessions from its traces, scored against a reference of
expected tool calls: each agent version a partition of the instance (its runs in the UI), the
sessions and pass^k printed as a table, markdown or JSON; exit 1 when a threshold or the
reconstruction check fails, or `--fail-on-regression` finds a version worse than another."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from rag_eval_pipeline.cli.context import instance_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.cli.output import error, wall_time_and_ui
from rag_eval_pipeline.cli.session_json import add_session_judges, gate_records, pass_hat_k, version_record
from rag_eval_pipeline.common.plain import plain
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.definitions import build_definitions, llm_resource
from rag_eval_pipeline.instance.trajectories import (
    TrajectoryInputError,
    VersionOutcome,
    read_trajectories,
    run_trajectories,
)
from rag_eval_pipeline.metrics.diff import DiffSpec, Evaluation, diff_evaluations
from rag_eval_pipeline.metrics.gates import GateResult, check_gates, failed_gates_line
from rag_eval_pipeline.metrics.settings import parse_gate, parse_threshold
from rag_eval_pipeline.reporting.diff import as_json, as_markdown, as_text
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.trajectories.scoring import EFFICIENCY_METRICS, MATCH_METRICS
from rag_eval_pipeline.trajectories.settings import TrajectorySettings
from rag_eval_pipeline.trajectories.tables import PASS_HAT, SCORE_METRICS, pass_hat_k_rows

SESSION_FIGURES = ["tool_call_f1", *MATCH_METRICS, *EFFICIENCY_METRICS]


def _settings(args: argparse.Namespace) -> Settings:
    """The file's settings with the command's traces, reference and judges written in."""
    settings = settings_of(args)
    chosen = settings.trajectories or TrajectorySettings()
    updates: dict[str, Any] = {}
    if args.traces:
        updates["traces"] = [str(Path(p).resolve()) for p in args.traces]
    if args.reference:
        updates["reference"] = str(Path(args.reference).resolve())
    if args.judge:
        updates["judges"] = list(args.judge)
    return settings.model_copy(update={"trajectories": chosen.model_copy(update=updates)})


def _gates(args: argparse.Namespace, settings: Settings) -> list:
    try:
        given = [parse_threshold(t) for t in args.thresholds or []]
        gates = [parse_gate(key, value, args.bound) for key, value in given]
    except ValueError as err:
        raise CommandError(f"--min: {err}") from None
    return gates or settings.trajectories.gates()  # type: ignore[union-attr]


def session_records(scores: pd.DataFrame) -> list[dict[str, Any]]:
    """A record per session: ids, the five figures (matches as booleans), efficiency, calls."""
    records = []
    for row in scores.to_dict("records"):
        record = {k: plain(row[k]) for k in ("session_id", "task_id", "trial", "agent_version")}
        record["tool_call_f1"] = plain(row["tool_call_f1"])
        record.update({m: bool(row[m]) for m in MATCH_METRICS})
        record.update(
            {m: plain(row[m]) for m in ("tool_call_precision", "tool_call_recall", *EFFICIENCY_METRICS)}
        )
        record.update({k: row[k] for k in ("match_mode", "made_calls", "expected_calls", "span_ids")})
        record["succeeded"] = bool(row["succeeded"])
        records.append(record)
    return records


def as_document(outcomes: list[VersionOutcome], reconstruction: dict, gates: list[GateResult]) -> dict:
    """The JSON the command prints: sessions, pass^k over every session read, the
    reconstruction report, each version's summary and the thresholds' results."""
    scored = [o for o in outcomes if o.scores is not None]
    scores = pd.concat([o.scores for o in scored], ignore_index=True) if scored else pd.DataFrame()
    sessions = session_records(scores) if len(scores) else []
    judged: dict[str, dict[str, Any]] = {}
    for outcome in outcomes:
        add_session_judges(judged, outcome.judged)
    for record in sessions:
        if record["session_id"] in judged:
            record["judges"] = judged[record["session_id"]]
    values, intervals = pass_hat_k(pass_hat_k_rows(scores)) if len(scores) else ({}, {})
    return {
        "sessions": sessions,
        "pass_hat_k": values,
        "pass_hat_k_intervals": intervals,
        "reconstruction": reconstruction,
        "agent_versions": {
            o.version: version_record(o.run_id, o.error, o.failed_checks, o.summary) for o in outcomes
        },
        "gates": gate_records(gates),
    }


def _tables(outcome: VersionOutcome, markdown: bool) -> str:
    assert outcome.scores is not None and outcome.summary is not None
    sessions = outcome.scores[["session_id", "task_id", *SESSION_FIGURES]].copy()
    for metric in MATCH_METRICS:
        sessions[metric] = sessions[metric].map(lambda v: "yes" if v else "no")
    summary = outcome.summary[["judge_id", "metric", "mean", "ci_low", "ci_high", "n"]].copy()
    summary[["mean", "ci_low", "ci_high"]] = summary[["mean", "ci_low", "ci_high"]].astype(float).round(3)
    shown = summary[summary["metric"].isin([*SCORE_METRICS]) | summary["metric"].str.startswith(PASS_HAT)]
    judged = summary[~summary.index.isin(shown.index)]
    parts = [
        f"{'## ' if markdown else ''}{outcome.version}: {len(sessions)} sessions (run {outcome.run_id[:8]})",
        to_markdown(sessions.round(3)),
        "",
        to_markdown(shown),
    ]
    if len(judged):
        parts += ["", to_markdown(judged)]
    return "\n".join(parts)


def _diff(
    outcomes: list[VersionOutcome], before: str, after: str, args: argparse.Namespace, settings: Settings
):
    held = {o.version: o for o in outcomes if o.scores is not None}
    for version in (before, after):
        if version not in held:
            raise CommandError(
                f"--diff: no scored sessions of agent version {version} (scored: {', '.join(held) or 'none'})"
            )

    def evaluation(version: str) -> Evaluation:
        scores = held[version].scores
        assert scores is not None
        # a trial's "question" is its task, its "truth" the expected calls: a changed reference shows
        cases = scores[["qid", "task_id", "expected_calls"]].rename(
            columns={"task_id": "question", "expected_calls": "answer"}
        )
        table = scores[["qid", "judge_id", "prompt_version", *SCORE_METRICS]]
        return Evaluation(version, version, held[version].run_id, table, cases=cases)

    spec = DiffSpec.of(settings.statistics, min_cases=args.min_cases)
    return diff_evaluations(evaluation(before), evaluation(after), spec)


def handle(args: argparse.Namespace) -> int:
    settings = _settings(args)
    gates = _gates(args, settings)
    llm = llm_resource(settings)
    try:
        read = read_trajectories(settings, llm.missing)
    except TrajectoryInputError as err:
        raise CommandError(str(err)) from None
    if args.diff:
        absent = [v for v in args.diff if v not in read.versions]
        if absent:
            raise CommandError(
                f"--diff: the traces hold no agent version {', '.join(absent)} (they hold "
                f"{', '.join(read.versions) or 'none'})"
            )
    defs = build_definitions(settings)
    instance = instance_of(args)
    quiet = args.format == "json"
    with contextlib.redirect_stdout(sys.stderr) if quiet else contextlib.nullcontext():
        print(f"Dagster instance: {instance.root_directory}")
        outcomes = run_trajectories(defs, instance, read.versions, args.verbose)
    results = [
        g
        for o in outcomes
        if o.summary is not None
        for g in check_gates(o.summary, gates, min_cases=settings.statistics.min_cases)
    ]
    document = as_document(outcomes, read.report.as_dict(), results)
    run_diff = _diff(outcomes, args.diff[0], args.diff[1], args, settings) if args.diff else None
    if quiet:
        if run_diff is not None:
            document["diff"] = json.loads(as_json(run_diff))
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        markdown = args.format == "markdown"
        report = read.report
        print(
            f"\nreconstruction: {report.spans} spans, {report.sessions} sessions, {report.turns} turns; "
            f"{report.reattached} child spans took their root's session, {report.orphans} orphans"
        )
        for outcome in outcomes:
            print()
            print(
                _tables(outcome, markdown)
                if outcome.error is None
                else f"{outcome.version}: FAILED ({outcome.error})"
            )
        if run_diff is not None:
            print()
            print(as_markdown(run_diff) if markdown else as_text(run_diff))
        print(wall_time_and_ui(instance.root_directory, args.config))
    failed = False
    for outcome in outcomes:
        if outcome.error is not None:
            error(f"{outcome.version}: {outcome.error}")
            failed = True
    line = failed_gates_line(results)
    if line:
        error(f"trajectory threshold failed: {line}")
        failed = True
    if run_diff is not None and args.fail_on_regression and not run_diff.significant_regressions().empty:
        error(f"{args.diff[1]} is significantly worse than {args.diff[0]} (Holm-adjusted)")
        failed = True
    return 1 if failed else 0
