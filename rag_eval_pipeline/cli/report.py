"""`rag-eval report`: where the latest evaluation report is, and with --single-file a copy of it
that needs nothing beside it (plotly.js and every page of its cases inside), to mail or attach."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from rag_eval_pipeline.cli.context import settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.defs.names import ARTIFACTS
from rag_eval_pipeline.instance.home import InstanceStorage
from rag_eval_pipeline.instance.location import dagster_home_path
from rag_eval_pipeline.reporting.html import IMAGE_REFERENCE, single_file

REPORT_FILE = "eval_report.html"
_PAGES_FOLDER = re.compile(r'id="case-pager" data-folder="([^"]+)"')


def report_path(settings: Settings, dagster_home: str | None) -> Path:
    """Where the latest report is written: the storage folder's artifacts, under the Dagster home
    (``--dagster-home``, else DAGSTER_HOME, else ./.dagster_home) unless storage is set apart."""
    storage = InstanceStorage.of(settings.storage, workers=settings.workers)
    folder = Path(storage.folder) if storage.folder else dagster_home_path(dagster_home) / "storage"
    return folder / ARTIFACTS / REPORT_FILE


def handle(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    report = report_path(settings, args.dagster_home)
    folder = report.parent.parent
    if not report.is_file():
        raise CommandError(f"no report at {report}: `rag-eval run` (or the UI) builds it")
    if not args.single_file:
        print(report)
        return 0
    document = report.read_text(encoding="utf-8")
    found = _PAGES_FOLDER.search(document)
    pages = {}
    if found is not None:
        for path in sorted((folder / ARTIFACTS / found.group(1)).glob("page-*.js")):
            pages[path.name] = path.read_text(encoding="utf-8")
    images = {}
    for found in IMAGE_REFERENCE.finditer(document):
        path = folder / ARTIFACTS / found.group(1)
        if path.is_file():
            images[found.group(1)] = path.read_bytes()
    out = Path(args.out)
    out.write_text(single_file(document, pages, images), encoding="utf-8")
    size = out.stat().st_size / 1e6
    pictures = f", {len(images)} image(s)" if images else ""
    inside = f"plotly.js{pictures} and {len(pages) + 1} page(s) of cases"
    print(f"{out}: the report with {inside} inside ({size:.1f} MB)")
    return 0
