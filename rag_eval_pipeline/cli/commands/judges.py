"""`judges align`: a judge's prompt aligned to the reviewers' labels."""

from __future__ import annotations

from rag_eval_pipeline.cli.arguments import positive
from rag_eval_pipeline.cli.commands import Commands, Handler, add_group
from rag_eval_pipeline.cli.options import TRACEBACKS, add_verbose


def register(commands: Commands) -> None:
    judge_commands = add_group(commands, "judges", "align a judge to your reviewers' labels")
    align = judge_commands.add_parser(
        "align",
        help="a judge's prompt with examples where it and people disagreed, kept if it agrees better",
        description="""Build a candidate prompt for a STRICT judge with few-shot examples drawn from labelled
        cases where judge and reviewer disagreed (one half of the labelled cases, chosen by a hash of model
        and question), score the other half with both prompts, and report each one's weighted kappa and
        true-positive / true-negative rates against the labels. The candidate becomes a new prompt version of
        the judge (used by later runs, recorded as the scores' prompt_version) only when its held-out kappa is
        higher.""",
    )
    align.add_argument("judge", help="a STRICT judge id, e.g. claude-sonnet-4-6")
    align.add_argument("--metric", default="correctness", help="the labelled metric (default correctness)")
    align.add_argument("--examples", type=positive, default=6, help="examples in the prompt at most (6)")
    add_verbose(align, TRACEBACKS)
    align.set_defaults(handler=Handler("judges", "handle_align"))
