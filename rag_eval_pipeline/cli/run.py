"""`rag-eval run` and `rag-eval backfill`: register the models, rebuild the knowledge base,
evaluate every model on it (in this process, or as one backfill for the daemon), print the
comparison and the paired verdicts."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import pandas as pd

from rag_eval_pipeline.cli.context import instance_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.cli.output import (
    comparison_table,
    error,
    language_table,
    paired_rule,
    paired_table,
    report_failure,
    wall_time_and_ui,
)
from rag_eval_pipeline.config import ConfigError, Settings
from rag_eval_pipeline.data.case_shards import MAX_SHARDS
from rag_eval_pipeline.data.hotpotqa import DatasetUnavailableError
from rag_eval_pipeline.data.judgement_file import is_judgement_list
from rag_eval_pipeline.data.multimodal_sample import MULTIMODAL_SAMPLE
from rag_eval_pipeline.definitions import build_definitions, elasticsearch_resource, llm_resource
from rag_eval_pipeline.instance.location import dagster_home_path
from rag_eval_pipeline.instance.runs import RunReport, run_evaluation
from rag_eval_pipeline.llm.providers import MissingApiKeyError
from rag_eval_pipeline.retrieval.elasticsearch.errors import ElasticsearchUnavailableError
from rag_eval_pipeline.retrieval.embedder import SemanticExtraMissingError
from rag_eval_pipeline.storage.formats import CorruptArtifactError

if TYPE_CHECKING:
    import dagster as dg

# what a user can fix in their input, configuration or environment: exit 2, one line each
BAD_INPUT = (
    ValueError,  # malformed rows, unknown names, invalid configuration, modes without vectors
    FileNotFoundError,
    MissingApiKeyError,
    DatasetUnavailableError,
    ElasticsearchUnavailableError,
    SemanticExtraMissingError,
    CorruptArtifactError,
)
SHOWN_REASONS = 3  # of why a model's answer calls failed, the most common
# flags run_evaluation takes under their own names
PASSED_AS_GIVEN = ("selection", "seed", "judges", "judge_repeats", "jury", "verbose", "shards")
# flags that set this process's resources: a backfill's runs are launched by the daemon, which
# reads the configuration file
PROCESS_ONLY = ("embedding_model", "elasticsearch", "concurrency", "refresh")


def _cluster_problem(settings) -> str | None:
    """Whether the configured cluster gives a run what it needs (it answers; the knowledge
    base's index can be read or created), checked before any work, in the cluster's own words."""
    try:
        resource = elasticsearch_resource(settings)
        if resource is None:
            return None
        from rag_eval_pipeline.retrieval.elasticsearch.cluster import access_problem  # the client, now

        problem = access_problem(
            resource.client(), settings.knowledge_base.elasticsearch.index_names.knowledge_base
        )
    except ConfigError as err:
        return str(err)
    except Exception as err:  # a client that cannot even be built (a malformed URL, a bad CA file)
        problem = f"cannot be reached ({type(err).__name__}: {err})"
    if problem is None:
        return None
    where = settings.knowledge_base.elasticsearch.url or "ELASTICSEARCH_URL"
    remedy = "start it or fix its access, or set knowledge_base.backend: embedded"
    return f"Elasticsearch at {where} {problem}: {remedy}"


def _multimodal_sample(args: argparse.Namespace) -> tuple[str, str]:
    """The multimodal sample drawn into the instance's folder: (its judgement list, its documents)."""
    from rag_eval_pipeline.data.multimodal_sample import write_multimodal_sample

    folder = dagster_home_path(args.dagster_home) / "samples" / MULTIMODAL_SAMPLE
    try:
        documents, questions = write_multimodal_sample(folder)
    except ImportError as err:
        raise CommandError(str(err)) from None
    return str(questions), str(documents)


def handle(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    _refuse_process_flags_in_a_backfill(args)
    settings, dataset, sample = _dataset_of(args, settings)
    settings, defs = _definitions_of(args, settings)
    _check_shards_and_workers(args, settings)
    instance = instance_of(args)
    models = args.models or settings.configured_models()
    if not models:
        raise CommandError(
            "no answer model to evaluate: the file's only entry is the agent the simulation talks to "
            "(name models, or set evaluate: true on its answer_models entry)"
        )
    print(f"Dagster instance: {instance.root_directory}")
    llm = llm_resource(settings)
    try:
        report = run_evaluation(
            defs,
            instance,
            models,
            dataset=dataset,
            sample=sample,
            as_backfill=args.backfill,
            llm_missing=llm.missing,
            cluster_problem=lambda: _cluster_problem(settings),
            **{name: getattr(args, name) for name in PASSED_AS_GIVEN},
        )
    except Exception as err:
        return report_failure(err, args.verbose, instance.root_directory, BAD_INPUT, args.config)
    _print_results(report, models, settings)
    _print_where_to_look(args, settings, instance.root_directory)
    for model, reason in report.failed.items():
        error(f"{model} failed: {reason}")
    return 1 if report.failed else 0


def _refuse_process_flags_in_a_backfill(args: argparse.Namespace) -> None:
    """A backfill's runs are launched by the daemon from the configuration file: flags that set
    this process's resources would be ignored there, so they are refused."""
    flags = {name: getattr(args, name) for name in PROCESS_ONLY}
    if args.backfill and any(flags.values()):
        given = [f"--{name.replace('_', '-')}" for name, value in flags.items() if value]
        raise CommandError(
            f"{', '.join(given)} set{'s' if len(given) == 1 else ''} this process's resources; a "
            "backfill's runs are launched by the daemon from the configuration file: set it there "
            "(knowledge_base, concurrency) and submit again"
        )


def _dataset_of(args: argparse.Namespace, settings: Settings) -> tuple[Settings, str | None, int | None]:
    """The settings with a judgement list given as --dataset in place of the dataset section, and
    what is left of --dataset and --sample for the run."""
    dataset, sample = args.dataset, args.sample
    if dataset == MULTIMODAL_SAMPLE:  # drawn into the instance folder, then run as any judgement list
        dataset, args.documents = _multimodal_sample(args)
    # a list of this project's own format
    if dataset and is_judgement_list(dataset, settings.dataset.encoding):
        if args.backfill:
            raise CommandError(
                f"--dataset {dataset} is a judgement list, which replaces the dataset section; a "
                "backfill's runs read the configuration file: set dataset.kind custom and "
                "dataset.questions there and submit again"
            )
        return settings.with_judgement_list(dataset, args.sample, args.documents), None, None
    if args.documents:
        raise CommandError("--documents goes with a judgement list (--dataset FILE of this project's format)")
    if settings.dataset.kind == "custom" and (dataset or sample is not None):
        raise CommandError(
            "a custom dataset is sampled in the configuration file, not with --dataset/--sample "
            "(or give --dataset a judgement list of this project's format)"
        )
    return settings, dataset, sample


def _definitions_of(args: argparse.Namespace, settings: Settings) -> tuple[Settings, dg.Definitions]:
    """The settings with this process's resource flags applied, and the definitions built on them."""
    try:
        settings = settings.with_overrides(
            args.embedding_model, args.elasticsearch, args.concurrency, args.refresh
        )
        return settings, build_definitions(settings)
    except (ConfigError, ValueError) as err:
        raise CommandError(str(err)) from None


def _check_shards_and_workers(args: argparse.Namespace, settings: Settings) -> None:
    """--shards within its bounds and with a backfill on workers; the workers able to take runs."""
    if args.shards > MAX_SHARDS:
        raise CommandError(f"--shards {args.shards}: at most {MAX_SHARDS} shards a model")
    if args.shards > 1 and (not args.backfill or settings.workers is None):
        raise CommandError(
            f"--shards {args.shards} spreads each model's cases over Celery workers: it goes with "
            "`rag-eval backfill` and a workers section in rag_eval.yaml (docs/deployment.md)"
        )
    if args.backfill and settings.workers is not None:  # its runs go to workers: can they?
        from rag_eval_pipeline.instance.workers import worker_problems

        problems = worker_problems(settings)
        if problems:
            raise CommandError("; ".join(problems))


def _print_results(report: RunReport, models: list[str], settings: Settings) -> None:
    """This run's comparison, by language, the paired verdicts, then its notes and warnings."""
    comparison = report.comparison
    if "answer_model" not in comparison.columns:  # no model produced a summary
        comparison = pd.DataFrame({"answer_model": pd.Series(dtype=str)})
    evaluated = set(models) - set(report.failed)
    this_run = report.own_comparison  # what this command's runs stored, not a later run's
    print()
    print(comparison_table(this_run) if len(this_run) else "(no model of this run has a summary)")
    if not report.own_by_language.empty:
        print(
            f"\nBy language (each metric over one language's cases, with its 95% interval):\n"
            f"{language_table(report.own_by_language)}"
        )
    paired = paired_table(report.own_paired, evaluated)
    if paired:
        family = int(report.own_paired["family_size"].max())
        print(f"\n{paired_rule(settings.statistics.significance_level, family)}\n{paired}")
    others = sorted(set(comparison["answer_model"]) - set(models))
    if others:
        print(f"\n(model_comparison also holds earlier runs of: {', '.join(others)})")
    for note in report.notes:
        print(f"note: {note}")
    for warning in report.warnings:
        print(f"warning: {warning}")
    _print_failed_calls(report)


def _print_failed_calls(report: RunReport) -> None:
    """Per model, how many answer calls failed and the most common reasons why."""
    for model, (failed, cases, reasons) in sorted(report.failures.items()):
        shown = "; ".join(f"{reason} ({count})" for reason, count in reasons[:SHOWN_REASONS])
        more = f"; and {len(reasons) - SHOWN_REASONS} other reasons" if len(reasons) > SHOWN_REASONS else ""
        print(
            f"warning: {failed} of {cases} answer calls of {model} failed (counted in error_rate, not as "
            f"declines; `rag-eval gate` fails on them unless max_error_rate allows): {shown}{more}"
        )


def _print_where_to_look(args: argparse.Namespace, settings: Settings, home: str) -> None:
    """The wall time, the command that opens the UI, and the report this run wrote."""
    print(wall_time_and_ui(home, args.config))
    from rag_eval_pipeline.cli.report import report_path

    written = report_path(settings, home)  # the home this run used, however named
    if written.is_file():
        print(f"report: {written}  (`rag-eval report --single-file` writes a copy to send)")
