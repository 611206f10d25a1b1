"""`rag-eval review export|import`: a queue of cases for people to label (a labelling page and
a JSONL), and their labels taken in (a file, or Phoenix's HUMAN annotations), after which each
judge is measured against people and the labelled models' means are corrected."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rag_eval_pipeline.cli.context import instance_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.defs.session_sources import SESSION_SOURCES
from rag_eval_pipeline.instance.errors import one_line, root_cause
from rag_eval_pipeline.instance.lineage import NotMaterializedError
from rag_eval_pipeline.instance.review import (
    apply_labels,
    evaluated_cases,
    export_queue,
    keep_label_file,
    keep_labels,
)
from rag_eval_pipeline.metrics.agreement import session_source
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.review.labels import LabelFileError, read_label_file
from rag_eval_pipeline.review.phoenix import PhoenixLabelsError, read_phoenix_labels
from rag_eval_pipeline.review.queue import QueueSpec, Strategy


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


def _sessions_readable(labels, settings, config: str | None) -> None:
    """Labels of an agent's sessions are read by the instance with those sessions: the file
    must define their source (a ``simulation`` or ``trajectories`` section), else nothing is
    kept and one line says what to add."""
    for model in sorted(set(labels["answer_model"])):
        sessions_of = session_source(model)
        section = SESSION_SOURCES[sessions_of[0]].section if sessions_of else None
        if section is not None and getattr(settings, section) is None:
            raise CommandError(
                f"labels of {model}: {config or 'the configuration file'} has no {section} section, so "
                f"the instance cannot read them with those sessions: add the section the "
                f"`{SESSION_SOURCES[sessions_of[0]].command}` run used, and import again"
            )


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
            _sessions_readable(labels, settings, args.config)
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
    corrected = applied.corrected
    if len(corrected):
        done = corrected[corrected["n_labels"] > 0]
        if len(done):
            print("\nmeans corrected by the labels (prediction-powered, 95% interval):")
            print(to_markdown(done.drop(columns=["correction_note"])))
            for note in sorted(set(done["correction_note"])):
                print(f"note: {note}")
        for note in sorted(set(corrected.loc[corrected["n_labels"] == 0, "correction_note"])):
            print(f"note: means not corrected: {note.removeprefix('not corrected: ')}")
    return 0
