"""`rag-eval`: a thin command line over the Dagster definitions and the persistent instance."""

import argparse
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from rag_eval_pipeline import runner
from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.config import EXAMPLE_CONFIG, ConfigError, load_settings
from rag_eval_pipeline.data.hotpotqa import DatasetUnavailableError
from rag_eval_pipeline.defs.resources import MissingApiKeyError
from rag_eval_pipeline.retrieval.elasticsearch import ElasticsearchUnavailableError
from rag_eval_pipeline.retrieval.embedder import SemanticExtraMissingError

_IMPORTED_AT = time.perf_counter()
# what a user can fix in their input, configuration or environment: exit 2, one line each
BAD_INPUT = (
    ValueError,  # malformed rows, unknown names, invalid configuration, modes without vectors
    FileNotFoundError,
    MissingApiKeyError,
    DatasetUnavailableError,
    ElasticsearchUnavailableError,
    SemanticExtraMissingError,
)

_METRIC_ORDER = (
    "correctness",
    "faithfulness",
    "exact_match",
    "f1",
    "faithfulness_lexical",
    "context_relevance",
    "context_precision",
    "context_recall",
    "answer_relevancy",
    "answer_cost_usd",
    "judge_cost_usd",
)


def _csv(value: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected a comma-separated list of answer models")
    return items


def _at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type for whole numbers from ``minimum`` (0 or 1) up."""
    expected = "a positive number" if minimum == 1 else f"{minimum} or a positive number"

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
        if number < minimum:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
        return number

    return parse


_positive = _at_least(1)
_non_negative = _at_least(0)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-eval",
        description="Evaluate RAG answer models on HotpotQA with a Dagster asset graph.",
    )
    parser.add_argument(
        "--dagster-home",
        help="Dagster instance folder (default: $DAGSTER_HOME, else ./.dagster_home)",
    )
    parser.add_argument(
        "--config",
        help="configuration file (default: $RAG_EVAL_CONFIG, else ./rag_eval.yaml if present)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run_options = argparse.ArgumentParser(add_help=False)
    run_options.add_argument(
        "--models",
        type=_csv,
        help="comma-separated answer configurations: names from the configuration file, or "
        f"MODEL or MODEL@MODE-kK (default: the file's, else {','.join(runner.DEFAULT_MODELS)})",
    )
    run_options.add_argument("--profile", help="a profile of the configuration file: dev, pr, nightly")
    run_options.add_argument(
        "--sample", type=_non_negative, help="questions to evaluate (default: the file's, else 35; 0 = all)"
    )
    run_options.add_argument("--selection", choices=["first", "random"], help="which N questions")
    run_options.add_argument("--seed", type=int, help="seed for --selection random")
    run_options.add_argument(
        "--dataset",
        help="'bundled' (the default: 500 HotpotQA questions shipped in the package, no network), "
        "'hub' (the full split from the Hugging Face hub), or a local HotpotQA file (JSON list, "
        "JSONL or parquet)",
    )
    run_options.add_argument(
        "--judges",
        type=_csv,
        help="comma-separated judges: reference (no LLM), a Claude model such as "
        "claude-sonnet-4-6 (the STRICT rubric), ragas:<model> (RAGAS-style metrics); "
        "default: the configuration file's, else reference",
    )
    run_options.add_argument(
        "--concurrency", type=_positive, help="LLM calls in flight at most (default: the file's, else 8)"
    )
    run_options.add_argument(
        "--embedding-model",
        help="adds vectors to the knowledge base for the semantic, hybrid and two_hop modes: minilm "
        "(all-MiniLM-L6-v2 on ONNX Runtime, the [semantic] extra, no PyTorch), an .onnx file or "
        "folder, or a sentence-transformers name or folder (the [semantic-torch] extra)",
    )
    run_options.add_argument(
        "--elasticsearch",
        metavar="URL",
        help="build the knowledge base in this Elasticsearch cluster (default: $ELASTICSEARCH_URL "
        "if set, else the embedded on-disk index)",
    )
    run_options.add_argument(
        "--refresh",
        action="store_true",
        help="ask every LLM call again this run instead of answering from the response cache",
    )
    run_options.add_argument("--verbose", action="store_true", help="show Dagster's log and tracebacks")
    run = commands.add_parser(
        "run",
        parents=[run_options],
        help="register models and materialize the whole graph, then print the comparison",
        description="Register the answer-model partitions, materialize every asset through the "
        "Dagster instance (the runs show in the UI), and print the model comparison.",
    )
    run.add_argument(
        "--backfill",
        action="store_true",
        help="submit the models' partitions as one Dagster backfill for the instance's daemon "
        "(runs in parallel, shown in the UI's backfill view); in this process when no daemon runs",
    )
    commands.add_parser(
        "backfill",
        parents=[run_options],
        help="the same as run --backfill",
        description="Rebuild the knowledge base here, submit the answer-model partitions as one "
        "Dagster backfill for the daemon of `dagster dev` or a deployment, follow it, then print "
        "the comparison.",
    )

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

    worst = commands.add_parser("worst", help="the lowest-scoring cases of a model")
    worst.add_argument("--model", required=True, help="answer-model partition")
    worst.add_argument("--metric", default="correctness")
    worst.add_argument("--judge", help="judge id (default: the first judge with the metric)")
    worst.add_argument("-n", type=_positive, default=10, help="how many cases (default 10)")

    gate = commands.add_parser(
        "gate",
        help="fail (exit 1) when a metric is below its threshold: for CI pipelines",
        description="Reads the model's metric_summary and compares overall means with thresholds. "
        "Exit 0: all pass; 1: a metric is below its threshold or not measured; 2: no summary.",
    )
    gate.add_argument("--model", required=True, help="answer-model partition")
    gate.add_argument(
        "--min",
        dest="thresholds",
        action="append",
        metavar="METRIC=VALUE",
        help="e.g. faithfulness=0.7, or JUDGE/METRIC=VALUE; repeatable (default: the "
        "configuration file's thresholds)",
    )
    gate.add_argument("--judge", help="apply bare metrics to this judge only")
    gate.add_argument(
        "--min-n",
        type=_positive,
        help="fewest scored cases a gate may pass on; fewer: 'too few cases to conclude', exit 1 "
        "(default: statistics.min_cases of the configuration file, else 10)",
    )

    init = commands.add_parser("init", help="write a commented example configuration file")
    init.add_argument("path", nargs="?", default="rag_eval.yaml")

    models = commands.add_parser("models", help="list, add or remove answer-model partitions")
    model_commands = models.add_subparsers(dest="models_command", required=True)
    model_commands.add_parser("list", help="the registered answer models")
    add = model_commands.add_parser("add", help="register answer models (partitions)")
    add.add_argument("names", nargs="+", help="MODEL or MODEL@MODE-kK")
    remove = model_commands.add_parser("remove", help="unregister answer models")
    remove.add_argument("names", nargs="+")
    return parser


def _comparison_table(comparison) -> str:
    from rag_eval_pipeline.metrics.summary import to_markdown

    if comparison.empty:
        return "_no models evaluated_"
    if "stale" in comparison and not comparison["stale"].any():
        comparison = comparison.drop(columns="stale")  # a column only when something is stale
    metrics = [m for m in _METRIC_ORDER if m in comparison.columns]
    others = [c for c in comparison.columns if c not in metrics]
    return to_markdown(comparison[others + metrics])


def _paired_table(paired: pd.DataFrame, models: set[str]) -> str:
    """The paired verdicts on correctness between this run's models, one row per pair and judge."""
    from rag_eval_pipeline.metrics.summary import to_markdown

    if paired.empty or "metric" not in paired:
        return ""
    rows = paired[
        (paired["metric"] == "correctness") & paired["model_a"].isin(models) & paired["model_b"].isin(models)
    ]
    columns = ["model_a", "model_b", "judge_id", "n", "difference", "ci_low", "ci_high", "p_value", "verdict"]
    return to_markdown(rows[columns]) if len(rows) else ""


def _init(path: str) -> int:
    target = Path(path)
    if target.exists():
        print(f"error: {target} exists; not overwriting it", file=sys.stderr)
        return 2
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(EXAMPLE_CONFIG)
    print(f"wrote {target}: edit it, then `rag-eval --config {target} run`")
    return 0


def _inspect(args: argparse.Namespace, instance, settings) -> int:
    """explain, worst and gate: read stored assets, compute nothing new."""
    from rag_eval_pipeline.definitions import build_definitions
    from rag_eval_pipeline.metrics.gates import check_gates, gate_table, parse_threshold
    from rag_eval_pipeline.metrics.summary import to_markdown
    from rag_eval_pipeline.reporting.explain import explain_case, worst_cases

    defs = build_definitions(settings=settings)
    if args.model not in runner.registered_models(instance):
        print(f"error: no answer model '{args.model}' in {instance.root_directory}", file=sys.stderr)
        return 2
    try:
        if args.command == "gate":
            thresholds = dict(parse_threshold(t) for t in args.thresholds or [])
            thresholds = thresholds or dict(settings.thresholds)
            if not thresholds:
                print(
                    "error: no thresholds: pass --min METRIC=VALUE or set thresholds in the file",
                    file=sys.stderr,
                )
                return 2
            summary = runner.load_asset(defs, instance, "metric_summary", args.model)
            min_cases = args.min_n if args.min_n is not None else settings.statistics.min_cases
            results = check_gates(summary, thresholds, args.judge, min_cases)
            print(to_markdown(gate_table(results)))
            stale = runner.stale_reasons(defs, instance, args.model, summary)
            for reason in stale:
                print(f"stale: {reason}")
            failed = [r for r in results if not r.passed]
            verdict = f"FAILED {len(failed)} gate(s)" if failed else "all gates passed"
            if stale:  # numbers that do not describe the current evaluation never pass
                verdict = f"FAILED: stale results ({verdict} on them)"
            print(f"\n{args.model}: {verdict}")
            return 1 if failed or stale else 0
        answers = runner.load_asset(defs, instance, "candidate_answers", args.model)
        scores = runner.load_asset(defs, instance, "judge_scores", args.model)
        cases = runner.load_asset(defs, instance, "judgement_list")
        summary = runner.load_asset(defs, instance, "metric_summary", args.model)
        for reason in runner.stale_reasons(defs, instance, args.model, summary):
            print(f"note: stale results: {reason}")
        if args.command == "explain":
            manifest = runner.load_asset(defs, instance, "kb_index")
            run_ids = runner.lineage_run_ids(instance, args.model)
            if getattr(args, "run", None):
                scores = runner.load_materialization(instance, "judge_scores", args.model, args.run)
                run_ids["judge_scores"] = args.run
                try:  # the answers of the same run, when it answered too
                    answers = runner.load_materialization(instance, "candidate_answers", args.model, args.run)
                    run_ids["candidate_answers"] = args.run
                except FileNotFoundError:
                    print(
                        f"note: run {args.run} judged the answers of run {run_ids.get('candidate_answers')}"
                    )
            print(explain_case(args.qid, args.model, answers, scores, cases, manifest, run_ids))
        else:
            print(to_markdown(worst_cases(scores, answers, cases, args.metric, args.judge, args.n)))
    except (KeyError, ValueError, FileNotFoundError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"error: {message}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "init":
        return _init(args.path)
    try:
        settings = load_settings(args.config).with_profile(getattr(args, "profile", None))
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    reads_only = args.command in ("explain", "worst", "gate") or (
        args.command == "models" and args.models_command != "add"
    )
    if reads_only and not runner.instance_exists(args.dagster_home):
        print(
            f"error: no Dagster instance at {runner.dagster_home_path(args.dagster_home)}: "
            "`rag-eval run` creates one there; or point --dagster-home (or DAGSTER_HOME) at yours",
            file=sys.stderr,
        )
        return 2
    instance = runner.open_instance(args.dagster_home)
    if args.command == "models":
        if args.models_command == "list":
            for key in runner.registered_models(instance):
                print(key)
        elif args.models_command == "add":
            try:
                added = runner.add_models(instance, args.names, AnswerRegistry(settings.answer_models))
            except ValueError as err:
                print(f"error: {err}", file=sys.stderr)
                return 2
            print(f"added: {', '.join(added) or 'nothing new'}")
        else:
            unknown = sorted(set(args.names) - set(runner.registered_models(instance)))
            if unknown:
                registered = ", ".join(runner.registered_models(instance)) or "none"
                print(
                    f"error: not registered: {', '.join(unknown)} (registered: {registered})", file=sys.stderr
                )
                return 2
            removed = runner.remove_models(instance, args.names)
            print(f"removed: {', '.join(removed)}")
        return 0

    if args.command in ("explain", "worst", "gate"):
        return _inspect(args, instance, settings)

    from rag_eval_pipeline.definitions import (
        build_definitions,
        default_anthropic,
        default_knowledge_base,
        default_openai_compatible,
    )
    from rag_eval_pipeline.defs.resources import ElasticsearchResource

    as_backfill = args.command == "backfill" or args.backfill
    process_only = [
        flag
        for flag, value in (
            ("--embedding-model", args.embedding_model),
            ("--elasticsearch", args.elasticsearch),
            ("--concurrency", args.concurrency),
            ("--refresh", args.refresh),
        )
        if value
    ]
    if as_backfill and process_only:
        print(
            f"error: {', '.join(process_only)} set{'s' if len(process_only) == 1 else ''} this process's "
            "resources; a backfill's runs are launched by the daemon from the configuration file: "
            "set it there (knowledge_base, concurrency) and submit again",
            file=sys.stderr,
        )
        return 2
    overrides: dict = {"embedding_model": args.embedding_model}
    if args.elasticsearch:
        overrides["elasticsearch"] = ElasticsearchResource(url=args.elasticsearch)
    try:
        defs = build_definitions(
            default_knowledge_base(settings, **overrides),
            default_anthropic(settings, concurrency=args.concurrency, refresh_cache=args.refresh or None),
            default_openai_compatible(
                settings, concurrency=args.concurrency, refresh_cache=args.refresh or None
            ),
            settings=settings,
        )
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if settings.dataset.kind == "custom" and (args.dataset or args.sample is not None):
        print(
            "error: a custom dataset is sampled in the configuration file, not with --dataset/--sample",
            file=sys.stderr,
        )
        return 2
    models = args.models or [m.name for m in settings.answer_models] or list(runner.DEFAULT_MODELS)
    print(f"Dagster instance: {instance.root_directory}")
    try:
        report = runner.run_evaluation(
            defs,
            instance,
            models,
            dataset=args.dataset,
            sample=args.sample,
            selection=args.selection,
            seed=args.seed,
            judges=args.judges,
            verbose=args.verbose,
            as_backfill=as_backfill,
        )
    except Exception as err:
        return _report_failure(err, args.verbose, instance.root_directory)
    comparison = report.comparison
    if "answer_model" not in comparison.columns:  # no model produced a summary
        comparison = pd.DataFrame({"answer_model": pd.Series(dtype=str)})
    this_run = comparison[comparison["answer_model"].isin(set(models) - set(report.failed))]
    print()
    print(_comparison_table(this_run) if len(this_run) else "(no model of this run has a summary)")
    paired = _paired_table(report.paired, set(models) - set(report.failed))
    if paired:
        level = settings.statistics.significance_level
        print(
            f"\nPaired on correctness (the same cases; 'better' needs sign-flip p < {level} and "
            f"an interval that excludes 0):\n{paired}"
        )
    others = sorted(set(comparison["answer_model"]) - set(models))
    if others:
        print(f"\n(model_comparison also holds earlier runs of: {', '.join(others)})")
    print(
        f"\nwall time {_seconds_since_start():.1f}s; open the UI with: {_ui_command(instance.root_directory)}"
    )
    for model, reason in report.failed.items():
        print(f"error: {model} failed: {reason}", file=sys.stderr)
    return 1 if report.failed else 0


def _ui_command(home: str) -> str:
    """The command that opens this instance in the UI, with the dagster of this environment."""
    return f"DAGSTER_HOME={home} {Path(sys.executable).with_name('dagster')} dev"


def _seconds_since_start() -> float:
    """Wall time since this process started, imports included (what the user waited): from
    /proc on Linux, else from when this module was imported."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return uptime - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.perf_counter() - _IMPORTED_AT


def _report_failure(err: BaseException, verbose: bool, home: str) -> int:
    """One ``error:`` line per problem (the traceback only with --verbose); exit 2 for bad input
    or configuration, 1 for a run that failed for another reason."""
    cause = runner.root_cause(err)
    if verbose:
        traceback.print_exception(cause)
    problems = getattr(cause, "problems", None) or [runner.one_line(cause)]
    if isinstance(cause, BAD_INPUT):
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        return 2
    print(f"error: the run failed: {type(cause).__name__}: {problems[0]}", file=sys.stderr)
    print(f"error: its logs are in the UI: {_ui_command(home)}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
