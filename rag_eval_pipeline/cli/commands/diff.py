"""`diff` and `baseline`: two evaluations compared case by case, and the runs named to compare with."""

from __future__ import annotations

from rag_eval_pipeline.cli.arguments import positive, share_or_zero
from rag_eval_pipeline.cli.commands import Commands, Handler, add_group
from rag_eval_pipeline.cli.options import add_fail_on_regression, add_format

REFERENCES = (
    "a baseline name (`rag-eval baseline set`), an answer model (its latest evaluation), a run "
    "id or its first 6+ characters, or 'current' (the latest evaluation of the other side's model)"
)


def diff_command(commands: Commands) -> None:
    diff = commands.add_parser(
        "diff",
        help="which cases got worse between two evaluations, per metric and tag, tested",
        description="""Matches the two evaluations' cases by question id and reports, per judge and metric and
        then per tag, the cases regressed, improved and unchanged, the mean change with its paired interval,
        the exact paired test's p-value and Holm's adjustment over the metrics shown; then the regressed cases
        worst first with what changed in their lineage. Cases added, removed or asked with another question or
        truth are listed, never counted as regressions.""",
    )
    diff.add_argument("before", help=f"the evaluation compared against: {REFERENCES}")
    diff.add_argument("after", help="the evaluation under review (same forms)")
    add_format(
        diff,
        help="table (default), markdown (a pull-request comment under 60,000 characters), "
        "json (every number)",
    )
    diff.add_argument(
        "--output", metavar="FILE", help="also write it to FILE (a pull-request comment's body, say)"
    )
    add_fail_on_regression(
        diff,
        "exit 1 when a metric is significantly worse after Holm's adjustment (the CI gate "
        "against a baseline instead of fixed thresholds)",
    )
    diff.add_argument(
        "--min-effect",
        type=share_or_zero,
        default=0.0,
        help="the smallest mean worsening that counts as a regression (default 0)",
    )
    diff.add_argument(
        "--min-cases",
        type=positive,
        help="fewest paired cases a tag is tested on (default: statistics.min_cases, else 10)",
    )
    diff.set_defaults(handler=Handler("diff", "handle_diff"))


def baseline_command(commands: Commands) -> None:
    baseline_commands = add_group(commands, "baseline", "name the runs pull requests are compared with")
    pin = baseline_commands.add_parser(
        "set",
        help="pin a run as a named baseline (say main)",
        description="""Pins RUN under NAME in this instance: `rag-eval diff NAME current` then compares the
        latest evaluation of its model with it, refused when the judgement list or the judges differ.""",
    )
    pin.add_argument("name", help="the baseline's name: letters, digits, '.', '_', '-'")
    pin.add_argument("run", help="a run id (or its first 6+ characters), or an answer model (its latest)")
    pin.set_defaults(handler=Handler("diff", "handle_baseline_set"))
    baseline_commands.add_parser("list", help="the baselines of this instance").set_defaults(
        handler=Handler("diff", "handle_baseline_list")
    )
    forget = baseline_commands.add_parser("remove", help="forget a baseline (its run stays)")
    forget.add_argument("name")
    forget.set_defaults(handler=Handler("diff", "handle_baseline_remove"))
