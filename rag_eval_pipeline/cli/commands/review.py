"""`review export` and `review import`: people's labels, out and in."""

from __future__ import annotations

from rag_eval_pipeline.cli.arguments import positive
from rag_eval_pipeline.cli.commands import Commands, Handler, add_group
from rag_eval_pipeline.cli.options import add_model, add_verbose
from rag_eval_pipeline.review.strategy import Strategy


def register(commands: Commands) -> None:
    add_group(
        commands, "review", "human review: export a queue to label, import the labels", _export, _import
    )


def _export(review_commands: Commands) -> None:
    export = review_commands.add_parser(
        "export",
        help="write a review queue: a labelling page and a JSONL of empty label rows",
        description="""Picks cases of a model's latest evaluation (seeded) and writes <review
        folder>/<queue>.html (one self-contained page: label each metric 0 / 0.5 / 1, save downloads
        <queue>.labels.jsonl) and <queue>.jsonl (the same cases as empty label rows). The judges' verdicts are
        hidden unless --show-judge.""",
    )
    add_model(
        export,
        "the answer model whose cases to review, or an agent version's judged sessions: "
        "trajectories:VERSION (traced), simulation:VERSION (simulated)",
    )
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
    export.set_defaults(handler=Handler("review", "handle_export"))


def _import(review_commands: Commands) -> None:
    take = review_commands.add_parser(
        "import",
        help="take in labels: a file, or Phoenix's HUMAN span annotations",
        description="""Checks every row (each problem named by file and line; nothing is taken from a file
        with one), keeps the labels in <review folder>/labels, measures every judge against them
        (judge_agreement), summarizes the labelled models again with corrected means, and refreshes the
        report.""",
    )
    take.add_argument("file", nargs="?", help="a label file (.jsonl, .csv or .parquet)")
    take.add_argument("--phoenix", metavar="URL", help="read HUMAN annotations from this Phoenix")
    take.add_argument(
        "--project", help="the Phoenix project the case traces went to (default tracing.project)"
    )
    add_verbose(take)
    take.set_defaults(handler=Handler("review", "handle_import"))
