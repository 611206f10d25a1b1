"""What every HTML report of the project shares: plotly.js as one file beside the reports of a
home (about 4.8 MB, written once per plotly version), loaded by each report from where it stands:
the latest report beside it, a kept materialization two or three folders down."""

from __future__ import annotations

from collections.abc import Callable

import plotly
from plotly.offline import get_plotlyjs

PLOTLY_FILE = f"plotly-{plotly.__version__}.min.js"
# a kept materialization is history/<asset>/<run>.html, or history/<asset>/<partition>/<run>.html
_DEPTHS = ("", "../../", "../../../")


def plotly_libraries() -> dict[str, Callable[[], str]]:
    """The library a report's HtmlDocument carries: written beside it once."""
    return {PLOTLY_FILE: get_plotlyjs}


def plotly_script() -> str:
    """The script tags that load plotly.js from the first place it stands (offline, no network:
    a relative file beside the report or above its history folder)."""
    first, *rest = _DEPTHS
    tags = [f'<script src="{first}{PLOTLY_FILE}"></script>']
    tags += [
        f"<script>window.Plotly||document.write('<script src=\"{depth}{PLOTLY_FILE}\"><\\/script>')</script>"
        for depth in rest
    ]
    return "".join(tags)
