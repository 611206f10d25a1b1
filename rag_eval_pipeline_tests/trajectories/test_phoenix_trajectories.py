"""Trajectories read from a real Phoenix: the support agent's spans sent to it over OTLP (each
convention to a project of its own) are read back through its REST API and give the same
sessions and scores as the files they came from."""

import base64
import json
import urllib.request

import pytest
import yaml
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.phoenix import phoenix_root_spans
from rag_eval_pipeline_tests.trajectories.support_agent import VERSION, export, runs, spans

pytestmark = pytest.mark.slow  # a real Phoenix


def _protobuf(document: dict) -> bytes:
    """OTLP/JSON writes ids in hex where protobuf's JSON mapping reads base64."""
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return ParseDict(document, ExportTraceServiceRequest()).SerializeToString()


def _send(phoenix: str, document: dict) -> None:
    request = urllib.request.Request(
        f"{phoenix}/v1/traces",
        data=_protobuf(document),
        headers={"Content-Type": "application/x-protobuf"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200


def test_sessions_read_from_phoenix_score_as_the_files_do(phoenix, tmp_path, capsys):
    sessions, reference = runs()
    ref = tmp_path / "reference.jsonl"
    ref.write_text("".join(json.dumps(row) + "\n" for row in reference))
    results = {}
    for convention in ("openinference", "genai"):
        project = f"support-{convention}"
        rows = spans(sessions, convention, seed=len(convention))  # ids of its own: Phoenix keeps one of each
        _send(phoenix, export(json.loads(json.dumps(rows)), convention, VERSION, project))
        assert len(phoenix_root_spans(phoenix, project, 36)) == 36
        file = tmp_path / f"{convention}.json"
        file.write_text(json.dumps(export(rows, convention)))
        config = tmp_path / f"{convention}.yaml"
        config.write_text(yaml.safe_dump({"trajectories": {"phoenix": {"url": phoenix, "project": project}}}))
        base = ["--dagster-home", str(tmp_path / f"home-{convention}")]
        code, out, err = in_process(
            capsys,
            *base,
            "--config",
            str(config),
            "trajectories",
            "--reference",
            str(ref),
            "--format",
            "json",
        )
        assert code == 0, err
        from_phoenix = json.loads(out)
        code, out, err = in_process(
            capsys, *base, "trajectories", "--traces", str(file), "--reference", str(ref), "--format", "json"
        )
        assert code == 0, err
        from_file = json.loads(out)
        results[convention] = from_phoenix
        assert from_phoenix["sessions"] == from_file["sessions"]
        assert from_phoenix["pass_hat_k"] == from_file["pass_hat_k"]
        assert from_phoenix["reconstruction"]["reattached_through_root"] == 80
    strip = [{k: v for k, v in s.items() if k != "span_ids"} for s in results["genai"]["sessions"]]
    assert strip == [
        {k: v for k, v in s.items() if k != "span_ids"} for s in results["openinference"]["sessions"]
    ]
