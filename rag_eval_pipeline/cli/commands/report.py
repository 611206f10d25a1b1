"""`report`: where the latest report is, or a copy of it in one file."""

from __future__ import annotations

from rag_eval_pipeline.cli.commands import Commands, Handler


def register(commands: Commands) -> None:
    report = commands.add_parser(
        "report",
        help="where the latest report is; --single-file: a copy that needs nothing beside it",
        description="""Prints the path of the latest evaluation report. The report loads plotly.js and its
        further pages of cases from files beside it; with --single-file, writes a copy that carries them
        inside, to send or attach alone.""",
    )
    report.add_argument("--single-file", action="store_true", help="write a self-contained copy")
    report.add_argument(
        "--out", default="eval_report-single-file.html", help="where (default ./eval_report-single-file.html)"
    )
    report.set_defaults(handler=Handler("report"))
