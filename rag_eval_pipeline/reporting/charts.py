"""A small SVG bar chart with interval whiskers, for Dagster metadata (no browser or kaleido), and
the one palette every chart of the report draws its models in."""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable

import pandas as pd

_COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2")
# ten colours told apart by most readers (Tableau 10); a model keeps its colour in every chart
MODEL_PALETTE = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip


def model_colours(models: Iterable[str]) -> dict[str, str]:
    """Each model's colour, by its place among every model of the report (sorted), so the same
    model is drawn in the same colour in the score, distribution, trend and image charts."""
    return {model: MODEL_PALETTE[n % len(MODEL_PALETTE)] for n, model in enumerate(sorted(set(models)))}


def bar_chart_svg(rows: pd.DataFrame, width: int = 640, height: int = 260) -> str:
    """Bars of ``mean`` per ``metric``, one colour per ``series``, whiskers from ci_low to ci_high."""
    metrics = list(dict.fromkeys(rows["metric"]))
    series = list(dict.fromkeys(rows["series"]))
    if not metrics:
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="40"><text x="10" y="25">no scores</text></svg>'
    left, bottom, top = 40, 60, 10
    plot_h = height - bottom - top
    slot = (width - left - 10) / len(metrics)
    bar = slot * 0.8 / max(1, len(series))
    y = lambda v: top + plot_h * (1 - v)  # noqa: E731 (scores live in [0, 1])
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">'
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#ddd"/>'
        )
        parts.append(f'<text x="{left - 5}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>')
    for m, metric in enumerate(metrics):
        x0 = left + m * slot + slot * 0.1
        parts.append(
            f'<text x="{left + (m + 0.5) * slot:.1f}" y="{height - bottom + 15}" text-anchor="middle">{html.escape(metric)}</text>'
        )
        for s, name in enumerate(series):
            match = rows[(rows["metric"] == metric) & (rows["series"] == name)]
            if match.empty or pd.isna(match["mean"].iloc[0]):
                continue
            mean, low, high = (float(match[c].iloc[0]) for c in ("mean", "ci_low", "ci_high"))
            x = x0 + s * bar
            colour = _COLOURS[s % len(_COLOURS)]
            parts.append(
                f'<rect x="{x:.1f}" y="{y(mean):.1f}" width="{bar * 0.9:.1f}" height="{plot_h * mean:.1f}" fill="{colour}"/>'
            )
            if not (pd.isna(low) or pd.isna(high)):
                cx = x + bar * 0.45
                parts.append(
                    f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(high):.1f}" y2="{y(low):.1f}" stroke="#222"/>'
                )
    for s, name in enumerate(series):
        parts.append(
            f'<rect x="{left + s * 160}" y="{height - 25}" width="10" height="10" fill="{_COLOURS[s % len(_COLOURS)]}"/>'
        )
        parts.append(f'<text x="{left + s * 160 + 14}" y="{height - 16}">{html.escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_markdown(svg: str, alt: str = "chart") -> str:
    """Markdown that shows the SVG inline (Dagster renders markdown metadata)."""
    return f"![{alt}](data:image/svg+xml;base64,{base64.b64encode(svg.encode()).decode()})"
