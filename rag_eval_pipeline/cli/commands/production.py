"""`production run`, `promote` and `feedback`: real traffic scored by day."""

from __future__ import annotations

from rag_eval_pipeline.cli.arguments import day, positive
from rag_eval_pipeline.cli.commands import Commands, Handler, add_group
from rag_eval_pipeline.cli.options import add_format, add_verbose


def register(commands: Commands) -> None:
    add_group(
        commands,
        "production",
        "score a daily sample of real traffic; promote problem cases",
        _run,
        _promote,
        _feedback,
    )


def _run(sub: Commands) -> None:
    run = sub.add_parser(
        "run",
        help="score the days the production sources hold (or one) and print them",
        description="""Reads the production sources, materializes each day they hold (a daily partition: its
        interactions, a seeded sample, reference-free scores, the summary held to the thresholds), then the
        trend and report. Exit 1 when a day fails a threshold.""",
    )
    run.add_argument("--day", type=day, help="only this day (YYYY-MM-DD)")
    add_verbose(run)
    run.set_defaults(handler=Handler("production", "handle_run"))


def _promote(sub: Commands) -> None:
    promote = sub.add_parser(
        "promote",
        help="write a day's chosen cases as judgement-list cases (regression cases)",
        description="""Writes sampled cases of a scored day to a judgement list of this project's format: the
        question, an empty reference answer to fill in (reference_pending), the served contexts as the case's
        documents with --with-contexts. `rag-eval run --dataset FILE` evaluates it. Prints the list's count
        and version (a content hash a CI gate can pin).""",
    )
    promote.add_argument("--day", type=day, help="the scored day (YYYY-MM-DD; not with --blind-spots)")
    chosen = promote.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--qid", nargs="+", help="the interactions' ids (as the day's sample names them)")
    chosen.add_argument("--worst", type=positive, metavar="N", help="the N scored lowest on --metric")
    chosen.add_argument(
        "--feedback",
        choices=["negative"],
        help="the day's thumbs-down interactions (production.feedback), sampled or not: the agent's "
        "answer as the rejected answer, the user's comment as the note",
    )
    chosen.add_argument(
        "--blind-spots",
        action="store_true",
        help="the sampled questions `rag-eval kb health` proposes for topics no case covers",
    )
    promote.add_argument(
        "--metric", default="faithfulness", help="what --worst ranks by (default faithfulness)"
    )
    promote.add_argument("--judge", help="whose --metric (default: the first judge that measured it)")
    promote.add_argument(
        "--with-contexts", action="store_true", help="carry the served contexts as the cases' documents"
    )
    promote.add_argument("--out", required=True, help="the judgement list (JSONL; cases are added to it)")
    promote.set_defaults(handler=Handler("production", "handle_promote"))


def _feedback(sub: Commands) -> None:
    feedback = sub.add_parser(
        "feedback",
        help="users' feedback: how much, how negative, and how the judges agree with it",
        description="""Reads the production sources and the feedback sources (production.feedback: the
        interactions' own field, a Langfuse score export, Phoenix span annotations), joins them, and sets each
        judge's scores of the scored days against the users' thumbs (agreement, Cohen's kappa with its 95%
        interval). Feedback is self-selected: not the traffic's quality. Exit 1 when a day's thumbs-down rate
        is above production.feedback.max_negative_rate.""",
    )
    feedback.add_argument("--day", type=day, help="only this day (YYYY-MM-DD; default every day)")
    add_format(feedback, ("text", "json"), help="text tables or JSON")
    feedback.add_argument(
        "--worst", type=positive, default=5, metavar="N", help="disagreements listed per judge"
    )
    feedback.set_defaults(handler=Handler("production", "handle_feedback"))
