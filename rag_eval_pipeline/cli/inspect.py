"""`rag-eval explain`, `worst` and `gate`: read what is stored, compute nothing new."""

from __future__ import annotations

import argparse
from pathlib import Path

from rag_eval_pipeline.cli.context import history_of, instance_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.defs.names import (
    CANDIDATE_ANSWERS,
    IMAGE_CATALOG,
    JUDGE_SCORES,
    JUDGEMENT_LIST,
    KB_INDEX,
    METRIC_SUMMARY,
)
from rag_eval_pipeline.health.summary import HEALTH_RATES
from rag_eval_pipeline.instance.lineage import (
    History,
    lineage_run_ids,
    load_asset,
    load_materialization,
)
from rag_eval_pipeline.instance.location import dagster_home_path
from rag_eval_pipeline.metrics.directions import lower_is_better
from rag_eval_pipeline.metrics.freshness import judgement_list_version, summary_stale_reasons
from rag_eval_pipeline.metrics.gates import check_gates, error_rate_gate, gate_table
from rag_eval_pipeline.metrics.security import ASR_PREFIX
from rag_eval_pipeline.metrics.settings import Gate, parse_gate, parse_threshold
from rag_eval_pipeline.reporting.explain import explain_case, worst_cases
from rag_eval_pipeline.reporting.markdown import to_markdown


class _Stored:
    """One model's stored results, read on demand, and why they may be stale."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.settings: Settings = settings_of(args)
        self.instance: History = history_of(args)  # the home's files where they answer, no Dagster
        self.model: str = args.model
        if self.model not in (self.instance.registered_models() or []):
            raise CommandError(f"no answer model '{self.model}' in {dagster_home_path(args.dagster_home)}")

    def load(self, asset: str, partition: str | None = None):
        try:
            return load_asset(self.instance, asset, partition)
        except (FileNotFoundError, ValueError) as err:  # missing, damaged, or an unreadable pointer
            raise CommandError(str(err)) from None

    def stale(self, summary) -> list[str]:
        spec = self.settings.answer_registry().try_resolve(self.model)
        cases, manifest = self.load(JUDGEMENT_LIST), self.load(KB_INDEX)
        newest = self.instance.newest_finished_run(self.model)
        fingerprint = spec.fingerprint if spec else None
        return summary_stale_reasons(self.model, summary, fingerprint, cases["qid"], manifest.version, newest)


def _notes(stored: _Stored) -> None:
    for reason in stored.stale(stored.load(METRIC_SUMMARY, stored.model)):
        print(f"note: stale results: {reason}")


def handle_explain(args: argparse.Namespace) -> int:
    stored = _Stored(args)
    answers = stored.load(CANDIDATE_ANSWERS, stored.model)
    scores = stored.load(JUDGE_SCORES, stored.model)
    cases, manifest = stored.load(JUDGEMENT_LIST), stored.load(KB_INDEX)
    _notes(stored)
    run_ids = lineage_run_ids(stored.instance, stored.model)
    try:
        if args.run:
            scores = load_materialization(stored.instance, JUDGE_SCORES, stored.model, args.run)
            run_ids[JUDGE_SCORES] = args.run
            try:  # the answers of the same run, when it answered too
                answers = load_materialization(stored.instance, CANDIDATE_ANSWERS, stored.model, args.run)
                run_ids[CANDIDATE_ANSWERS] = args.run
            except FileNotFoundError:
                print(f"note: run {args.run} judged the answers of run {run_ids.get(CANDIDATE_ANSWERS)}")
            cases, manifest = _as_the_run_read_them(args, cases, manifest)
        catalog = _image_catalog(stored)
        print(explain_case(args.qid, stored.model, answers, scores, cases, manifest, run_ids, catalog))
        if catalog is not None:
            _overlays(stored, args.qid, answers, cases, catalog)
        newest = stored.instance.newest_finished_run(stored.model)
        if newest is not None and newest.worker:
            print(f"ran on worker: {newest.worker} (run {newest.run_id})")
    except (KeyError, FileNotFoundError) as err:
        raise CommandError(err.args[0] if isinstance(err, KeyError) and err.args else str(err)) from None
    return 0


def _as_the_run_read_them(args: argparse.Namespace, cases, manifest):
    """The judgement list and the index the run ``--run`` read (a later run may have sampled
    other questions): its truth, gold passages, images and boxes, not today's."""
    from rag_eval_pipeline.instance.lineage import snapshot_asset_of_run

    instance = instance_of(args, reads_only=True)
    read_cases = snapshot_asset_of_run(instance, args.run, JUDGEMENT_LIST)
    read_manifest = snapshot_asset_of_run(instance, args.run, KB_INDEX)
    return (
        read_cases if read_cases is not None else cases,
        read_manifest if read_manifest is not None else manifest,
    )


def _image_catalog(stored: _Stored):
    """The knowledge base's image catalog (None: an instance evaluated before images were read)."""
    try:
        return load_asset(stored.instance, IMAGE_CATALOG)
    except (FileNotFoundError, ValueError, KeyError):
        return None


def _overlays(stored: _Stored, qid: str, answers, cases, catalog) -> None:
    """The case's labelled images with its gold and predicted boxes drawn, as SVG files beside
    the instance's storage (they refer to the image files, never copy them)."""
    from rag_eval_pipeline.reporting.images import case_overlays

    folder = Path(stored.instance.storage_directory()) / "overlays" / stored.model / qid
    for name, svg in case_overlays(qid, stored.model, answers, cases, catalog).items():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(svg, encoding="utf-8")
        print(f"overlay: {folder / name}")


def handle_worst(args: argparse.Namespace) -> int:
    stored = _Stored(args)
    answers = stored.load(CANDIDATE_ANSWERS, stored.model)
    scores = stored.load(JUDGE_SCORES, stored.model)
    cases = stored.load(JUDGEMENT_LIST)
    _notes(stored)
    try:
        print(to_markdown(worst_cases(scores, answers, cases, args.metric, args.judge, args.n)))
    except KeyError as err:
        raise CommandError(err.args[0] if err.args else str(err)) from None
    return 0


def _session_gate(args: argparse.Namespace, prefix: str, version: str) -> int:
    """`gate --model trajectories:VERSION` (or ``simulation:VERSION``): an agent version's
    session summary against the thresholds given, else its section's ``thresholds``, as an
    evaluation's summary is."""
    from rag_eval_pipeline.cli.context import instance_of
    from rag_eval_pipeline.defs.session_sources import SESSION_SOURCES
    from rag_eval_pipeline.instance.lineage import NotMaterializedError, load_agent_asset

    settings = settings_of(args)
    source = SESSION_SOURCES[prefix]
    try:
        given = _given_thresholds(args)
        gates = [parse_gate(key, value, args.bound, args.judge) for key, value in given]
    except ValueError as err:
        raise CommandError(str(err)) from None
    section = getattr(settings, source.section)
    gates = gates or (section.gates() if section is not None else [])
    if not gates:
        raise CommandError(
            f"no thresholds: pass --min METRIC=VALUE or set {source.section}.thresholds in the file"
        )
    try:
        summary = load_agent_asset(
            instance_of(args, reads_only=True), source.summary, version, source.command
        )
    except NotMaterializedError as err:
        raise CommandError(str(err)) from None
    min_cases = args.min_n if args.min_n is not None else settings.statistics.min_cases
    results = check_gates(summary, gates, args.judge, min_cases)
    print(to_markdown(gate_table(results)))
    failed = [r for r in results if not r.passed]
    print(f"\n{args.model}: {f'FAILED {len(failed)} gate(s)' if failed else 'all gates passed'}")
    return 1 if failed else 0


def _with_probes(stored: _Stored, summary):
    """The summary with the model's stored security probes as rows (``asr_<attack>``)."""
    from rag_eval_pipeline.instance.lineage import artifacts_folder
    from rag_eval_pipeline.metrics.security import with_probes
    from rag_eval_pipeline.storage.probes import load_probes

    probes = load_probes(artifacts_folder(stored.instance), stored.model)
    if probes is None:
        print(f"note: {stored.model} was never probed here: `rag-eval probe --models {stored.model}`")
    return with_probes({stored.model: summary}, probes)[stored.model]


def _with_health(args: argparse.Namespace, stored: _Stored, summary):
    """The summary with the model's knowledge-base health rates as rows (judge ``kb_health``)."""
    import pandas as pd

    from rag_eval_pipeline.cli.health import stored_health
    from rag_eval_pipeline.health.summary import gate_rows

    record = stored_health(args, stored.model)
    return pd.concat([summary, gate_rows(record, list(summary.columns))], ignore_index=True)


def _given_thresholds(args: argparse.Namespace) -> list[tuple[str, float]]:
    """``--min`` and ``--max`` thresholds as (key, value); a ``--max`` names a metric better
    lower (a per-case budget figure is not one: ``_given_budgets`` takes those)."""
    from rag_eval_pipeline.metrics.budgets import BUDGET_FIGURES

    given = [parse_threshold(t) for t in args.thresholds or []]
    for key, value in (parse_threshold(t) for t in getattr(args, "maxima", None) or []):
        metric = key.rsplit("/", 1)[-1]
        if metric in BUDGET_FIGURES:
            continue
        if not lower_is_better(metric):
            raise ValueError(
                f"--max {key}={value:g}: {metric} is better higher; give it with --min "
                f"(--max takes a metric better lower or a budget: {', '.join(BUDGET_FIGURES)})"
            )
        given.append((key, value))
    return given


def _given_budgets(args: argparse.Namespace) -> list[tuple[str, float]]:
    """The ``--max`` values that bound a per-case budget figure (latency, cost)."""
    from rag_eval_pipeline.metrics.budgets import BUDGET_FIGURES

    maxima = (parse_threshold(t) for t in getattr(args, "maxima", None) or [])
    return [(key, value) for key, value in maxima if key.rsplit("/", 1)[-1] in BUDGET_FIGURES]


def handle_gate(args: argparse.Namespace) -> int:
    from rag_eval_pipeline.metrics.agreement import session_source

    sessions_of = session_source(args.model)
    if sessions_of is not None:
        return _session_gate(args, *sessions_of)
    stored = _Stored(args)
    from rag_eval_pipeline.metrics.budgets import budget_table, budgets_of, check_budgets

    try:
        given = _given_thresholds(args)
        maxima = _given_budgets(args)
        budgets = budgets_of(maxima) if maxima else [] if given else budgets_of(stored.settings.budgets)
        thresholds = [parse_gate(key, value, args.bound, args.judge) for key, value in given] or (
            [
                Gate(g.metric, g.threshold, g.judge_id or args.judge, g.group, g.bound)
                for g in stored.settings.gates()
            ]
            if not maxima
            else []
        )
    except ValueError as err:
        raise CommandError(str(err)) from None
    if not thresholds and not budgets:
        raise CommandError(
            "no thresholds: pass --min METRIC=VALUE or --max FIGURE=VALUE, "
            "or set thresholds or budgets in the file"
        )
    summary = stored.load(METRIC_SUMMARY, stored.model)
    if any(g.metric.startswith(ASR_PREFIX) for g in thresholds):
        summary = _with_probes(stored, summary)
    if any(g.metric in HEALTH_RATES for g in thresholds):
        summary = _with_health(args, stored, summary)
    min_cases = args.min_n if args.min_n is not None else stored.settings.statistics.min_cases
    allowed = args.max_error_rate if args.max_error_rate is not None else stored.settings.max_error_rate
    results = [*check_gates(summary, thresholds, args.judge, min_cases), error_rate_gate(summary, allowed)]
    print(to_markdown(gate_table(results)))
    held = check_budgets(summary, budgets)
    if held:
        print("\n" + to_markdown(budget_table(held)))
    for result in held:
        if not result.passed:
            print(result.line)
    failed = [r for r in results if not r.passed] + [r for r in held if not r.passed]
    stale = stored.stale(summary)
    if args.judgement_list:
        evaluated = judgement_list_version(stored.load(JUDGEMENT_LIST))
        if evaluated != args.judgement_list:
            stale.append(
                f"the judgement list is version {evaluated}, not the pinned {args.judgement_list} "
                "(cases were added, removed or edited since it was pinned)"
            )
    for reason in stale:
        print(f"stale: {reason}")
    verdict = f"FAILED {len(failed)} gate(s)" if failed else "all gates passed"
    if stale:  # numbers that do not describe the current evaluation never pass
        verdict = f"FAILED: stale results ({verdict} on them)"
    print(f"\n{stored.model}: {verdict}")
    return 1 if failed or stale else 0
