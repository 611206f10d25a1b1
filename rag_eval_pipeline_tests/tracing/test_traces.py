"""Case traces through the CLI: the OTLP/HTTP wire shape Langfuse reads (a receiver of the tests'
own: a live Langfuse was not available here), a collector that is down, and a real Phoenix
server that lists the traces and renders them in headless chromium."""

import base64
import json
import os
import shutil
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import dagster as dg
import pytest

from rag_eval_pipeline import cli
from rag_eval_pipeline_tests.conftest import REPO_ROOT, free_port, stop_process_group

PHOENIX_VARIABLE = "RAG_EVAL_TEST_PHOENIX"  # the `phoenix` executable (.ci/run installs one)


class OtlpReceiver:
    """Takes OTLP/HTTP protobuf exports and keeps each request's path, headers and spans."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> "OtlpReceiver":
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                export = ExportTraceServiceRequest.FromString(body)
                spans = [
                    {
                        "name": span.name,
                        "trace_id": span.trace_id.hex(),
                        "parent": span.parent_span_id.hex(),
                        "attributes": {a.key: _value(a.value) for a in span.attributes},
                    }
                    for resource in export.resource_spans
                    for scope in resource.scope_spans
                    for span in scope.spans
                ]
                headers = {k.lower(): v for k, v in self.headers.items()}
                receiver.requests.append({"path": self.path, "headers": headers, "spans": spans})
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args) -> None:  # keep test output clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def spans(self) -> list[dict]:
        return [span for request in self.requests for span in request["spans"]]

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()


def _value(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


def _run(tmp_path, dataset, tracing: dict, models="oracle,null", sample="10", env=None):
    config = tmp_path / "rag_eval.yaml"
    config.write_text(json.dumps({"tracing": {"enabled": True, **tracing}}))
    old = dict(os.environ)
    os.environ.update(env or {})
    try:
        code = cli.main(
            [
                "--config",
                str(config),
                "--dagster-home",
                str(tmp_path / "home"),
                "run",
                "--dataset",
                str(dataset),
                "--sample",
                sample,
                "--models",
                models,
            ]
        )
    finally:
        os.environ.clear()
        os.environ.update(old)
    return code


def test_traces_carry_the_attributes_langfuse_reads_on_its_otlp_path(shared_hotpotqa, tmp_path, capsys):
    with OtlpReceiver() as receiver:
        env = {
            "LANGFUSE_HOST": receiver.url,
            "LANGFUSE_PUBLIC_KEY": "pk-lf-test",
            "LANGFUSE_SECRET_KEY": "sk-lf-test",
        }
        assert _run(tmp_path, shared_hotpotqa, {"preset": "langfuse"}, env=env) == 0
    capsys.readouterr()
    assert {r["path"] for r in receiver.requests} == {"/api/public/otel/v1/traces"}
    expected = "Basic " + base64.b64encode(b"pk-lf-test:sk-lf-test").decode()
    assert {r["headers"].get("authorization") for r in receiver.requests} == {expected}
    roots = [s for s in receiver.spans if not s["parent"]]
    assert len(roots) == 20  # ten cases, two answer models: one trace each
    root = next(s for s in roots if s["attributes"]["rag_eval.answer_model"] == "oracle")
    attributes = root["attributes"]
    assert attributes["langfuse.trace.name"].startswith("case ") and attributes["input.value"]
    assert attributes["rag_eval.score.reference.correctness"] == 1.0  # the oracle, judged
    assert attributes["rag_eval.index_version"] and attributes["rag_eval.dagster_run_id"]
    children = [s for s in receiver.spans if s["trace_id"] == root["trace_id"] and s["parent"]]
    by_name = {s["name"]: s["attributes"] for s in children}
    assert set(by_name) == {"retrieval", "answer", "judge reference"}
    assert by_name["retrieval"]["openinference.span.kind"] == "RETRIEVER"
    assert len(by_name["retrieval"]["rag_eval.retrieval.titles"]) == 4
    assert by_name["answer"]["langfuse.observation.type"] == "generation"
    assert (
        by_name["answer"]["gen_ai.request.model"] == "oracle"
        and "gen_ai.usage.input_tokens" in by_name["answer"]
    )
    assert by_name["judge reference"]["rag_eval.score.correctness"] == 1.0


def test_a_collector_that_is_down_never_fails_the_evaluation(shared_hotpotqa, tmp_path, capsys):
    down = f"http://127.0.0.1:{free_port()}/v1/traces"  # nothing listens there
    code = _run(tmp_path, shared_hotpotqa, {"endpoint": down, "flush_timeout_s": 1}, models="oracle")
    out = capsys.readouterr()
    assert code == 0 and "| oracle | reference | 10 | 0 |" in out.out
    assert (out.out + out.err).count("spans dropped") == 1  # said once, for the partition
    with dg.DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        record = instance.fetch_materializations(dg.AssetKey("case_traces"), limit=1).records[0]
        metadata = record.asset_materialization.metadata
    assert metadata["spans_dropped"].value == 40 and metadata["spans_exported"].value == 0  # 10 x 4 spans


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    """A real Phoenix (arize-phoenix, SQLite) on a free port in a fresh folder. Missing is a
    failure, not a skip: .ci/run installs it and exports RAG_EVAL_TEST_PHOENIX."""
    executable = os.environ.get(PHOENIX_VARIABLE) or shutil.which("phoenix")
    if not executable:
        pytest.fail(f"no Phoenix: install arize-phoenix (bash .ci/phoenix.sh) and export {PHOENIX_VARIABLE}")
    folder = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(folder),
        "PHOENIX_PORT": str(port),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = open(folder / "phoenix.log", "w")  # noqa: SIM115 (open for the server's lifetime)
    process = subprocess.Popen(
        [executable, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/healthz", timeout=2)
            break
        except OSError:
            assert process.poll() is None, (folder / "phoenix.log").read_text()[-2000:]
            time.sleep(0.5)  # still starting
    else:
        pytest.fail(f"Phoenix did not start: {(folder / 'phoenix.log').read_text()[-2000:]}")
    yield url
    stop_process_group(process)
    log.close()


def _phoenix_spans(url: str, project: str) -> list[dict]:
    spans, cursor = [], None
    while True:
        query = f"?limit=1000{'&cursor=' + cursor if cursor else ''}"
        with urllib.request.urlopen(f"{url}/v1/projects/{project}/spans{query}", timeout=30) as response:
            page = json.loads(response.read())
        spans += page["data"]
        cursor = page.get("next_cursor")
        if not cursor:
            return spans


def test_phoenix_lists_every_case_with_its_spans_tokens_and_scores(
    phoenix, shared_hotpotqa, tmp_path, capsys
):
    tracing = {"preset": "phoenix", "endpoint": f"{phoenix}/v1/traces", "project": "rag-eval-test"}
    assert _run(tmp_path, shared_hotpotqa, tracing, models="oracle") == 0
    capsys.readouterr()
    spans = _phoenix_spans(phoenix, "rag-eval-test")
    roots = [s for s in spans if not s.get("parent_id")]
    assert len(roots) == 10 and all(r["name"].startswith("case ") for r in roots)
    kinds = {s["name"]: s["span_kind"] for s in spans if s.get("parent_id")}
    assert kinds == {"retrieval": "RETRIEVER", "answer": "LLM", "judge reference": "EVALUATOR"}
    answer = next(s for s in spans if s["name"] == "answer")
    assert "llm.token_count.prompt" in json.dumps(answer["attributes"])
    assert all("rag_eval.score.reference.correctness" in json.dumps(r["attributes"]) for r in roots)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(f"{phoenix}/projects", wait_until="networkidle")
        page.get_by_text("rag-eval-test").first.click()
        page.get_by_text(roots[0]["name"]).first.wait_for(timeout=30_000)
        artifacts = REPO_ROOT / "test-artifacts"
        artifacts.mkdir(exist_ok=True)
        page.screenshot(path=str(artifacts / "phoenix-traces.png"))
        browser.close()
    assert Path(artifacts / "phoenix-traces.png").is_file()
