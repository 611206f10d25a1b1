"""`run` and `backfill`: what an evaluation is of and how it is judged."""

from __future__ import annotations

import argparse

from rag_eval_pipeline.answering.spec import DEFAULT_MODELS
from rag_eval_pipeline.cli.arguments import comma_list, non_negative, positive
from rag_eval_pipeline.cli.commands import Commands, Handler
from rag_eval_pipeline.cli.options import DAGSTER_LOG, add_dataset, add_models, add_verbose

DATASET_HELP = (
    "'bundled' (the default: 500 HotpotQA questions shipped in the package, no network), "
    "'hub' (the full split from the Hugging Face hub), 'multimodal-sample' (images, captions "
    "and questions with boxes, drawn offline), or a local HotpotQA file (JSON list, JSONL or parquet)"
)


def register(commands: Commands) -> None:
    """`run`, and `backfill` (the same options, the models' partitions given to the daemon)."""
    options = evaluation_options()
    shards = argparse.ArgumentParser(add_help=False)
    shards.add_argument(
        "--shards",
        type=positive,
        default=1,
        metavar="N",
        help="with a backfill on Celery workers: split each model's cases into N shards that N "
        "runs answer and judge at once; the model's own run then summarizes them all (default 1)",
    )
    run = commands.add_parser(
        "run",
        parents=[options, shards],
        help="register models and materialize the whole graph, then print the comparison",
        description="""Register the answer-model partitions, materialize every asset through the Dagster
        instance (the runs show in the UI), and print the model comparison.""",
    )
    run.add_argument(
        "--backfill",
        action="store_true",
        help="submit the models' partitions as one Dagster backfill for the instance's daemon "
        "(runs in parallel, shown in the UI's backfill view); in this process when no daemon runs",
    )
    run.set_defaults(handler=Handler("run"), backfill=False)
    backfill = commands.add_parser(
        "backfill",
        parents=[options, shards],
        help="the same as run --backfill",
        description="""Rebuild the knowledge base here, submit the answer-model partitions as one Dagster
        backfill for the daemon of `rag-eval ui` or a deployment, follow it, then print the comparison.""",
    )
    backfill.set_defaults(handler=Handler("run"), backfill=True)


def evaluation_options() -> argparse.ArgumentParser:
    """What an evaluation is of and how it is judged: the options `run` and `backfill` share."""
    options = argparse.ArgumentParser(add_help=False)
    add_models(
        options,
        "comma-separated answer configurations: names from the configuration file, or "
        f"MODEL or MODEL@MODE-kK (default: the file's, else {','.join(DEFAULT_MODELS)})",
    )
    options.add_argument("--profile", help="a profile of the configuration file: dev, pr, nightly")
    options.add_argument(
        "--sample", type=non_negative, help="questions to evaluate (default: the file's, else 35; 0 = all)"
    )
    options.add_argument("--selection", choices=["first", "random"], help="which N questions")
    options.add_argument("--seed", type=int, help="seed for --selection random")
    add_dataset(options, DATASET_HELP)
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
        "claude-sonnet-4-6 (the STRICT rubric), ragas:<model> (RAGAS-style metrics), claims:<model> "
        "(claim precision and recall, citation support); "
        "default: the configuration file's, else reference",
    )
    options.add_argument(
        "--judge-repeats",
        type=positive,
        metavar="K",
        help="ask each LLM judge K times per case (independent calls, cached apart): each case's "
        "median is its score, <metric>_flip_rate the share of cases whose K scores differ; K times "
        "the judge calls (default: judge_repeats of the configuration file, else 1)",
    )
    options.add_argument(
        "--jury",
        nargs="?",
        const="median",
        choices=["median", "weighted"],
        help="add the judge 'jury': per case the median of the run's LLM judges, with Krippendorff's "
        "alpha between them; 'weighted' also weighs them by agreement with people's labels "
        "(default: jury of the configuration file, else none)",
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
    add_verbose(options, DAGSTER_LOG)
    return options
