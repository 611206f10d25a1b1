"""What every HTML report of the project shares: plotly.js as one file beside the reports of a
home (about 4.8 MB, written once per plotly version), loaded by each report from where it stands:
the latest report beside it, a kept materialization two or three folders down."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

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


SINGLE_FILE_COMMAND = "rag-eval report --single-file"


def missing_charts_notice() -> str:
    """A script that, when plotly.js could not be loaded (the report copied alone), puts in each
    chart's place what is missing and how to get a copy that carries it: never a blank."""
    said = (
        f"Chart not shown: plotly.js ({PLOTLY_FILE}) is not beside this report. "
        f"`{SINGLE_FILE_COMMAND}` writes a copy that carries it (and every page of cases)."
    )
    return (
        "<script>window.addEventListener('load',()=>{if(window.Plotly)return;"
        "document.querySelectorAll('.plotly-graph-div').forEach(d=>{const p=document.createElement('p');"
        f"p.className='chart-missing note';p.textContent={json.dumps(said)};"
        "d.replaceWith(p);});});</script>"
    )


def single_file(document: str, pages: Mapping[str, str]) -> str:
    """A report that needs nothing beside it: plotly.js inlined where it was loaded from a file,
    and the companion pages of its case table (``pages``: path -> script) carried inline."""
    inline = "<script>" + get_plotlyjs().replace("</script", "<\\/script") + "</script>"
    keep = "((n,rows)=>{(window.inlinePages=window.inlinePages||{})[n]=rows;})("  # read by loadPage
    kept = "".join(
        "<script>" + script.replace("reportPage(", keep, 1) + "</script>"
        for _, script in sorted(pages.items())
    )
    return document.replace(plotly_script(), inline + kept, 1)
