"""Scores where the agent's own traces are: `gen_ai.evaluation.result` log records received by
an OTLP receiver of the tests' own (decoded with opentelemetry-proto), each a child of the span
it evaluates: this pipeline's case span in a traced run, the agent's own root span for a
production sample read from its OTLP span files; and the same events as OTLP/JSON lines."""

import base64
import json
import threading

import pandas as pd
import pytest
import yaml
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from rag_eval_pipeline import cli
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.metrics.schema import ANSWER_METRICS, metric_columns, per_answer
from rag_eval_pipeline.tracing.events import SpanRef, evaluation_events
from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.otlp import OtlpReceiver
from rag_eval_pipeline_tests.support.processes import free_port
from rag_eval_pipeline_tests.support.production import shared_questions
from stand_ins.anthropic_api import SimulatedModel, _tag, _user_text, tool_reply

EVENT = "gen_ai.evaluation.result"
NAME, VALUE, ERROR = "gen_ai.evaluation.name", "gen_ai.evaluation.score.value", "error.type"


class OneUnreadableCase(SimulatedModel):
    """Judges like the simulated model, except every judgement of the first question it is asked
    about, which comes back in a shape no verdict parses (the judge fails that case)."""

    def __init__(self) -> None:
        super().__init__()
        self.poisoned: str | None = None
        self._guard = threading.Lock()

    def __call__(self, request):
        tool = (request.get("tool_choice") or {}).get("name")
        if tool is not None:
            question = _tag(_user_text(request), "question")
            with self._guard:
                self.poisoned = self.poisoned or question
            if question == self.poisoned:
                return tool_reply(request, {"nothing": "a verdict would read"})
        return super().__call__(request)


def _expected(scores: pd.DataFrame) -> set[tuple[str, str]]:
    """(qid, evaluation name) of every score the stored table holds, and of its diagnoses; what
    the answer did (beside every judge's metrics) is not an evaluation."""
    rows = per_answer(scores)
    metrics = [m for m in metric_columns(rows) if m not in ANSWER_METRICS]
    found = set()
    for row in rows.to_dict(orient="records"):
        prefix = "" if row["judge_id"] == "reference" else f"{row['judge_id']}."
        found |= {(row["qid"], prefix + m) for m in metrics if not pd.isna(row[m])}
        if isinstance(row.get("diagnosis"), str):
            found.add((row["qid"], prefix + "diagnosis"))
    return found


@pytest.mark.slow  # a whole run with an LLM judge (CI runs it)
def test_a_traced_run_sends_one_event_per_case_judge_and_metric_under_its_case_span(
    shared_hotpotqa, tmp_path, capsys, monkeypatch
):
    from stand_ins.anthropic_api import FakeAnthropic

    judge = OneUnreadableCase()
    events_file = tmp_path / "events.jsonl"
    with OtlpReceiver() as receiver, FakeAnthropic(judge) as claude:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        config = tmp_path / "rag_eval.yaml"
        tracing = {
            "enabled": True,
            "endpoint": f"{receiver.url}/v1/traces",
            "evaluation_events": True,
            "events_file": str(events_file),
        }
        config.write_text(json.dumps({"tracing": tracing, "thresholds": {"reference/correctness": 0.7}}))
        home = ["--config", str(config), "--dagster-home", str(tmp_path / "home")]
        run = ["run", "--dataset", str(shared_hotpotqa), "--sample", "10", "--models", "oracle"]
        assert cli.main([*home, *run, "--judges", "reference,claude-sonnet-4-6"]) == 0
    capsys.readouterr()

    assert {r["path"] for r in receiver.requests} == {"/v1/traces", "/v1/logs"}  # the logs beside
    roots = {s["attributes"]["rag_eval.qid"]: s for s in receiver.spans if not s["parent"]}
    assert len(roots) == 10
    events = receiver.logs
    assert events and {e["event_name"] for e in events} == {EVENT}
    for event in events:  # each a child of its case's span: the trace and span id on the record
        root = roots[event["attributes"]["rag_eval.qid"]]
        assert (event["trace_id"], event["span_id"]) == (root["trace_id"], root["span_id"])
        assert event["attributes"]["rag_eval.answer_model"] == "oracle"
        assert event["attributes"]["rag_eval.case_set"] and event["attributes"]["rag_eval.dagster_run_id"]

    scores = load_asset(open_instance(str(tmp_path / "home")), "judge_scores", "oracle")
    keys = [(e["attributes"]["rag_eval.qid"], e["attributes"][NAME]) for e in events]
    assert len(keys) == len(set(keys))  # one per case, judge and metric
    scored = {k for k, e in zip(keys, events) if ERROR not in e["attributes"]}
    assert scored == _expected(scores)
    assert {name for _, name in scored} >= {"correctness", "f1", "claude-sonnet-4-6.correctness"}
    stored = scores.set_index(["qid", "judge_id"])
    for (qid, name), event in zip(keys, events):
        if name == "f1":  # the reference judge's metric by its own name, its stored value
            assert event["attributes"][VALUE] == pytest.approx(stored.loc[(qid, "reference"), "f1"])
        if name == "correctness":  # a threshold holds it: pass or fail beside the score
            assert event["attributes"]["gen_ai.evaluation.score.label"] == "pass"  # the oracle

    # the judgement the judge could not read: error.type, no score, never 0
    failed = scores[(scores["judge_id"] == "claude-sonnet-4-6") & (scores["status"] != "ok")]
    assert len(failed) == 1
    errors = [e["attributes"] for e in events if ERROR in e["attributes"]]
    assert errors and {e["rag_eval.qid"] for e in errors} == set(failed["qid"])
    assert all(VALUE not in e and e[NAME].startswith("claude-sonnet-4-6.") for e in errors)
    assert "claude-sonnet-4-6.correctness" in {e[NAME] for e in errors}
    explained = [e for e in events if "gen_ai.evaluation.explanation" in e["attributes"]]
    assert explained  # the judge's reasons

    # the file: the same records as OTLP/JSON lines, ids in hex as OTLP/JSON writes them
    lines = [json.loads(line) for line in events_file.read_text().splitlines()]
    written = [
        r for line in lines for rl in line["resourceLogs"] for sl in rl["scopeLogs"] for r in sl["logRecords"]
    ]
    assert len(written) == len(events) and {r["eventName"] for r in written} == {EVENT}
    assert {(r["traceId"], r["spanId"]) for r in written} == {(e["trace_id"], e["span_id"]) for e in events}


def _agent_spans(folder, questions) -> dict[str, tuple[str, str]]:
    """An OpenInference-instrumented agent's traces as the collector's file exporter writes
    them (OTLP/JSON); question -> (trace id, root span id) as the SDK made them."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "bot", "service.version": "v3"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bot")
    for question in questions:
        with tracer.start_as_current_span("agent") as root:
            root.set_attribute("openinference.span.kind", "CHAIN")
            root.set_attribute("input.value", question["question"])
            root.set_attribute("output.value", question["answer"])
            with tracer.start_as_current_span("retrieve") as retriever:
                retriever.set_attribute("openinference.span.kind", "RETRIEVER")
                for n, sentences in enumerate(question["context"]["sentences"][:2]):
                    retriever.set_attribute(f"retrieval.documents.{n}.document.content", "".join(sentences))
    spans = exporter.get_finished_spans()
    folder.mkdir()
    (folder / "export.jsonl").write_text(json.dumps(MessageToDict(encode_spans(spans))) + "\n")
    return {
        s.attributes["input.value"]: (f"{s.context.trace_id:032x}", f"{s.context.span_id:016x}")
        for s in spans
        if s.parent is None
    }


def _spans(folder) -> list[dict]:
    """Every span of the file, as the collector's file exporter wrote it (OTLP/JSON)."""
    document = json.loads((folder / "export.jsonl").read_text())
    return [s for rs in document["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _first_day(folder) -> str:
    """The UTC day of the file's first span, as the SDK stamped it."""
    start = min(int(s["startTimeUnixNano"]) for s in _spans(folder))
    return pd.Timestamp(start, unit="ns", tz="UTC").strftime("%Y-%m-%d")


def _durations(folder) -> dict[str, float]:
    """Each root span's own duration in the file, in seconds, by its span id."""
    return {
        base64.b64decode(s["spanId"]).hex(): (int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])) / 1e9
        for s in _spans(folder)
        if not s.get("parentSpanId")
    }


@pytest.mark.slow  # a production day through the CLI (CI runs it)
def test_a_production_sample_read_from_span_files_scores_the_agents_own_spans(tmp_path, capsys):
    questions = shared_questions(6)
    agent_spans = _agent_spans(tmp_path / "spans", questions)
    day = _first_day(tmp_path / "spans")  # the day the SDK stamped (not the clock's, past midnight)
    with OtlpReceiver() as receiver:
        settings = {
            "tracing": {"evaluation_events": True, "endpoint": f"{receiver.url}/v1/traces"},
            "production": {
                "sources": [{"kind": "spans", "path": str(tmp_path / "spans")}],
                "start_date": "2026-11-01",
                "thresholds": {},
            },
        }
        config = tmp_path / "rag_eval.yaml"
        config.write_text(yaml.safe_dump(settings))
        args = ["--dagster-home", str(tmp_path / "home"), "--config", str(config)]
        code, out, err = in_process(capsys, *args, "production", "run", "--day", day)
    assert code == 0, out + err
    assert {r["path"] for r in receiver.requests} == {"/v1/logs"}  # no traces of our own asked for
    events = receiver.logs
    assert events and all(VALUE in e["attributes"] for e in events)
    parents = {(e["trace_id"], e["span_id"]) for e in events}
    assert parents == set(agent_spans.values())  # every sampled case, under the agent's root span
    from rag_eval_pipeline.production.settings import ProductionSettings
    from rag_eval_pipeline.production.sources import read_sources

    sample = read_sources(ProductionSettings.model_validate(settings["production"])).frame
    durations = _durations(tmp_path / "spans")
    assert dict(zip(sample["span_id"], sample["latency_s"])) == pytest.approx(
        {span: durations[span] for span in sample["span_id"]}
    )  # each case records its root span's own duration
    names = {e["attributes"][NAME] for e in events}
    assert "faithfulness_lexical" in names and all(
        e["attributes"]["rag_eval.production_day"] == day for e in events
    )


def test_events_without_a_known_span_are_unparented_and_a_failure_is_never_a_zero():
    scores = pd.DataFrame(
        [
            {
                "qid": "a",
                "repeat": 0,
                "judge_id": "strict",
                "status": "ok",
                "error": None,
                "correctness": 0.5,
                "rationales": json.dumps({"correctness": "half right"}),
            },
            {
                "qid": "b",
                "repeat": 0,
                "judge_id": "strict",
                "status": "judge_error",
                "error": "JudgeParseError: no verdict twice",
                "correctness": None,
                "rationales": None,
            },
        ]
    )
    parents = {("a", 0): SpanRef.of("ab" * 16, "cd" * 8), ("b", 0): SpanRef.of("not hex", "cd" * 8)}
    events = evaluation_events(scores, parents, {"rag_eval.answer_model": "m"}, {"strict": ("correctness",)})
    first, second = events
    assert first.parent == SpanRef("ab" * 16, "cd" * 8) and first.name == "strict.correctness"
    assert first.attributes["gen_ai.evaluation.score.value"] == 0.5
    assert first.attributes["gen_ai.evaluation.explanation"] == "half right"
    assert second.parent is None  # a malformed id is no parent, not a wrong one
    assert SpanRef.of_reply(f"00-{'ab' * 16}-{'cd' * 8}-01") == SpanRef("ab" * 16, "cd" * 8)
    assert SpanRef.of_reply("AB" * 16) == SpanRef("ab" * 16, None)  # a trace id alone: in that trace
    assert SpanRef.of_reply("00-" + "0" * 32 + "-" + "cd" * 8 + "-01") is None  # the invalid trace id
    assert second.attributes["error.type"] == "JudgeParseError"
    assert "gen_ai.evaluation.score.value" not in second.attributes


def test_a_collector_that_is_down_costs_one_bounded_flush_and_the_file_is_still_written(tmp_path):
    from rag_eval_pipeline.tracing.otlp import OtlpTarget, export_events

    down = f"http://127.0.0.1:{free_port()}/v1/traces"
    target = OtlpTarget(down, {}, "svc", "proj", flush_timeout_s=1)
    scores = pd.DataFrame(
        [
            {"qid": f"q{n}", "repeat": 0, "judge_id": "reference", "status": "ok", "error": None, "f1": 0.25}
            for n in range(5)
        ]
    )
    events = evaluation_events(scores, {}, {})
    report = export_events(events, target, tmp_path / "events.jsonl", batch_records=2)
    assert (report.events, report.exported, report.dropped, report.written) == (5, 0, 5, 5)
    assert report.error
    assert len((tmp_path / "events.jsonl").read_text().splitlines()) == 3  # a request a line


@pytest.mark.slow  # a trajectories run through the CLI (CI runs it)
def test_a_trajectorys_scores_go_to_the_root_span_each_session_began_with(tmp_path, capsys):
    """The scripted support agent's 18 sessions (OTLP/JSON): every session's figures as events
    in the file (no collector named: the file alone), each under the agent's root span of the
    session's first turn."""
    from rag_eval_pipeline_tests.trajectories.support_agent import write_files

    traces, reference = write_files(tmp_path / "agent")
    events_file = tmp_path / "events.jsonl"
    config = tmp_path / "rag_eval.yaml"
    config.write_text(json.dumps({"tracing": {"evaluation_events": True, "events_file": str(events_file)}}))
    args = ["--config", str(config), "--dagster-home", str(tmp_path / "home"), "trajectories"]
    code, out, err = in_process(capsys, *args, "--traces", str(traces), "--reference", str(reference))
    assert code in (0, 1), out + err  # 1: a session below a threshold; the events go out regardless
    spans = [
        span
        for rs in json.loads(traces.read_text())["resourceSpans"]
        for ss in rs["scopeSpans"]
        for span in ss["spans"]
    ]
    roots = {(s["traceId"].lower(), s["spanId"].lower()): s for s in spans if not s.get("parentSpanId")}
    records = [
        r
        for line in events_file.read_text().splitlines()
        for rl in json.loads(line)["resourceLogs"]
        for sl in rl["scopeLogs"]
        for r in sl["logRecords"]
    ]
    names = {next(a["value"]["stringValue"] for a in r["attributes"] if a["key"] == NAME) for r in records}
    assert {"trajectory.tool_call_f1", "trajectory.match_strict", "trajectory.steps"} <= names
    parents = {(r["traceId"], r["spanId"]) for r in records}
    assert len(parents) == 18 and parents <= set(roots)  # a session each, under the agent's own root
    f1 = [
        r
        for r in records
        if any(a["value"].get("stringValue") == "trajectory.tool_call_f1" for a in r["attributes"])
    ]
    assert len(f1) == 18


@pytest.mark.slow  # a Python agent's worker processes load its index (CI runs it)
def test_an_agent_that_names_its_trace_gets_its_scores_under_its_own_span(
    shared_hotpotqa, tmp_path, capsys, monkeypatch
):
    """A Python agent whose reply carries a `traceparent` (mapped by `response.trace`): every
    event goes under the span it named, not under a case span of ours."""
    from rag_eval_pipeline_tests.tracing.traced_agent import trace_of

    monkeypatch.setenv("EXAMPLE_AGENT_DATA", str(shared_hotpotqa))
    events_file = tmp_path / "events.jsonl"
    bot = {
        "name": "bot",
        "provider": "python",
        "target": "rag_eval_pipeline_tests.tracing.traced_agent:answer",
        "version": "t1",
        "response": {"answer": "$.answer", "contexts": "$.contexts", "trace": "$.meta.traceparent"},
    }
    config = tmp_path / "rag_eval.yaml"
    config.write_text(
        json.dumps(
            {"answer_models": [bot], "tracing": {"evaluation_events": True, "events_file": str(events_file)}}
        )
    )
    args = ["--config", str(config), "--dagster-home", str(tmp_path / "home")]
    run = ["run", "--dataset", str(shared_hotpotqa), "--sample", "5", "--models", "bot"]
    code, out, err = in_process(capsys, *args, *run)
    assert code == 0, out + err
    answers = load_asset(open_instance(str(tmp_path / "home")), "candidate_answers", "bot")
    expected = {trace_of(q) for q in answers["question"]}
    records = [
        r
        for line in events_file.read_text().splitlines()
        for rl in json.loads(line)["resourceLogs"]
        for sl in rl["scopeLogs"]
        for r in sl["logRecords"]
    ]
    assert records and {(r["traceId"], r["spanId"]) for r in records} == expected


@pytest.mark.slow  # two runs of an LLM answer model and an HTTP agent (CI runs it)
def test_replies_ids_and_an_http_agents_traceparent_header_reach_the_events(
    shared_hotpotqa, tmp_path, capsys, monkeypatch
):
    """Claude's answers (the Messages-API stand-in's ``msg_...`` ids) and the tests' own HTTP
    agent's (its mapped ``meta.reply_id``) carry ``gen_ai.response.id``; the agent's events go
    under the span its ``traceparent`` response header names, not a case span of ours. A re-run
    from the cache sends the first run's ids."""
    from example_agent.server import reply_id_of, trace_of
    from rag_eval_pipeline_tests.support.agent import HTTP_BODY, HTTP_RESPONSE, agent_service
    from stand_ins.anthropic_api import FakeAnthropic

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    config = tmp_path / "rag_eval.yaml"
    home = ["--config", str(config), "--dagster-home", str(tmp_path / "home")]
    run = ["run", "--dataset", str(shared_hotpotqa), "--sample", "5", "--models", "bot,haiku"]

    def traced_run(receiver, agent_url: str) -> list[dict]:
        bot = {
            "name": "bot",
            "provider": "http",
            "url": agent_url,
            "version": "b1",
            "body": HTTP_BODY,
            "response": {**HTTP_RESPONSE, "id": "$.meta.reply_id"},  # no trace path: the header
        }
        tracing = {"enabled": True, "endpoint": f"{receiver.url}/v1/traces", "evaluation_events": True}
        config.write_text(json.dumps({"answer_models": [bot], "tracing": tracing}))
        code, out, err = in_process(capsys, *home, *run)
        assert code == 0, out + err
        return receiver.logs

    with agent_service(traced=True) as agent, FakeAnthropic() as claude, OtlpReceiver() as receiver:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        events = traced_run(receiver, agent.url)
        asked, agent_url = len(claude.requests), agent.url
    instance = open_instance(str(tmp_path / "home"))
    bot, haiku = (load_asset(instance, "candidate_answers", m) for m in ("bot", "haiku"))
    by_model = {
        model: [e for e in events if e["attributes"]["rag_eval.answer_model"] == model]
        for model in ("bot", "haiku")
    }
    assert by_model["bot"] and by_model["haiku"] and asked

    ids = dict(zip(haiku["qid"], haiku["response_id"]))
    assert all(i.startswith("msg_") for i in ids.values()) and len(set(ids.values())) == len(ids)
    for event in by_model["haiku"]:
        assert event["attributes"]["gen_ai.response.id"] == ids[event["attributes"]["rag_eval.qid"]]

    questions = dict(zip(bot["qid"], bot["question"]))
    for event in by_model["bot"]:
        question = questions[event["attributes"]["rag_eval.qid"]]
        assert (event["trace_id"], event["span_id"]) == trace_of(question)  # the header's span
        assert event["attributes"]["gen_ai.response.id"] == reply_id_of(question)

    # the agent is gone and Claude is new: every answer comes from the cache, with its first id
    with FakeAnthropic() as claude, OtlpReceiver() as receiver:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        again = traced_run(receiver, agent_url)
        assert not claude.requests
    assert {e["attributes"]["rag_eval.answer_model"] for e in again} == {"bot", "haiku"}
    for event in again:
        qid = event["attributes"]["rag_eval.qid"]
        if event["attributes"]["rag_eval.answer_model"] == "haiku":
            assert event["attributes"]["gen_ai.response.id"] == ids[qid]
        else:  # the cached reply keeps its header too
            assert (event["trace_id"], event["span_id"]) == trace_of(questions[qid])
