"""`plan`: how many cases a comparison needs."""

from __future__ import annotations

from rag_eval_pipeline.cli.arguments import comma_list, positive, share
from rag_eval_pipeline.cli.commands import Commands, Handler
from rag_eval_pipeline.metrics.reference import REFERENCE_JUDGE_ID

# without stored models, `rag-eval plan` assumes two models differ on this share of cases
ASSUMED_DISCORDANCE = 0.3


def register(commands: Commands) -> None:
    plan = commands.add_parser(
        "plan",
        help="how many cases a comparison needs to detect a difference",
        description="""The paired cases needed to detect a true mean difference with 80 percent power at the
        configured significance level: the smallest n at which the exact paired test's own power reaches it
        and stays there. With --model A --model B how much two models differ case by case comes from their
        stored scores; otherwise from --discordance, the share of cases on which two models differ.""",
    )
    plan.add_argument("--difference", type=share, required=True, help="the difference to detect, e.g. 0.1")
    plan.add_argument("--model", action="append", default=[], help="two stored answer models to compare")
    plan.add_argument(
        "--judge", default=REFERENCE_JUDGE_ID, help="the judge whose scores (default reference)"
    )
    plan.add_argument("--metric", default="correctness", help="the metric (default correctness)")
    plan.add_argument(
        "--discordance",
        type=share,
        help=f"without stored models: the share of cases the two differ on (default {ASSUMED_DISCORDANCE})",
    )
    plan.add_argument(
        "--models-compared",
        type=positive,
        default=2,
        help="models compared at once: Holm's first test is then at the level / number of pairs",
    )
    plan.add_argument(
        "--judges", type=comma_list, help="the judges to count calls for (default: the configuration file's)"
    )
    plan.add_argument(
        "--judge-repeats", type=positive, metavar="K", help="each LLM judge asked K times a case"
    )
    plan.set_defaults(handler=Handler("plan"))
