"""`rag-eval explain`, `worst` and `gate`: read what is stored, compute nothing new."""

from __future__ import annotations

import argparse

import dagster as dg

from rag_eval_pipeline.cli.arguments import positive
from rag_eval_pipeline.cli.context import CommandError, instance_of, settings_of
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.defs.freshness import stale_reasons
from rag_eval_pipeline.defs.names import (
    CANDIDATE_ANSWERS,
    JUDGE_SCORES,
    JUDGEMENT_LIST,
    KB_INDEX,
    METRIC_SUMMARY,
)
from rag_eval_pipeline.defs.partitions import registered_models
from rag_eval_pipeline.defs.resources import SettingsResource
from rag_eval_pipeline.instance.lineage import lineage_run_ids, load_asset, load_materialization
from rag_eval_pipeline.metrics.freshness import judgement_list_version
from rag_eval_pipeline.metrics.gates import Bound, Gate, check_gates, gate_table, parse_gate, parse_threshold
from rag_eval_pipeline.reporting.explain import explain_case, worst_cases
from rag_eval_pipeline.reporting.markdown import to_markdown


def register(commands: argparse._SubParsersAction) -> None:
    explain = commands.add_parser(
        "explain",
        help="the lineage of one case's scores",
        description="The question, ground truth, retrieved passages (gold marked), the answer, "
        "each judge's scores and rationales, prompt versions, model ids, index version and the "
        "Dagster runs that produced each step.",
    )
    explain.add_argument("qid", help="question id")
    explain.add_argument("--model", required=True, help="answer-model partition")
    explain.add_argument(
        "--run",
        metavar="RUN_ID",
        help="the case as this Dagster run scored it (each materialization's files are kept), "
        "not as the latest did",
    )
    explain.set_defaults(handler=handle_explain)

    worst = commands.add_parser("worst", help="the lowest-scoring cases of a model")
    worst.add_argument("--model", required=True, help="answer-model partition")
    worst.add_argument("--metric", default="correctness")
    worst.add_argument("--judge", help="judge id (default: the first judge with the metric)")
    worst.add_argument("-n", type=positive, default=10, help="how many cases (default 10)")
    worst.set_defaults(handler=handle_worst)

    gate = commands.add_parser(
        "gate",
        help="fail (exit 1) when a metric is below its threshold: for CI pipelines",
        description="Reads the model's metric_summary and compares overall means with thresholds. "
        "Exit 0: all pass; 1: a metric is below its threshold, not measured, or stale; 2: no summary.",
    )
    gate.add_argument("--model", required=True, help="answer-model partition")
    gate.add_argument(
        "--min",
        dest="thresholds",
        action="append",
        metavar="METRIC=VALUE",
        help="e.g. faithfulness=0.7, JUDGE/METRIC=VALUE, or tag:TAG/METRIC=VALUE (also type: and "
        "level:) for one group of cases; repeatable (default: the configuration file's thresholds)",
    )
    gate.add_argument("--judge", help="apply bare metrics to this judge only")
    gate.add_argument(
        "--bound",
        choices=[b.value for b in Bound],
        default=Bound.MEAN.value,
        help="what must clear each --min threshold: the mean (default), or the lower end of its "
        "95%% interval (a release gate: 0.32 on 25 cases does not clear 0.30)",
    )
    gate.add_argument(
        "--min-n",
        type=positive,
        help="fewest scored cases a gate may pass on; fewer: 'too few cases to conclude', exit 1 "
        "(default: statistics.min_cases of the configuration file, else 10)",
    )
    gate.add_argument(
        "--judgement-list",
        metavar="VERSION",
        help="the judgement list's version the results must be on (a pinned regression set: `rag-eval "
        "run` and `production promote` print it); another list fails the gate",
    )
    gate.set_defaults(handler=handle_gate)


class _Stored:
    """One model's stored results, read on demand, and why they may be stale."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.settings: Settings = settings_of(args)
        self.instance: dg.DagsterInstance = instance_of(args, reads_only=True)
        self.model: str = args.model
        if self.model not in registered_models(self.instance):
            raise CommandError(f"no answer model '{self.model}' in {self.instance.root_directory}")
        self.defs = build_definitions(self.settings)

    def load(self, asset: str, partition: str | None = None):
        try:
            return load_asset(self.defs, self.instance, asset, partition)
        except (FileNotFoundError, ValueError) as err:  # missing, damaged, or an unreadable pointer
            raise CommandError(str(err)) from None

    def stale(self, summary) -> list[str]:
        registry = SettingsResource.from_settings(self.settings).answer_registry()
        cases, manifest = self.load(JUDGEMENT_LIST), self.load(KB_INDEX)
        return stale_reasons(self.instance, self.model, summary, registry, cases["qid"], manifest.version)


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
        print(explain_case(args.qid, stored.model, answers, scores, cases, manifest, run_ids))
    except (KeyError, FileNotFoundError) as err:
        raise CommandError(err.args[0] if isinstance(err, KeyError) and err.args else str(err)) from None
    return 0


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


def handle_gate(args: argparse.Namespace) -> int:
    stored = _Stored(args)
    try:
        given = [parse_threshold(t) for t in args.thresholds or []]
        thresholds = [parse_gate(key, value, args.bound, args.judge) for key, value in given] or [
            Gate(g.metric, g.threshold, g.judge_id or args.judge, g.group, g.bound)
            for g in stored.settings.gates()
        ]
    except ValueError as err:
        raise CommandError(str(err)) from None
    if not thresholds:
        raise CommandError("no thresholds: pass --min METRIC=VALUE or set thresholds in the file")
    summary = stored.load(METRIC_SUMMARY, stored.model)
    min_cases = args.min_n if args.min_n is not None else stored.settings.statistics.min_cases
    results = check_gates(summary, thresholds, args.judge, min_cases)
    print(to_markdown(gate_table(results)))
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
    failed = [r for r in results if not r.passed]
    verdict = f"FAILED {len(failed)} gate(s)" if failed else "all gates passed"
    if stale:  # numbers that do not describe the current evaluation never pass
        verdict = f"FAILED: stale results ({verdict} on them)"
    print(f"\n{stored.model}: {verdict}")
    return 1 if failed or stale else 0
