"""`ui`: the Dagster UI of this instance, with the daemon and the reports."""

from __future__ import annotations

from rag_eval_pipeline.cli.commands import Commands, Handler


def register(commands: Commands) -> None:
    ui = commands.add_parser(
        "ui",
        help="open this instance in the Dagster UI, with the daemon and the reports",
        description="""Starts `dagster dev` (webserver and daemon) for the instance, with its generated
        dagster.yaml, and serves the HTML reports read-only on ui.reports_port; stops both on Ctrl-C.""",
    )
    ui.add_argument("--port", type=int, help="the Dagster UI's port (default: ui.port of the configuration)")
    ui.set_defaults(handler=Handler("ui"))
