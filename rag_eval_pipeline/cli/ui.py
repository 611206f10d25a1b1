"""`rag-eval ui`: the Dagster UI and daemon for this instance (with the dagster.yaml rag-eval
writes: run monitoring, one run per model at a time), and the reports served on a local port,
where the report links in the asset pages point."""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import signal
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from rag_eval_pipeline.cli.context import settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.config import config_path
from rag_eval_pipeline.defs.names import ARTIFACTS
from rag_eval_pipeline.instance.home import InstanceSettingsError, InstanceStorage, prepare_instance

WORKSPACE = """\
load_from:
  - python_module:
      module_name: rag_eval_pipeline.definitions
      location_name: rag_eval_pipeline
      working_directory: {directory}
"""


class _Reports(SimpleHTTPRequestHandler):
    """The artifacts folder, read-only, without a line per request on the terminal."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        self.send_error(405)

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve_reports(folder: Path, host: str, port: int) -> ThreadingHTTPServer:
    """The reports (every asset's HTML under the artifacts folder) on ``host:port``."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        server = ThreadingHTTPServer((host, port), functools.partial(_Reports, directory=str(folder)))
    except OSError as err:
        raise CommandError(
            f"cannot serve the reports on {host}:{port} ({err}): set ui.reports_port"
        ) from None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


STOP_GRACE_S = 20
STOPS_ALL = "Ctrl-C stops all three: the webserver, the daemon and the reports server"  # docs/ui.md says it


def handle(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    ui = settings.ui
    storage = InstanceStorage.of(settings.storage, workers=settings.workers)
    try:
        # created and migrated before dagster dev opens it
        home = prepare_instance(args.dagster_home, storage)
    except InstanceSettingsError as err:
        raise CommandError(str(err)) from None
    folder = Path(storage.folder) if storage.folder else home / "storage"
    reports = serve_reports(folder / ARTIFACTS, ui.host, ui.reports_port)
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    found = config_path(args.config)
    if found is not None:  # the code location reads the same configuration file
        env["RAG_EVAL_CONFIG"] = str(found.resolve())
    port = args.port or ui.port
    workspace = home / "workspace.yaml"  # the code location under its own name, wherever this runs
    workspace.write_text(WORKSPACE.format(directory=Path.cwd()))
    command = [sys.executable, "-m", "dagster", "dev", "-w", str(workspace), "-h", ui.host, "-p", str(port)]
    # started in the background (a script's "&", nohup), this process ignores SIGINT, and so would
    # dagster dev, which takes SIGTERM as SIGINT: it would ignore the stop below and be killed
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    process = subprocess.Popen(command, env=env, start_new_session=True)
    print(f"Dagster UI: http://{ui.host}:{port}   reports: {ui.reports_url}/eval_report.html")
    print(f"({STOPS_ALL})", flush=True)
    try:
        while True:  # a stop signal taken by another thread (the reports server's) wakes no blocking wait
            with contextlib.suppress(subprocess.TimeoutExpired):
                return process.wait(timeout=0.5)
    except KeyboardInterrupt:
        return 0
    finally:
        if process.poll() is None:  # dagster dev and its servers, in a session of their own
            os.killpg(process.pid, signal.SIGTERM)
            try:
                # well within what a supervisor waits before killing us (which would orphan them)
                process.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        reports.shutdown()
