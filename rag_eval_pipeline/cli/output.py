"""What the commands print: the comparison and the paired verdicts, the UI command, wall time,
and a failure as one line per problem."""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

import pandas as pd

from rag_eval_pipeline.cli.errors import error
from rag_eval_pipeline.instance.errors import one_line, root_cause
from rag_eval_pipeline.metrics.summary import CORRECTNESS_ABSENT, scored_of
from rag_eval_pipeline.reporting.markdown import to_markdown, with_intervals

_IMPORTED_AT = time.perf_counter()
METRIC_ORDER = (
    "correctness",
    "correctness_scored",
    "faithfulness",
    "answer_rate",
    "error_rate",
    "exact_match",
    "f1",
    "faithfulness_lexical",
    "context_relevance",
    "context_precision",
    "context_recall",
    "citation_precision",
    "citation_recall",
    "answer_relevancy",
    "answer_cost_usd",
    "judge_cost_usd",
)


def comparison_table(comparison: pd.DataFrame) -> str:
    """The model, judge and case counts, the metrics in a fixed order (the headline ones with
    their intervals; the citation metrics and the rates of unanswerable questions only when some
    model has them), then the case set; ``stale`` and ``note`` only when a model is stale; over
    how many cases correctness is (``correctness_scored``) where it is absent on some."""
    if comparison.empty:
        return "_no models evaluated_"
    if "stale" in comparison and not comparison["stale"].astype(bool).any():
        comparison = comparison.drop(columns=[c for c in ("stale", "note") if c in comparison])
    if "error_rate" in comparison and not comparison["error_rate"].fillna(0).gt(0).any():
        comparison = comparison.drop(columns=[c for c in comparison if c.startswith("error_rate")])
    unmeasured = [m for m in _OPTIONAL if m in comparison and comparison[m].isna().all()]
    comparison = with_intervals(comparison.drop(columns=unmeasured))  # no model has it: no column
    if CORRECTNESS_ABSENT in comparison:  # over how many cases correctness is: the reason is a note
        scored = [scored_of(a) or "all" for a in comparison.pop(CORRECTNESS_ABSENT)]
        comparison.insert(list(comparison.columns).index("correctness") + 1, "correctness_scored", scored)
    identity = [c for c in ("answer_model", "judge_id", "n_cases", "n_failed") if c in comparison]
    metrics = [m for m in METRIC_ORDER if m in comparison.columns]
    rates = [c for c in _RATES if c in comparison]
    rest = [c for c in comparison.columns if c not in (*identity, *metrics, *_RATES)]
    return to_markdown(comparison[identity + metrics + rates + rest])


_RATES = ("false_answer_rate", "over_abstention_rate")  # shown only when some model has them
# measured only for some systems (an agent that cites): a column only when some model has them
_OPTIONAL = (*_RATES, "citation_precision", "citation_recall")


def language_table(breakdown: pd.DataFrame) -> str:
    """Each model's means per language, the reference judge's first."""
    ordered = breakdown.sort_values(["judge_id", "answer_model", "language"], key=lambda c: c.map(str))
    return to_markdown(with_intervals(ordered))


def paired_table(paired: pd.DataFrame, models: set[str]) -> str:
    """The paired verdicts on correctness between this run's models, one row per pair and judge:
    the raw and the Holm-adjusted p, and the smallest difference these cases would show."""
    if paired.empty or "metric" not in paired:
        return ""
    rows = paired[
        (paired["metric"] == "correctness") & paired["model_a"].isin(models) & paired["model_b"].isin(models)
    ]
    columns = [
        "model_a",
        "model_b",
        "judge_id",
        "n",
        "difference",
        "ci_low",
        "ci_high",
        "p_value",
        "p_adjusted",
        "verdict",
        "detectable_difference",
    ]
    # where a judge was asked several times: how much its re-scores alone move the difference
    if "judge_noise" in rows and rows["judge_noise"].notna().any():
        columns.append("judge_noise")
        noisy = rows["judge_noise_note"].astype(bool)
        rows = rows.assign(verdict=rows["verdict"].where(~noisy, rows["verdict"] + " (within judge noise)"))
    return (
        to_markdown(rows[columns].rename(columns={"detectable_difference": "detectable"}))
        if len(rows)
        else ""
    )


def paired_rule(level: float, family: int) -> str:
    """The printed rule above the paired table, naming the family the p-values are adjusted in."""
    return (
        f"Paired on correctness (the same cases; 'better' needs the sign-flip p, Holm-adjusted over the "
        f"{family} pair{'s' if family != 1 else ''} of each judge, below {level} and an interval that "
        "excludes 0; 'detectable' is the smallest difference these cases would show with 80% power; "
        "'judge_noise', where a judge was asked several times, how far its re-scores alone move the "
        "difference: one no larger is within the judge's own instability):"
    )


def ui_command(home: str, config: str | None = None) -> str:
    """The command that opens this instance in the UI, with the rag-eval of this environment and
    the configuration the command read (its production, review and agents' assets are there):
    run from any folder, it opens what was just made."""
    from rag_eval_pipeline.config import config_path

    found = config_path(config)
    read = f" --config {found.resolve()}" if found is not None else ""
    return f"{Path(sys.executable).with_name('rag-eval')}{read} --dagster-home {home} ui"


def wall_time_and_ui(home: str, config: str | None = None) -> str:
    """The line a command that materialized ends with: how long it took, and how to look."""
    return f"\nwall time {seconds_since_start():.1f}s; open the UI with: {ui_command(home, config)}"


def seconds_since_start() -> float:
    """Wall time since this process started, imports included (what the user waited): from
    /proc on Linux, else from when this module was imported."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return uptime - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.perf_counter() - _IMPORTED_AT


def report_failure(
    err: BaseException, verbose: bool, home: str, bad_input: tuple[type, ...], config: str | None = None
) -> int:
    """One ``error:`` line per problem (the traceback only with --verbose); exit 2 for bad input
    or configuration, 1 for a run that failed for another reason."""
    cause = root_cause(err)
    if verbose:
        traceback.print_exception(cause)
    problems = getattr(cause, "problems", None) or [one_line(cause)]
    if isinstance(cause, bad_input):
        for problem in problems:
            error(problem)
        return 2
    error(f"the run failed: {type(cause).__name__}: {problems[0]}")
    error(f"its logs are in the UI: {ui_command(home, config)}")
    return 1
