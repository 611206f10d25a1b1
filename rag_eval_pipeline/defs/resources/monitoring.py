"""Where the Prometheus metrics go (the configuration's ``monitoring`` section)."""

from pathlib import Path

import dagster as dg
from pydantic import PrivateAttr

from rag_eval_pipeline.common.files import write_atomically
from rag_eval_pipeline.defs.resources.settings import SettingsResource, storage_folder


class MonitoringResource(dg.ConfigurableResource):
    """A textfile for node-exporter's collector, and a Pushgateway when one is configured."""

    settings: SettingsResource

    _file: Path = PrivateAttr()

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        textfile = self.settings.settings.monitoring.textfile
        self._file = Path(textfile) if textfile else storage_folder(context) / "metrics" / "rag_eval.prom"

    @property
    def pushgateway_url(self) -> str | None:
        return self.settings.settings.monitoring.pushgateway_url

    def publish(self, exposition: bytes, part: str | None = None) -> str:
        """Writes the textfile atomically (the collector never reads half a file); pushes if set.
        A ``part`` (production traffic) has a textfile of its own beside the main one (the
        collector reads every ``*.prom`` of the folder) and a job of its own on the gateway."""
        file = self._file if part is None else self._file.with_name(f"{self._file.stem}_{part}.prom")
        write_atomically(file, lambda tmp: tmp.write_bytes(exposition))
        monitoring = self.settings.settings.monitoring
        if monitoring.pushgateway_url:
            from prometheus_client.exposition import default_handler

            job = monitoring.job_name if part is None else f"{monitoring.job_name}_{part}"
            default_handler(
                f"{monitoring.pushgateway_url.rstrip('/')}/metrics/job/{job}",
                "PUT",
                10,
                [("Content-Type", "text/plain; version=0.0.4")],
                exposition,
            )()
        return str(file)
