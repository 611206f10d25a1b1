"""Production traffic across days: a self-contained HTML report (each metric's daily mean with
its interval against the threshold, per agent version; the days that failed; cost per day; the
worst sampled cases of the latest day) and the Prometheus series of every day."""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go
from prometheus_client import CollectorRegistry, Gauge, generate_latest

from rag_eval_pipeline.reporting.html import plotly_script
from rag_eval_pipeline.reporting.monitoring import interval_gauges

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}h1{margin-bottom:0}
.note{color:#555;max-width:60rem}table{border-collapse:collapse;font-size:.85rem}
td,th{border:1px solid #ddd;padding:.3rem .5rem;vertical-align:top}th{background:#f4f4f4}
.fail{color:#a11;font-weight:600}.pass{color:#1a7f37}
"""


def trend_figure(trend: pd.DataFrame, judge_id: str, metric: str) -> go.Figure:
    """One metric of one judge day by day, a line per agent version with interval whiskers,
    and the day's threshold as a dashed line."""
    rows = trend[(trend["judge_id"] == judge_id) & (trend["metric"] == metric)]
    if rows["agent_version"].nunique() <= 2:  # one version: its line is the overall one
        rows = rows[rows["agent_version"] == "all"]
    figure = go.Figure()
    for version, series in rows.groupby("agent_version", sort=True):
        series = series.sort_values("day")
        figure.add_scatter(
            x=series["day"],
            y=series["mean"],
            mode="lines+markers",
            name=f"{version} (n per day: {', '.join(str(int(n)) for n in series['n'])})",
            error_y={
                "type": "data",
                "symmetric": False,
                "array": (series["ci_high"] - series["mean"]).fillna(0),
                "arrayminus": (series["mean"] - series["ci_low"]).fillna(0),
            },
        )
    thresholds = rows.dropna(subset=["threshold"]).drop_duplicates("day").sort_values("day")
    if len(thresholds):
        figure.add_scatter(
            x=thresholds["day"],
            y=thresholds["threshold"],
            mode="lines",
            name="threshold",
            line={"dash": "dash", "color": "#a11"},
        )
    figure.update_layout(
        title=f"{metric} ({judge_id}), daily mean with 95% interval",
        yaxis={"range": [0, 1.05], "title": metric},
        xaxis={"type": "category", "title": "day"},
        height=360,
    )
    return figure


def _days_table(trend: pd.DataFrame) -> str:
    overall = trend[trend["agent_version"] == "all"]
    rows = []
    for day, of_day in overall.groupby("day", sort=True):
        gated = of_day.dropna(subset=["threshold"])
        failed = gated[gated["passed"] == False]  # noqa: E712 (None: no threshold)
        verdict = (
            '<span class="fail">FAIL: '
            + html.escape(
                ", ".join(
                    f"{r.metric} ({r.judge_id}) {r.mean:.3f} < {r.threshold:g}" for r in failed.itertuples()
                )
            )
            + "</span>"
            if len(failed)
            else '<span class="pass">pass</span>'
            if len(gated)
            else "no threshold"
        )
        cells = "".join(
            f"<td>{html.escape(r.metric)} ({html.escape(r.judge_id)}): {r.mean:.3f} "
            f"[{r.ci_low:.3f}, {r.ci_high:.3f}], n = {int(r.n)}</td>"
            for r in of_day.itertuples()
        )
        cost = of_day["cost_usd"].iloc[0]
        rows.append(
            f"<tr><td>{html.escape(str(day))}</td><td>{verdict}</td>"
            f"<td>{'–' if pd.isna(cost) else f'${cost:.4f}'}</td>{cells}</tr>"
        )
    return (
        "<table><thead><tr><th>day</th><th>thresholds</th><th>cost</th><th colspan=99>scores</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def users_section(
    agreement: pd.DataFrame,
    worst: pd.DataFrame,
    lines: list[str],
    warning: str,
    by_topic: pd.DataFrame | None = None,
    topics_of: str = "",
) -> str:
    """Judges against users: agreement and Cohen's kappa with its interval per judge and metric
    over every scored day, the worst disagreements, a line per judge worse than chance, the
    feedback per topic of ``topics_of`` (most thumbs-down first), and the warning that feedback
    is self-selected. (The users' own figures are in the trend, judge ``users``.)"""

    def table(frame: pd.DataFrame) -> str:
        return frame.to_html(index=False, escape=True, float_format="{:.3f}".format, na_rep="–")

    said = "".join(f"<p class='fail'>{html.escape(line)}</p>" for line in lines)
    return (
        "<h2 id='users'>Judges against users</h2>"
        f"<p class='note'><b>Selection:</b> {html.escape(warning)}</p>"
        f"{table(agreement) if len(agreement) else '<p>no scored interaction has feedback</p>'}{said}"
        + (f"<h3>Where judges and users disagree most</h3>{table(worst)}" if len(worst) else "")
        + (
            f"<h3>Feedback per topic, {html.escape(topics_of)} (most thumbs-down first)</h3>{table(by_topic)}"
            if by_topic is not None and len(by_topic)
            else ""
        )
    )


def render_production_report(
    trend: pd.DataFrame, worst: pd.DataFrame, notes: list[str], users: str = ""
) -> str:
    """The whole report as one HTML file that opens offline."""
    figures = [
        trend_figure(trend, judge, metric).to_html(
            full_html=False, include_plotlyjs=False, config={"displaylogo": False}
        )
        for (judge, metric), _ in trend.groupby(["judge_id", "metric"], sort=True)
    ]
    latest = str(trend["day"].max()) if len(trend) else "–"
    worst_html = (
        worst.to_html(index=False, escape=True, float_format="{:.3f}".format) if len(worst) else "<p>none</p>"
    )
    listed = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Production traffic</title>"
        f"<style>{_STYLE}</style>{plotly_script()}</head><body>"
        "<h1>Production traffic</h1>"
        "<p class='note'>A seeded random sample of each day's interactions, scored by reference-free "
        "judges on the contexts the agent served (no metric that needs a reference answer is "
        "attempted). Each mean carries its 95% interval; a day below a threshold fails.</p>"
        f"<ul class='note'>{listed}</ul>"
        f"{''.join(figures) or '<p>no day scored yet</p>'}"
        f"<h2>Days</h2>{_days_table(trend)}{users}"
        f"<h2>Worst sampled cases of {html.escape(latest)}</h2>"
        f"{worst_html}"
        "</body></html>"
    )


def production_exposition(trend: pd.DataFrame) -> bytes:
    """``rag_eval_production_score{metric,judge,agent_version,day}`` with its interval bounds,
    ``rag_eval_production_threshold_passed{metric,judge,day}`` and the day's cost."""
    registry = CollectorRegistry()
    labels = ["metric", "judge", "agent_version", "day"]
    score, low, high = interval_gauges(
        "rag_eval_production_score", "Daily mean of a metric over sampled traffic", labels, registry
    )
    cases = Gauge("rag_eval_production_cases", "Sampled interactions scored", labels, registry=registry)
    passed = Gauge(
        "rag_eval_production_threshold_passed",
        "1 when the day's mean cleared its threshold, 0 when it did not",
        ["metric", "judge", "day"],
        registry=registry,
    )
    cost = Gauge(
        "rag_eval_production_cost_usd", "Dollars the day's judgements cost", ["day"], registry=registry
    )
    for row in trend.itertuples():
        values = {
            "metric": row.metric,
            "judge": row.judge_id,
            "agent_version": row.agent_version,
            "day": row.day,
        }
        score.labels(**values).set(row.mean)
        cases.labels(**values).set(row.n)
        if not pd.isna(row.ci_low):
            low.labels(**values).set(row.ci_low)
            high.labels(**values).set(row.ci_high)
        if row.agent_version == "all" and row.passed is not None and not pd.isna(row.threshold):
            passed.labels(metric=row.metric, judge=row.judge_id, day=row.day).set(float(bool(row.passed)))
    for day, of_day in trend.groupby("day"):
        if not pd.isna(of_day["cost_usd"].iloc[0]):
            cost.labels(day=day).set(of_day["cost_usd"].iloc[0])
    return generate_latest(registry)
