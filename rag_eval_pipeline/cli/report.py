"""`rag-eval report`: where the latest evaluation report is, and with --single-file a copy of it
that needs nothing beside it (plotly.js and every page of its cases inside), to mail or attach."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from rag_eval_pipeline.cli.context import settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.defs.names import ARTIFACTS
from rag_eval_pipeline.instance.home import InstanceStorage
from rag_eval_pipeline.instance.location import dagster_home_path
from rag_eval_pipeline.reporting.html import single_file

REPORT_FILE = "eval_report.html"
_PAGES_FOLDER = re.compile(r'id="case-pager" data-folder="([^"]+)"')


def handle(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    storage = InstanceStorage.of(settings.storage, workers=settings.workers)
    folder = Path(storage.folder) if storage.folder else dagster_home_path(args.dagster_home) / "storage"
    report = folder / ARTIFACTS / REPORT_FILE
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
    out = Path(args.out)
    out.write_text(single_file(document, pages), encoding="utf-8")
    size = out.stat().st_size / 1e6
    print(f"{out}: the report with plotly.js and {len(pages) + 1} page(s) of cases inside ({size:.1f} MB)")
    return 0
