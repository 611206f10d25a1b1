"""`rag-eval production run|promote`: score the days of real traffic the sources hold (each a
daily partition of the instance) and print them with intervals, exit 1 when a day fails a
threshold; and turn a day's problem cases into regression cases of a judgement list."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

import pandas as pd

from rag_eval_pipeline.cli.context import instance_of, registered_models_of, settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.cli.output import error, seconds_since_start, ui_command
from rag_eval_pipeline.definitions import build_definitions, llm_resource
from rag_eval_pipeline.defs.names import PRODUCTION_SAMPLE, PRODUCTION_SCORES
from rag_eval_pipeline.instance.production import (
    DayOutcome,
    days_in_sources,
    production_problems,
    run_production,
)
from rag_eval_pipeline.metrics.budgets import BUDGET, budget_table
from rag_eval_pipeline.metrics.gates import failed_gates_line
from rag_eval_pipeline.metrics.schema import USAGE
from rag_eval_pipeline.metrics.settings import Bound
from rag_eval_pipeline.production.promote import (
    PromoteError,
    chosen_cases,
    judgement_rows,
    write_judgement_list,
)
from rag_eval_pipeline.reporting.markdown import means_with_intervals, to_markdown

SHOWN_PROBLEMS = 10


def day_table(outcome: DayOutcome) -> str:
    """The day's scores with intervals, overall and per agent version, and each threshold's result."""
    summary = outcome.summary
    assert summary is not None
    budgeted = summary["group"].astype(str).str.startswith(BUDGET)  # shown in their own table
    rows = summary[(summary["group"] != USAGE) & ~budgeted & summary["n"].gt(0)].copy()
    rows["agent_version"] = rows["group"].map(lambda g: "all" if g == "all" else g.split("=", 1)[1])
    results = {(g.judge_id, g.group, g.metric): g for g in outcome.gates}
    thresholds, verdicts = [], []
    for judge, group, metric in zip(rows["judge_id"], rows["group"], rows["metric"]):
        gate = results.get((judge, group, metric))
        bound = "lower " if gate is not None and gate.bound is Bound.LOWER else ""
        thresholds.append("–" if gate is None else f"{bound}{gate.threshold:g}")
        verdicts.append("" if gate is None else "pass" if gate.passed else f"FAIL {gate.note}".strip())
    rows = rows.assign(threshold=thresholds, result=verdicts)
    columns = ["judge_id", "metric", "agent_version", "mean", "ci_low", "ci_high", "n", "threshold", "result"]
    return to_markdown(means_with_intervals(rows[columns]))


def handle_run(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    llm = llm_resource(settings)
    problems = production_problems(settings, llm.missing, llm.price_table())
    if problems:
        for problem in problems:
            error(problem)
        return 2
    defs = build_definitions(settings)
    instance = instance_of(args)
    days, skipped = days_in_sources(settings)
    for problem in skipped[:SHOWN_PROBLEMS]:
        print(f"skipped: {problem}")
    if len(skipped) > SHOWN_PROBLEMS:
        print(f"skipped: ... and {len(skipped) - SHOWN_PROBLEMS} more rows (all named on the asset page)")
    if args.day:
        if args.day not in days:
            raise CommandError(
                f"no interaction of {args.day} in the production sources (days held: "
                f"{', '.join(days[-10:]) or 'none'})"
            )
        days = [args.day]
    if not days:
        raise CommandError("the production sources hold no interaction yet")
    print(f"Dagster instance: {instance.root_directory}")
    report = run_production(defs, instance, settings, days, args.verbose)
    for note in report.problems:
        print(f"note: {note}")
    failed = []
    for outcome in report.days:
        print()
        if outcome.summary is None:
            print(f"{outcome.day}: FAILED ({outcome.error})")
            failed.append(outcome.day)
            continue
        cost = "–" if pd.isna(outcome.cost_usd) else f"${outcome.cost_usd:.4f}"
        print(f"{outcome.day}: {outcome.sampled} interactions sampled, judgements cost {cost}")
        if outcome.over_budget:
            print(f"note: the daily budget stopped {outcome.over_budget} cases: unscored, not 0")
        print(day_table(outcome))
        for gate in outcome.gates:
            if gate.passed and gate.note:  # a threshold on a version not live that day
                print(f"note: the threshold on {gate.metric} in {gate.group} does not apply: {gate.note}")
        if outcome.budgets:
            print("\n" + to_markdown(budget_table(outcome.budgets)))
        for held in outcome.budgets:
            if not held.passed:  # the line `rag-eval gate` prints for the same budget
                print(held.line)
        if not outcome.passed:
            over = [b.line for b in outcome.budgets if not b.passed]
            print(
                f"{outcome.day} FAILED: {'; '.join(filter(None, [failed_gates_line(outcome.gates), *over]))}"
            )
            failed.append(outcome.day)
    print(
        f"\n{len(report.days) - len(failed)} of {len(report.days)} days passed; wall time "
        f"{seconds_since_start():.1f}s; open the UI with: {ui_command(instance.root_directory, args.config)}"
    )
    for day in failed:
        error(f"{day} failed a production threshold")
    return 1 if failed else 0


def _load(defs, instance, asset: str, day: str) -> pd.DataFrame:
    logging.disable(logging.INFO)
    try:
        return defs.load_asset_value(asset, instance=instance, partition_key=day)
    except FileNotFoundError:
        raise CommandError(f"{day} is not scored here yet: `rag-eval production run --day {day}`") from None
    finally:
        logging.disable(logging.NOTSET)


def json_records(frame: pd.DataFrame) -> list[dict]:
    """A table as JSON records: NaN is null (absent, never 0), timestamps as ISO text."""
    return json.loads(frame.to_json(orient="records", date_format="iso", force_ascii=False))


def _production_of(settings):
    if settings.production is None:
        raise CommandError("no production section in the configuration file (README: Production sampling)")
    return settings.production


def _with_feedback(settings, quiet: bool = False):
    """Every interaction of the sources with its users' feedback joined (production.feedback;
    unset: the interactions' own ``user_feedback`` field), the problems said as skipped lines."""
    from rag_eval_pipeline.production.feedback_sources import feedback_problems, read_feedback
    from rag_eval_pipeline.production.settings import FeedbackSettings
    from rag_eval_pipeline.production.sources import read_sources, source_problems

    production = _production_of(settings)
    missing = source_problems(production) + feedback_problems(production.feedback)
    if missing:
        raise CommandError(missing[0])
    chosen = production.feedback or FeedbackSettings()
    read = read_sources(production)
    feedback = read_feedback(chosen, read.frame)
    problems = [str(p) for p in [*read.problems, *feedback.problems]]
    stream = sys.stderr if quiet else sys.stdout
    for problem in problems[:SHOWN_PROBLEMS]:
        print(f"skipped: {problem}", file=stream)
    if len(problems) > SHOWN_PROBLEMS:
        print(f"skipped: ... and {len(problems) - SHOWN_PROBLEMS} more", file=stream)
    return chosen, feedback


def _scored_days(
    args: argparse.Namespace, settings, days: list[str]
) -> tuple[pd.DataFrame | None, list[str]]:
    """The judges' scores of the days scored in the instance, and the days not scored here."""
    try:
        instance = instance_of(args, reads_only=True)
    except CommandError:
        return None, days
    defs = build_definitions(settings)
    frames, unscored = [], []
    for day in days:
        try:
            frames.append(_load(defs, instance, PRODUCTION_SCORES, day))
        except CommandError:
            unscored.append(day)
    return (pd.concat(frames, ignore_index=True) if frames else None), unscored


def handle_feedback(args: argparse.Namespace) -> int:
    from rag_eval_pipeline.judges.registry import JudgeRegistry
    from rag_eval_pipeline.production.feedback import (
        SELECTION_WARNING,
        failing_feedback_days,
        feedback_overview,
        topic_lines,
    )

    settings = settings_of(args)
    as_json = args.format == "json"
    chosen, feedback = _with_feedback(settings, quiet=as_json)
    frame = feedback.interactions
    days = sorted(frame["day"].unique())
    if args.day:
        if args.day not in days:
            raise CommandError(
                f"no interaction of {args.day} in the production sources (days held: "
                f"{', '.join(days[-10:]) or 'none'})"
            )
        frame, days = frame[frame["day"] == args.day].reset_index(drop=True), [args.day]
    scores, unscored = _scored_days(args, settings, days)
    judges = [] if scores is None else list(scores["judge_id"].unique())
    metrics = JudgeRegistry(settings.custom_metrics, settings.abstention()).declared_reference_free(judges)
    overview = feedback_overview(frame, scores, metrics, chosen.negative_below, args.worst)
    gates = _production_of(settings).gates()
    over = failing_feedback_days(frame, chosen.negative_below, gates, settings.statistics.min_cases)
    if as_json:
        document = {
            **overview.counts,
            "agreement": json_records(overview.agreement),
            "warning": SELECTION_WARNING,
            "keep": chosen.keep,
            "sources": feedback.sources,
            "by_day": json_records(overview.by_day),
            "by_topic": json_records(overview.by_topic),
            "disagreements": json_records(overview.disagreements),
            "worse_than_chance": overview.chance,
            "unscored_days": unscored,
            "failed": over,
        }
        print(json.dumps(document, indent=2, ensure_ascii=False, default=str))
        return 1 if over else 0
    counts = overview.counts
    print(
        f"{counts['interactions']} interactions, {counts['with_feedback']} with feedback, "
        f"{counts['negative']} thumbs-down (below {chosen.negative_below:g}; several on one "
        f"interaction: {'the latest counts' if chosen.keep == 'latest' else 'their mean counts'})"
    )
    print("\n" + to_markdown(pd.DataFrame(feedback.sources).drop(columns=["left_out"])))
    print("\n" + to_markdown(overview.by_day))
    if len(overview.by_topic):
        print("\nfeedback per topic (most thumbs-down first):")
        print(to_markdown(topic_lines(overview.by_topic)))
    if len(overview.agreement):
        print("\njudges against users (pass at 0.5 against thumbs-up):")
        print(to_markdown(overview.agreement))
        print("\nwhere they disagree most:")
        worst = overview.disagreements
        print(to_markdown(worst.assign(question=worst["question"].str.slice(0, 60))))
    else:
        print("\nno judge scored an interaction users gave feedback on (`rag-eval production run` scores)")
    for line in overview.chance:
        print(line)
    if unscored:
        print(f"note: not scored here, so not set against the judges: {', '.join(unscored)}")
    print(f"warning: {SELECTION_WARNING}")
    for day, line in over.items():
        error(f"{day}: {line}")
    return 1 if over else 0


def handle_promote_feedback(args: argparse.Namespace) -> int:
    from rag_eval_pipeline.production.promote import (
        feedback_judgement_rows,
        negative_feedback_cases,
        not_in_list,
    )

    settings = settings_of(args)
    chosen, feedback = _with_feedback(settings)
    cases = negative_feedback_cases(feedback.interactions, args.day, chosen.negative_below)
    out = Path(args.out)
    fresh, known = not_in_list(feedback_judgement_rows(cases, args.day, args.with_contexts), out)
    if not fresh:
        print(f"no new thumbs-down interaction of {args.day} ({len(known)} already in {out})")
        return 0
    count, version = write_judgement_list(fresh, out)
    picked = cases[cases["interaction_id"].isin({r["id"] for r in fresh})]
    shown = picked[["interaction_id", "agent_version", "feedback", "question", "feedback_comment"]]
    print(to_markdown(shown.assign(question=shown["question"].str.slice(0, 60))))
    print(
        f"\npromoted {len(fresh)} thumbs-down interactions of {args.day} to {out}"
        f"{f' ({len(known)} already there)' if known else ''}: it holds {count} cases (version {version}).\n"
        f"Fill in each reference answer, then evaluate it: rag-eval run --dataset {out}"
    )
    return 0


def handle_promote_blind_spots(args: argparse.Namespace) -> int:
    """The questions kb_health proposes for its blind spots, into the judgement list."""
    from rag_eval_pipeline.cli.health import stored_health
    from rag_eval_pipeline.production.promote import blind_spot_judgement_rows, not_in_list

    if args.day or args.with_contexts:
        given = "--day" if args.day else "--with-contexts"
        raise CommandError(
            f"{given} does not apply to --blind-spots: they come from `rag-eval kb health` over every "
            "sampled day, as questions only"
        )
    _production_of(settings_of(args))
    models = registered_models_of(args)
    if not models:
        raise CommandError("nothing evaluated here yet: `rag-eval run` compares the list with production")
    traffic = stored_health(args, models[0]).get("traffic")  # the list's, the same for every model
    if not traffic or traffic.get("divergence") is None:
        why = (traffic or {}).get("source") or "the evaluation was run before the production section"
        raise CommandError(f"no traffic comparison in kb_health ({why}): `rag-eval run` compares them")
    out = Path(args.out)
    fresh, known = not_in_list(blind_spot_judgement_rows(traffic["proposals"]), out)
    if not fresh:
        print(f"no new blind-spot question ({len(known)} already in {out}; {traffic['source']})")
        return 0
    count, version = write_judgement_list(fresh, out)
    shown = pd.DataFrame(fresh)[["id", "tags", "question"]]
    print(to_markdown(shown.assign(tags=shown["tags"].str[-1], question=shown["question"].str.slice(0, 70))))
    print(
        f"\npromoted {len(fresh)} blind-spot questions ({traffic['source']}) to {out}"
        f"{f' ({len(known)} already there)' if known else ''}: it holds {count} cases (version {version}).\n"
        f"Fill in each reference answer, then evaluate it: rag-eval run --dataset {out}"
    )
    return 0


def handle_promote(args: argparse.Namespace) -> int:
    if args.blind_spots:
        return handle_promote_blind_spots(args)
    if not args.day:
        raise CommandError("name the scored day: --day YYYY-MM-DD (or promote --blind-spots)")
    if args.feedback:
        return handle_promote_feedback(args)
    settings = settings_of(args)
    _production_of(settings)
    defs = build_definitions(settings)
    instance = instance_of(args, reads_only=True)
    sample = _load(defs, instance, PRODUCTION_SAMPLE, args.day)
    scores = _load(defs, instance, PRODUCTION_SCORES, args.day)
    try:
        cases = chosen_cases(sample, scores, args.qid or (), args.worst, args.metric, args.judge)
    except PromoteError as err:
        raise CommandError(str(err)) from None
    out = Path(args.out)
    count, version = write_judgement_list(judgement_rows(cases, args.day, args.with_contexts), out)
    shown = [c for c in ("interaction_id", "agent_version", "question") if c in cases]
    ranked = [c for c in cases.columns if "/" in c]
    print(to_markdown(cases[shown + ranked].assign(question=cases["question"].str.slice(0, 70))))
    print(
        f"\npromoted {len(cases)} cases of {args.day} to {out}: it holds {count} cases (version {version}).\n"
        f"Fill in each reference answer, then evaluate it: rag-eval run --dataset {out}\n"
        "(the run prints the list's version; a CI gate pins it with rag-eval gate --judgement-list VERSION)"
    )
    return 0
