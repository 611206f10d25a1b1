"""What the configuration says about traces and Phoenix experiments."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rag_eval_pipeline.common.settings import Strict


class PhoenixExperimentSettings(Strict):
    """The judgement list as a Phoenix dataset, each answer model as an experiment over it
    (opt-in; needs the ``[phoenix]`` extra)."""

    experiments: bool = False
    url: str | None = Field(
        default=None,
        description="Phoenix's base URL; None: the tracing endpoint's host with preset phoenix, "
        "else http://127.0.0.1:6006",
    )
    api_key_env: str = Field(default="PHOENIX_API_KEY", description="variable holding the API key, if any")


class TracingSettings(Strict):
    """One trace per case and answer model over OTLP/HTTP (off by default; no cost when off)."""

    enabled: bool = False
    preset: Literal["otlp", "phoenix", "langfuse"] = Field(
        default="otlp",
        description="otlp: endpoint or OTEL_EXPORTER_OTLP_ENDPOINT; phoenix: 127.0.0.1:6006; "
        "langfuse: LANGFUSE_HOST with Basic auth from LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY",
    )
    endpoint: str | None = Field(default=None, description="the OTLP/HTTP traces URL, e.g. .../v1/traces")
    headers_env: dict[str, str] = Field(
        default_factory=dict, description="header name -> the environment variable holding its value"
    )
    service_name: str = "rag-eval-pipeline"
    project: str = Field(default="rag-eval", description="Phoenix project (openinference.project.name)")
    sample: float = Field(default=1.0, gt=0, le=1, description="share of cases traced")
    flush_timeout_s: float = Field(default=5.0, gt=0, description="at most this long waiting for a collector")
    evaluation_events: bool = Field(
        default=False,
        description="every score also as an OpenTelemetry gen_ai.evaluation.result event (a log "
        "record) parented to the evaluated span: the agent's own where its traces are known",
    )
    events_endpoint: str | None = Field(
        default=None, description="the OTLP/HTTP logs URL; None: the traces' collector's /v1/logs"
    )
    events_file: str | None = Field(
        default=None, description="also append the events to this file as OTLP/JSON lines"
    )
    phoenix: PhoenixExperimentSettings = PhoenixExperimentSettings()

    def phoenix_url(self) -> str:
        """Where datasets and experiments go: said outright, else where the traces go when
        that is Phoenix, else Phoenix's local default."""
        if self.phoenix.url:
            return self.phoenix.url.rstrip("/")
        if self.preset == "phoenix" and self.endpoint:
            return self.endpoint.removesuffix("/v1/traces").rstrip("/")
        return "http://127.0.0.1:6006"
