"""`rag-eval review export|import`: a queue of cases for people to label (a labelling page and
a JSONL), and their labels taken in (a file, or Phoenix's HUMAN annotations), after which each
judge is measured against people and the labelled models' means are corrected."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rag_eval_pipeline.cli.arguments import positive
from rag_eval_pipeline.cli.context import CommandError, instance_of, settings_of
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.instance.errors import one_line, root_cause
from rag_eval_pipeline.instance.lineage import NotMaterializedError
from rag_eval_pipeline.instance.review import (
    apply_labels,
    evaluated_cases,
    export_queue,
    keep_label_file,
    keep_labels,
)
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.review.labels import LabelFileError, read_label_file
from rag_eval_pipeline.review.phoenix import PhoenixLabelsError, read_phoenix_labels
from rag_eval_pipeline.review.queue import QueueSpec, Strategy


def register(commands: argparse._SubParsersAction) -> None:
    review = commands.add_parser("review", help="human review: export a queue to label, import the labels")
    review_commands = review.add_subparsers(dest="review_command", required=True)
    export = review_commands.add_parser(
        "export",
        help="write a review queue: a labelling page and a JSONL of empty label rows",
        description="Picks cases of a model's latest evaluation (seeded) and writes "
        "<review folder>/<queue>.html (one self-contained page: label each metric 0 / 0.5 / 1, save "
        "downloads <queue>.labels.jsonl) and <queue>.jsonl (the same cases as empty label rows). "
        "The judges' verdicts are hidden unless --show-judge.",
    )
    export.add_argument("--model", required=True, help="the answer model whose cases to review")
    export.add_argument("--n", type=positive, default=40, help="cases in the queue (default 40)")
    export.add_argument(
        "--strategy",
        choices=[s.value for s in Strategy],
        default=Strategy.DISAGREEMENT.value,
        help="disagreement (judges, or a judge and the reference, disagree most; then at random), "
        "random (unbiased corrected means), low (lowest scores first), failed (failures first)",
    )
    export.add_argument("--judge", help="one judge's metrics and verdicts (default: every judge's)")
    export.add_argument("--seed", type=int, default=0, help="the same seed picks the same cases")
    export.add_argument("--name", help="the queue's name (default <model>-<strategy>-<date>)")
    export.add_argument("--show-judge", action="store_true", help="show the judges' verdicts (not blind)")
    export.set_defaults(handler=handle_export)

    take = review_commands.add_parser(
        "import",
        help="take in labels: a file, or Phoenix's HUMAN span annotations",
        description="Checks every row (each problem named by file and line; nothing is taken from a "
        "file with one), keeps the labels in <review folder>/labels, measures every judge against "
        "them (judge_agreement), summarizes the labelled models again with corrected means, and "
        "refreshes the report.",
    )
    take.add_argument("file", nargs="?", help="a label file (.jsonl, .csv or .parquet)")
    take.add_argument("--phoenix", metavar="URL", help="read HUMAN annotations from this Phoenix")
    take.add_argument(
        "--project", help="the Phoenix project the case traces went to (default tracing.project)"
    )
    take.add_argument("--verbose", action="store_true", help="Dagster's own log and stack traces")
    take.set_defaults(handler=handle_import)


def handle_export(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    instance = instance_of(args, reads_only=True)
    spec = QueueSpec(args.model, args.n, Strategy(args.strategy), args.judge, args.seed, args.show_judge)
    try:
        queue = export_queue(
            build_definitions(settings), instance, spec, Path(settings.review.folder), args.name
        )
    except NotMaterializedError as err:
        raise CommandError(str(err)) from None
    except ValueError as err:
        raise CommandError(str(err)) from None
    print(f"{queue.cases} cases of {args.model} ({args.strategy}), metrics: {', '.join(queue.metrics)}")
    print(f"label them in: {queue.page.resolve()}")
    print(f"or fill in:    {queue.rows.resolve()}")
    print(f"then: rag-eval review import <the saved {queue.page.stem}.labels.jsonl>")
    return 0


def handle_import(args: argparse.Namespace) -> int:
    if bool(args.file) == bool(args.phoenix):
        raise CommandError("give a label file, or --phoenix URL (with --project)")
    settings = settings_of(args)
    instance = instance_of(args, reads_only=True)
    defs = build_definitions(settings)
    known = evaluated_cases(defs, instance)
    folder = settings.review.labels_folder
    try:
        if args.file:
            source = Path(args.file).expanduser()  # a quoted ~/Downloads/... too
            if not source.is_file():
                raise CommandError(f"{args.file}: no such file (the page saves to your downloads folder)")
            labels = read_label_file(source, known)
            kept = keep_label_file(source, folder)
        else:
            project = args.project or settings.tracing.project
            key = os.environ.get(settings.tracing.phoenix.api_key_env)
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            labels = read_phoenix_labels(args.phoenix, project, known, headers)
            kept = keep_labels(labels, folder, f"phoenix-{project}")
    except LabelFileError as err:
        listed = "\n".join(f"  {problem}" for problem in err.problems[:20])
        more = f"\n  ... and {len(err.problems) - 20} more" if len(err.problems) > 20 else ""
        raise CommandError(
            f"{err.path}: {len(err.problems)} problem(s); nothing was imported: fix these rows and import "
            f"again\n{listed}{more}"
        ) from None
    except PhoenixLabelsError as err:
        raise CommandError(
            f"{err}: is Phoenix running there, and did the traces go to that project?"
        ) from None
    if labels.empty:
        raise CommandError(f"{args.file or args.phoenix}: no labels in it (every label field is empty)")
    reviewers = ", ".join(sorted(set(labels["reviewer"])))
    print(f"{len(labels)} labels by {reviewers} kept in {kept.resolve()}")
    try:
        # every evaluated model: a judge's flags are pooled over them all
        applied = apply_labels(defs, instance, sorted(known), args.verbose)
    except Exception as err:
        if args.verbose:
            raise
        cause = root_cause(err)
        raise CommandError(
            f"the labels are kept, but measuring the judges failed "
            f"({type(cause).__name__}: {one_line(cause)}); "
            "run the import again (--verbose for the stack trace)"
        ) from None
    agreement = applied.agreement
    shown = agreement.drop(columns=["kappa_note", "why"]) if len(agreement) else agreement
    print("\njudges against people (pooled over the answer models):")
    print(to_markdown(shown) if len(shown) else "_no label pairs with a judge's score_")
    for row in agreement[agreement["flagged"]].to_dict("records") if len(agreement) else []:
        print(f"FLAGGED: {row['judge_id']} / {row['metric']}: {row['why']}")
    if len(applied.reviewers):
        print("\nreviewers against each other (cases with two or more):")
        print(to_markdown(applied.reviewers))
    if len(applied.corrected):
        print("\nmeans corrected by the labels (prediction-powered, 95% interval):")
        print(to_markdown(applied.corrected))
    return 0
