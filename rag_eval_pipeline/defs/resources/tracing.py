"""Where case traces, datasets and experiments go (the configuration's ``tracing`` section)."""

import os

import dagster as dg

from rag_eval_pipeline.defs.resources.settings import SettingsResource


class TracingResource(dg.ConfigurableResource):
    """One trace per case over OTLP/HTTP. Needs the ``[tracing]`` extra (the OpenTelemetry SDK
    and its OTLP/HTTP exporter)."""

    settings: SettingsResource

    @property
    def destination(self) -> str:
        tracing = self.settings.settings.tracing
        return tracing.endpoint or tracing.preset

    def _target(self):
        from rag_eval_pipeline.tracing.otlp import resolve_target  # the optional extra

        tracing = self.settings.settings.tracing
        return resolve_target(
            tracing.preset,
            tracing.endpoint,
            tracing.headers_env,
            tracing.service_name,
            tracing.project,
            tracing.sample,
            tracing.flush_timeout_s,
            events_endpoint=tracing.events_endpoint,
        )

    @property
    def traces(self) -> bool:
        return self.settings.settings.tracing.enabled

    @property
    def events(self) -> bool:
        return self.settings.settings.tracing.evaluation_events

    def export(self, traces: list, qids: list[str]):
        from rag_eval_pipeline.tracing.otlp import export_traces  # the optional extra

        return export_traces(traces, qids, self._target())

    def send_scores_events(self, events: list, log) -> dict:
        """Sends the events of scores already stored (production days, trajectories) and says
        what came of it as asset metadata; a failure is logged, never raised: the scores stand."""
        try:
            sent = self.export_events(events)
        except Exception as err:  # no collector named (a configuration error) or the SDK missing
            log.warning(
                f"evaluation events not sent ({type(err).__name__}: {err}); the scores are unaffected"
            )
            return {"events_error": f"{type(err).__name__}: {err}"[:300]}
        if sent.dropped:
            log.warning(
                f"evaluation events: {sent.dropped} dropped ({sent.error}); the scores are unaffected"
            )
        return {"events": sent.events, "events_exported": sent.exported, "events_dropped": sent.dropped}

    def export_events(self, events: list, collector_down: str | None = None):
        """The evaluation events to the collector's logs endpoint and the events file, if
        either is configured (a file alone needs no collector)."""
        from pathlib import Path

        from rag_eval_pipeline.tracing.otlp import TracingConfigError, export_events

        tracing = self.settings.settings.tracing
        file = Path(tracing.events_file) if tracing.events_file else None
        try:
            target = self._target()
        except TracingConfigError:
            if file is None:
                raise
            target = None  # no collector named: the file alone
        return export_events(
            events,
            target,
            file,
            collector_down=collector_down,
            service_name=tracing.service_name,
            project=tracing.project,
        )


class PhoenixResource(dg.ConfigurableResource):
    """The judgement list as a Phoenix dataset and each answer model as an experiment (the
    ``tracing.phoenix`` section). Needs the ``[phoenix]`` extra (Phoenix's client library)."""

    settings: SettingsResource

    @property
    def url(self) -> str:
        return self.settings.settings.tracing.phoenix_url()

    def upload(self, judgement_list, cases, case_set: str, experiment_name: str, metadata: dict, log):
        from rag_eval_pipeline.tracing.phoenix_experiments import (  # the optional extra
            dataset_examples,
            dataset_name,
            upload_experiment,
        )

        tracing = self.settings.settings.tracing
        return upload_experiment(
            self.url,
            os.environ.get(tracing.phoenix.api_key_env) or None,
            dataset_name(tracing.project, case_set),
            dataset_examples(judgement_list),
            cases,
            experiment_name,
            metadata,
            log,
        )
