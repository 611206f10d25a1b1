"""What every HTML report of the project shares: plotly.js as one file beside the reports of a
home (about 4.8 MB, written once per plotly version), loaded by each report from where it stands:
the latest report beside it, a kept materialization two or three folders down."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping

import plotly
from plotly.offline import get_plotlyjs

PLOTLY_FILE = f"plotly-{plotly.__version__}.min.js"
# a kept materialization is history/<asset>/<run>.html, or history/<asset>/<partition>/<run>.html
_DEPTHS = ("", "../../", "../../../")


def plotly_libraries() -> dict[str, Callable[[], str | bytes]]:
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
# where a report that draws its charts when they are near (``lazy_plotly_script``) is told the
# library's file name; a single-file copy carries the library's text beside it
_LAZY_MARKER = "<script>const PLOTLY_FILE="
PLOTLY_SOURCE_ID = "plotly-source"


def lazy_plotly_script() -> str:
    """What a report that loads plotly.js only when a chart comes near needs to find it: the
    file's name (loaded beside the report, or above its history folder) and the notice for a
    chart that cannot be drawn."""
    said = (
        f"Chart not shown: plotly.js ({PLOTLY_FILE}) is not beside this report. "
        f"`{SINGLE_FILE_COMMAND}` writes a copy that carries it (and every page of cases)."
    )
    return f"{_LAZY_MARKER}{json.dumps(PLOTLY_FILE)},CHART_MISSING={json.dumps(said)};</script>"


# an image the report shows, by its path beside the report (reporting/images.py writes them)
IMAGE_REFERENCE = re.compile(r'href="(images/[0-9a-f]{16}-[0-9]+\.(png|jpg))"')


def single_file(document: str, pages: Mapping[str, str], images: Mapping[str, bytes] | None = None) -> str:
    """A report that needs nothing beside it: plotly.js inlined where it was loaded from a file,
    the companion pages of its case table (``pages``: path -> script) carried inline, and each
    image it shows (``images``: its path beside the report -> bytes) as a data URI. An image not
    given keeps its reference, and the report says in its place that it is missing."""

    def embedded(found: re.Match) -> str:
        data = (images or {}).get(found.group(1))
        if data is None:
            return found.group(0)
        kind = "png" if found.group(2) == "png" else "jpeg"
        return f'href="data:image/{kind};base64,{base64.b64encode(data).decode()}"'

    document = IMAGE_REFERENCE.sub(embedded, document)
    inline = "<script>" + get_plotlyjs().replace("</script", "<\\/script") + "</script>"
    keep = "((n,rows)=>{(window.inlinePages=window.inlinePages||{})[n]=rows;})("  # read by loadPage
    kept = "".join(
        "<script>" + script.replace("reportPage(", keep, 1) + "</script>"
        for _, script in sorted(pages.items())
    )
    if _LAZY_MARKER in document:  # the library's text kept as data, run when a chart is near
        source = get_plotlyjs().replace("</script", "<\\/script")
        carried = f'<script type="text/plain" id="{PLOTLY_SOURCE_ID}">{source}</script>'
        return document.replace(_LAZY_MARKER, carried + kept + _LAZY_MARKER, 1)
    return document.replace(plotly_script(), inline + kept, 1)
