"""`rag-eval plan`: how many cases a comparison needs to show a difference, from a stored run's
discordance between two models or from a stated assumption."""

from __future__ import annotations

import argparse

import numpy as np

from rag_eval_pipeline.cli.arguments import positive, share
from rag_eval_pipeline.cli.context import CommandError, instance_of, settings_of
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.defs.names import JUDGE_SCORES
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.metrics.reference import REFERENCE_JUDGE_ID
from rag_eval_pipeline.metrics.statistics import POWER, cases_needed, detectable_difference, discordance_sd

ASSUMED_DISCORDANCE = 0.3


def register(commands: argparse._SubParsersAction) -> None:
    plan = commands.add_parser(
        "plan",
        help="how many cases a comparison needs to detect a difference",
        description="The paired cases needed to detect a true mean difference with 80 percent power "
        "at the configured significance level (McNemar's sample size, Connor 1987, generalised to "
        "0/0.5/1 and continuous scores). With --model A --model B how much two models differ case "
        "by case comes from their stored scores; otherwise from --discordance, the share of cases "
        "on which two models differ.",
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
    plan.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    level = settings.statistics.significance_level
    pairs = args.models_compared * (args.models_compared - 1) // 2
    if args.model:
        if len(args.model) != 2:
            raise CommandError("give two models to compare: --model A --model B")
        differences = np.asarray(_stored_differences(args, settings))
        # the mean squared per-case difference: for 0/1 scores, the share of cases they differ on
        spread = float(np.mean(differences**2)) if len(differences) else 0.0
        if spread == 0.0:
            raise CommandError(
                f"{args.model[0]} and {args.model[1]} score alike on all {len(differences)} stored cases: "
                "state an assumption with --discordance instead"
            )
        basis = (
            f"{args.model[0]} vs {args.model[1]} on {args.metric} ({args.judge}), {len(differences)} "
            f"paired cases stored: they differ by {np.sqrt(spread):.3f} a case (root mean square) and "
            f"by {float(np.mean(differences)):+.3f} on average; these cases detect "
            f"{detectable_difference(differences.tolist(), level):.3f}"
        )
    else:
        spread = args.discordance or ASSUMED_DISCORDANCE
        basis = f"assumed: the two models differ on {spread:.0%} of the cases"
    try:
        sd = discordance_sd(spread, args.difference)
    except ValueError as err:
        raise CommandError(f"{err}: models that differ this rarely cannot differ by that much") from None
    print(basis)
    needed = cases_needed(args.difference, sd, level)
    print(
        f"to detect a difference of {args.difference:.3f} with {POWER:.0%} power at p < {level}: "
        f"{needed} paired cases"
    )
    if pairs > 1:
        adjusted = cases_needed(args.difference, sd, level / pairs)
        print(f"with {args.models_compared} models compared at once ({pairs} pairs, Holm): {adjusted} cases")
    return 0


def _stored_differences(args: argparse.Namespace, settings) -> list[float]:
    instance = instance_of(args, reads_only=True)
    defs = build_definitions(settings)
    frames = []
    for model in args.model:
        try:
            scores = load_asset(defs, instance, JUDGE_SCORES, model)
        except FileNotFoundError as err:
            raise CommandError(str(err)) from None
        rows = scores[(scores["judge_id"] == args.judge) & (scores["status"] == "ok")]
        if args.metric not in rows or rows[args.metric].isna().all():
            raise CommandError(f"{model} has no {args.metric} from judge {args.judge}")
        frames.append(rows[["qid", args.metric]])
    paired = frames[0].merge(frames[1], on="qid", suffixes=("_a", "_b")).dropna()
    return (paired[f"{args.metric}_a"] - paired[f"{args.metric}_b"]).tolist()
