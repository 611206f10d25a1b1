"""Where the Prometheus metrics go (the configuration's ``monitoring`` section)."""

from pathlib import Path

import dagster as dg
from pydantic import PrivateAttr

from rag_eval_pipeline.defs.resources.settings import SettingsResource, storage_folder
from rag_eval_pipeline.storage.files import write_atomically


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

    def publish(self, exposition: bytes) -> str:
        """Writes the textfile atomically (the collector never reads half a file); pushes if set."""
        write_atomically(self._file, lambda tmp: tmp.write_bytes(exposition))
        monitoring = self.settings.settings.monitoring
        if monitoring.pushgateway_url:
            from prometheus_client.exposition import default_handler

            default_handler(
                f"{monitoring.pushgateway_url.rstrip('/')}/metrics/job/{monitoring.job_name}",
                "PUT",
                10,
                [("Content-Type", "text/plain; version=0.0.4")],
                exposition,
            )()
        return str(self._file)
