"""The report's first-screen pictures as SVG drawn here: each model's mean with its interval, the
paired differences as a forest plot, the failures by stage. No script draws them, so they are
there the moment the page is (plotly.js, 4.8 MB, is loaded later for the charts further down),
and they scale to their pane. Every mark carries its figures in a <title> (shown on hover)."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

GREY = "#9a9a9a"
WIDTH = 640  # the viewBox's width: the SVG is drawn at its pane's width
LABEL_CHARS = 34  # a label longer than this is cut with an ellipsis, whole in its <title>


def _cut(text: str, chars: int = LABEL_CHARS) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _svg(height: float, body: Sequence[str], label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0f}" class="chart" '
        f'role="img" aria-label="{html.escape(label)}" font-family="system-ui,sans-serif" font-size="11">'
        + "".join(body)
        + "</svg>"
    )


@dataclass(frozen=True)
class Interval:
    """One mark: a label, its value and interval (None where absent), the colour it is drawn in,
    and what its hover says."""

    label: str
    value: float | None
    low: float | None
    high: float | None
    colour: str
    says: str


def interval_rows(rows: Sequence[Interval], low: float, high: float, zero: bool, title: str) -> str:
    """Horizontal rows of a dot and its interval whisker over an axis from ``low`` to ``high`` (a
    dotted line at 0 where ``zero``): a forest plot, or means with their intervals. An absent
    value is a row that says "–", never a dot at 0."""
    left, right, top, row_height = 230, 20, 34, 22
    height = top + row_height * len(rows) + 34
    span = (high - low) or 1.0

    def x(value: float) -> float:
        return left + (WIDTH - left - right) * (min(max(value, low), high) - low) / span

    body = [f'<text x="4" y="16" font-size="13" font-weight="600">{html.escape(title)}</text>']
    ticks = [low + span * k / 4 for k in range(5)]
    axis_y = top + row_height * len(rows) + 4
    for tick in ticks:
        body.append(
            f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top - 6}" y2="{axis_y}" stroke="#eee"/>'
            f'<text x="{x(tick):.1f}" y="{axis_y + 14}" text-anchor="middle" fill="#555">{tick:+.2g}</text>'
            if zero
            else f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top - 6}" y2="{axis_y}" stroke="#eee"/>'
            f'<text x="{x(tick):.1f}" y="{axis_y + 14}" text-anchor="middle" fill="#555">{tick:.2g}</text>'
        )
    if zero and low < 0 < high:
        body.append(
            f'<line x1="{x(0):.1f}" x2="{x(0):.1f}" y1="{top - 6}" y2="{axis_y}" stroke="#777" '
            'stroke-dasharray="3 3"/>'
        )
    for n, row in enumerate(rows):
        y = top + row_height * n + row_height / 2
        body.append(
            f'<g class="mark"><title>{html.escape(row.says)}</title>'
            f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{html.escape(_cut(row.label))}</text>'
        )
        if row.value is None:
            body.append(f'<text x="{left + 6}" y="{y + 4:.1f}" fill="#555">–</text></g>')
            continue
        if row.low is not None and row.high is not None:
            body.append(
                f'<line x1="{x(row.low):.1f}" x2="{x(row.high):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                f'stroke="{row.colour}" stroke-width="2"/>'
            )
        body.append(f'<circle cx="{x(row.value):.1f}" cy="{y:.1f}" r="4.5" fill="{row.colour}"/></g>')
    return _svg(height, body, title)


def stacked_bars(
    labels: Sequence[str], parts: Mapping[str, Sequence[float]], colours: Mapping[str, str], title: str
) -> str:
    """One horizontal bar per label, cut into ``parts`` (name -> a count per label), each part's
    share of its bar; a legend of the parts drawn below."""
    left, right, top, row_height = 230, 20, 34, 22
    names = [name for name, counts in parts.items() if any(counts)]
    legend_rows = -(-len(names) // 4)
    height = top + row_height * len(labels) + 16 + 18 * legend_rows
    body = [f'<text x="4" y="16" font-size="13" font-weight="600">{html.escape(title)}</text>']
    for n, label in enumerate(labels):
        y = top + row_height * n
        total = sum(parts[name][n] for name in names) or 1
        body.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{html.escape(_cut(label))}</text>')
        start = float(left)
        for name in names:
            count = parts[name][n]
            if not count:
                continue
            width = (WIDTH - left - right) * count / total
            body.append(
                f'<rect x="{start:.1f}" y="{y + 3}" width="{width:.1f}" height="{row_height - 6}" '
                f'fill="{colours[name]}"><title>{html.escape(label)}: {html.escape(name)} {count:g} of '
                f"{total:g} ({count / total:.0%})</title></rect>"
            )
            start += width
    legend_y = top + row_height * len(labels) + 14
    for k, name in enumerate(names):
        lx, ly = 10 + (k % 4) * 155, legend_y + 18 * (k // 4)
        body.append(
            f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" fill="{colours[name]}"/>'
            f'<text x="{lx + 14}" y="{ly}">{html.escape(_cut(name, 22))}</text>'
        )
    return _svg(height, body, title)
