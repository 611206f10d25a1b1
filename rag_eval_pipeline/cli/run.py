"""`rag-eval run` and `rag-eval backfill`: register the models, rebuild the knowledge base,
evaluate every model on it (in this process, or as one backfill for the daemon), print the
comparison and the paired verdicts."""

from __future__ import annotations

import argparse

import pandas as pd

from rag_eval_pipeline.cli.arguments import comma_list, non_negative, positive
from rag_eval_pipeline.cli.context import CommandError, instance_of, settings_of
from rag_eval_pipeline.cli.output import (
    comparison_table,
    error,
    paired_rule,
    paired_table,
    report_failure,
    seconds_since_start,
    ui_command,
)
from rag_eval_pipeline.config import DEFAULT_MODELS, ConfigError
from rag_eval_pipeline.data.hotpotqa import DatasetUnavailableError
from rag_eval_pipeline.data.judgement_file import is_judgement_list
from rag_eval_pipeline.definitions import build_definitions, elasticsearch_resource, llm_resource
from rag_eval_pipeline.instance.runs import run_evaluation
from rag_eval_pipeline.llm.providers import MissingApiKeyError
from rag_eval_pipeline.retrieval.elasticsearch import ElasticsearchUnavailableError
from rag_eval_pipeline.retrieval.embedder import SemanticExtraMissingError
from rag_eval_pipeline.storage.formats import CorruptArtifactError

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
# flags that set this process's resources: a backfill's runs are launched by the daemon, which
# reads the configuration file
PROCESS_ONLY = ("embedding_model", "elasticsearch", "concurrency", "refresh")


def register(commands: argparse._SubParsersAction) -> None:
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--models",
        type=comma_list,
        help="comma-separated answer configurations: names from the configuration file, or "
        f"MODEL or MODEL@MODE-kK (default: the file's, else {','.join(DEFAULT_MODELS)})",
    )
    options.add_argument("--profile", help="a profile of the configuration file: dev, pr, nightly")
    options.add_argument(
        "--sample", type=non_negative, help="questions to evaluate (default: the file's, else 35; 0 = all)"
    )
    options.add_argument("--selection", choices=["first", "random"], help="which N questions")
    options.add_argument("--seed", type=int, help="seed for --selection random")
    options.add_argument(
        "--dataset",
        help="'bundled' (the default: 500 HotpotQA questions shipped in the package, no network), "
        "'hub' (the full split from the Hugging Face hub), or a local HotpotQA file (JSON list, "
        "JSONL or parquet)",
    )
    options.add_argument(
        "--documents",
        metavar="DIR",
        help="with a judgement list as --dataset (a generated one, say): the folder of documents "
        "it is evaluated over (default: dataset.documents of the configuration file)",
    )
    options.add_argument(
        "--judges",
        type=comma_list,
        help="comma-separated judges: reference (no LLM), a Claude model such as "
        "claude-sonnet-4-6 (the STRICT rubric), ragas:<model> (RAGAS-style metrics); "
        "default: the configuration file's, else reference",
    )
    options.add_argument(
        "--concurrency", type=positive, help="LLM calls in flight at most (default: the file's, else 8)"
    )
    options.add_argument(
        "--embedding-model",
        help="adds vectors to the knowledge base for the semantic, hybrid and two_hop modes: minilm "
        "(all-MiniLM-L6-v2 on ONNX Runtime, the [semantic] extra, no PyTorch), an .onnx file or "
        "folder, or a sentence-transformers name or folder (the [semantic-torch] extra)",
    )
    options.add_argument(
        "--elasticsearch",
        metavar="URL",
        help="build the knowledge base in this Elasticsearch cluster (default: knowledge_base.backend "
        "of the configuration file, the embedded on-disk index unless it says elasticsearch)",
    )
    options.add_argument(
        "--refresh",
        action="store_true",
        help="ask every LLM call again this run instead of answering from the response cache",
    )
    options.add_argument("--verbose", action="store_true", help="show Dagster's log and tracebacks")
    run = commands.add_parser(
        "run",
        parents=[options],
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
    run.set_defaults(handler=handle, backfill=False)
    backfill = commands.add_parser(
        "backfill",
        parents=[options],
        help="the same as run --backfill",
        description="Rebuild the knowledge base here, submit the answer-model partitions as one "
        "Dagster backfill for the daemon of `rag-eval ui` or a deployment, follow it, then print "
        "the comparison.",
    )
    backfill.set_defaults(handler=handle, backfill=True)


def _cluster_problem(settings) -> str | None:
    """Whether the configured cluster answers, checked before any work."""
    try:
        resource = elasticsearch_resource(settings)
        if resource is not None:
            resource.client().info()
    except ConfigError as err:
        return str(err)
    except Exception as err:
        where = settings.knowledge_base.elasticsearch.url or "ELASTICSEARCH_URL"
        return (
            f"Elasticsearch at {where} does not answer ({type(err).__name__}): start it, or set "
            "knowledge_base.backend: embedded"
        )
    return None


def handle(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    flags = {name: getattr(args, name) for name in PROCESS_ONLY}
    if args.backfill and any(flags.values()):
        given = [f"--{name.replace('_', '-')}" for name, value in flags.items() if value]
        raise CommandError(
            f"{', '.join(given)} set{'s' if len(given) == 1 else ''} this process's resources; a "
            "backfill's runs are launched by the daemon from the configuration file: set it there "
            "(knowledge_base, concurrency) and submit again"
        )
    dataset, sample = args.dataset, args.sample
    if dataset and is_judgement_list(dataset):  # a list of this project's own format
        if args.backfill:
            raise CommandError(
                f"--dataset {dataset} is a judgement list, which replaces the dataset section; a "
                "backfill's runs read the configuration file: set dataset.kind custom and "
                "dataset.questions there and submit again"
            )
        settings = settings.with_judgement_list(dataset, args.sample, args.documents)
        dataset, sample = None, None
    elif args.documents:
        raise CommandError("--documents goes with a judgement list (--dataset FILE of this project's format)")
    elif settings.dataset.kind == "custom" and (dataset or sample is not None):
        raise CommandError(
            "a custom dataset is sampled in the configuration file, not with --dataset/--sample "
            "(or give --dataset a judgement list of this project's format)"
        )
    try:
        settings = settings.with_overrides(
            args.embedding_model, args.elasticsearch, args.concurrency, args.refresh
        )
        defs = build_definitions(settings)
    except (ConfigError, ValueError) as err:
        raise CommandError(str(err)) from None
    instance = instance_of(args)
    models = args.models or settings.configured_models()
    print(f"Dagster instance: {instance.root_directory}")
    llm = llm_resource(settings)
    try:
        report = run_evaluation(
            defs,
            instance,
            models,
            dataset=dataset,
            sample=sample,
            selection=args.selection,
            seed=args.seed,
            judges=args.judges,
            verbose=args.verbose,
            as_backfill=args.backfill,
            llm_missing=llm.missing,
            cluster_problem=lambda: _cluster_problem(settings),
        )
    except Exception as err:
        return report_failure(err, args.verbose, instance.root_directory, BAD_INPUT)
    comparison = report.comparison
    if "answer_model" not in comparison.columns:  # no model produced a summary
        comparison = pd.DataFrame({"answer_model": pd.Series(dtype=str)})
    evaluated = set(models) - set(report.failed)
    this_run = report.own_comparison  # what this command's runs stored, not a later run's
    print()
    print(comparison_table(this_run) if len(this_run) else "(no model of this run has a summary)")
    paired = paired_table(report.own_paired, evaluated)
    if paired:
        family = int(report.own_paired["family_size"].max())
        print(f"\n{paired_rule(settings.statistics.significance_level, family)}\n{paired}")
    others = sorted(set(comparison["answer_model"]) - set(models))
    if others:
        print(f"\n(model_comparison also holds earlier runs of: {', '.join(others)})")
    for note in report.notes:
        print(f"note: {note}")
    print(
        f"\nwall time {seconds_since_start():.1f}s; open the UI with: {ui_command(instance.root_directory)}"
    )
    for model, reason in report.failed.items():
        error(f"{model} failed: {reason}")
    return 1 if report.failed else 0
