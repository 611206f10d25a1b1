"""`rag-eval plan`: how many cases a comparison needs to show a difference, from a stored run's
discordance between two models or from a stated assumption, sized by the exact power of the
paired test the comparison runs, with the power around the planned size."""

from __future__ import annotations

import argparse

import numpy as np

from rag_eval_pipeline.cli.commands.plan import ASSUMED_DISCORDANCE
from rag_eval_pipeline.cli.context import instance_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.metrics.statistics import POWER, cases_needed, detectable_difference, power_curve


def handle(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    level = settings.statistics.significance_level
    pairs = args.models_compared * (args.models_compared - 1) // 2
    if args.model:
        if len(args.model) != 2:
            raise CommandError("give two models to compare: --model A --model B")
        differences = np.asarray(_stored_differences(args))
        # the mean squared per-case difference: for 0/1 scores, the share of cases they differ on
        discordance = float(np.mean(differences**2)) if len(differences) else 0.0
        if discordance == 0.0:
            raise CommandError(
                f"{args.model[0]} and {args.model[1]} score alike on all {len(differences)} stored cases: "
                "state an assumption with --discordance instead"
            )
        basis = (
            f"{args.model[0]} vs {args.model[1]} on {args.metric} ({args.judge}), {len(differences)} "
            f"paired cases stored: they differ by {np.sqrt(discordance):.3f} a case (root mean square) and "
            f"by {float(np.mean(differences)):+.3f} on average; these cases detect "
            f"{detectable_difference(differences.tolist(), level):.3f}"
        )
    else:
        discordance = args.discordance or ASSUMED_DISCORDANCE
        basis = f"assumed: the two models differ on {discordance:.0%} of the cases"
    if args.difference > discordance:
        raise CommandError(
            f"a mean difference of {args.difference} needs the models to differ on at least that share "
            f"of cases (here {discordance:.3f}): models that differ this rarely cannot differ by that much"
        )
    print(basis)
    needed = cases_needed(args.difference, discordance, level)
    print(
        f"to detect a difference of {args.difference:.3f} with {POWER:.0%} power at p < {level}: "
        f"{needed} paired cases (the paired test's exact power, at or above {POWER:.0%} from there on)"
    )
    planned, tested_at = needed, level
    if pairs > 1:  # Holm's first test is at the level over the number of pairs
        tested_at = level / pairs
        planned = cases_needed(args.difference, discordance, tested_at)
        print(f"with {args.models_compared} models compared at once ({pairs} pairs, Holm): {planned} cases")
    print("\npower around it:")
    for n, power in power_curve(planned, args.difference, discordance, tested_at):
        marker = "  <- planned" if n == planned else ""
        print(f"  {n:>6} cases -> power {power:.3f}{marker}")
    said = judge_calls_line(settings, args, planned)
    if said:
        print(f"\n{said}")
    return 0


def judge_calls_line(settings: Settings, args: argparse.Namespace, cases: int) -> str | None:
    """The LLM judge calls the planned cases cost for the models compared (None: no LLM judge)."""
    from rag_eval_pipeline.judges.registry import JudgeRegistry, UnknownJudgeError

    registry = JudgeRegistry(settings.custom_metrics, settings.abstention())
    try:
        judging = registry.judging(
            args.judges or settings.judges, args.judge_repeats or settings.judge_repeats, settings.jury
        )
    except UnknownJudgeError as err:
        raise CommandError(str(err)) from None
    if not judging.calls_per_case:
        return None
    asked = ", ".join(
        f"{s.judge_id} {s.calls_per_case} x {s.repeats}" for s in judging.specs if s.calls_per_case
    )
    total = cases * args.models_compared * judging.calls_per_case
    return (
        f"LLM judge calls at that size: {cases} cases x {args.models_compared} models x "
        f"{judging.calls_per_case} a case ({asked}: calls a scoring x re-scores) = {total:,} at least "
        "(re-asks of invalid output aside; cached calls are not paid again)"
    )


def _stored_differences(args: argparse.Namespace) -> list[float]:
    from rag_eval_pipeline.defs.names import JUDGE_SCORES
    from rag_eval_pipeline.instance.lineage import load_asset  # with pandas: only when stored runs are read

    instance = instance_of(args, reads_only=True)
    frames = []
    for model in args.model:
        try:
            scores = load_asset(instance, JUDGE_SCORES, model)
        except FileNotFoundError as err:
            raise CommandError(str(err)) from None
        rows = scores[(scores["judge_id"] == args.judge) & (scores["status"] == "ok")]
        if args.metric not in rows or rows[args.metric].isna().all():
            raise CommandError(f"{model} has no {args.metric} from judge {args.judge}")
        frames.append(rows[["qid", args.metric]])
    paired = frames[0].merge(frames[1], on="qid", suffixes=("_a", "_b")).dropna()
    return (paired[f"{args.metric}_a"] - paired[f"{args.metric}_b"]).tolist()
