"""What the configuration says about where results are shown: the Prometheus metrics, and the
ports `rag-eval ui` serves the Dagster UI and the reports on."""

from __future__ import annotations

from pydantic import Field

from rag_eval_pipeline.common.settings import Strict


class MonitoringSettings(Strict):
    """Where the Prometheus metrics go: a textfile for node-exporter's collector, and a
    Pushgateway when one is set."""

    textfile: str | None = Field(
        default=None, description="None: <DAGSTER_HOME>/storage/metrics/rag_eval.prom"
    )
    pushgateway_url: str | None = None
    job_name: str = "rag_eval"


class UISettings(Strict):
    """Where `rag-eval ui` serves the Dagster UI and the reports (their links in the asset pages
    point there)."""

    host: str = "127.0.0.1"
    port: int = Field(default=3000, ge=1, le=65535, description="the Dagster UI")
    reports_port: int = Field(default=3001, ge=1, le=65535, description="the HTML reports, read-only")

    @property
    def reports_url(self) -> str:
        return f"http://{self.host}:{self.reports_port}"

    @property
    def dagster_url(self) -> str:
        return f"http://{self.host}:{self.port}"
