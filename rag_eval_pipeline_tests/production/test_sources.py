"""Every production source read into one table: logs through a nested column mapping, OTLP/JSON
span exports as the OpenTelemetry SDK encodes them, Phoenix's span JSON; every unreadable row
named by file and line (or span) while the rest are kept."""

import json

import pandas as pd
import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from rag_eval_pipeline.production.interactions import parse_timestamp
from rag_eval_pipeline.production.settings import ProductionSettings
from rag_eval_pipeline.production.sources import read_sources
from rag_eval_pipeline_tests.support.production import (
    UNSUPPORTED,
    log_row,
    production_config,
    shared_questions,
    write_day,
)


def test_logs_through_a_nested_mapping_and_every_bad_row_named(tmp_path):
    questions = shared_questions(4)
    path = write_day(
        tmp_path, "2026-11-27", [log_row(q, "2026-11-27", n, n % 2 == 0) for n, q in enumerate(questions)]
    )
    with path.open("a") as handle:
        handle.write("{broken\n")
        handle.write(json.dumps({"request": {"query": "where?"}, "ts": "2026-11-27T10:00:00Z"}) + "\n")
        handle.write(
            json.dumps({**log_row(questions[0], "2026-11-27", 9, True), "ts": "last tuesday"}) + "\n"
        )
    settings = ProductionSettings.model_validate(production_config(tmp_path))
    read = read_sources(settings)

    assert [str(p) for p in read.problems] == [
        f"{path}, line 5: invalid JSON (Expecting property name enclosed in double quotes)",
        f"{path}, line 6: answer: reply.text found nothing in the row",
        f"{path}, line 7: timestamp 'last tuesday' does not parse (ISO 8601 or epoch seconds)",
    ]
    frame = read.frame
    assert len(frame) == 4 and set(frame["day"]) == {"2026-11-27"}
    first = frame.iloc[0]
    gold = list(dict.fromkeys(questions[0]["supporting_facts"]["title"]))
    assert first["question"] == questions[0]["question"] and first["answer"] == questions[0]["answer"]
    assert list(first["context_titles"])[: len(gold)] == gold  # the agent's own order
    assert all(i.startswith("kb-") for i in first["context_ids"])
    assert frame.iloc[1]["answer"] == UNSUPPORTED
    assert first["location"] == f"{path}, line 1" and first["agent_version"] == "v1"
    # the same export read twice is the same interactions (ids from the trace)
    again = read_sources(settings)
    assert list(again.frame["interaction_id"]) == list(frame["interaction_id"])


def test_a_missing_contexts_field_is_unknown_and_an_empty_list_is_none_served(tmp_path):
    rows = [
        {"question": "a?", "answer": "x", "timestamp": "2026-11-27T08:00:00Z"},
        {"question": "b?", "answer": "y", "contexts": [], "timestamp": "2026-11-27T08:00:01Z"},
    ]
    write_day(tmp_path, "2026-11-27", rows)
    settings = ProductionSettings.model_validate({"sources": [{"kind": "logs", "path": str(tmp_path)}]})
    frame = read_sources(settings).frame.set_index("question")
    assert not frame.loc["a?", "contexts_known"]  # nothing to judge faithfulness on: absent
    assert frame.loc["b?", "contexts_known"] and list(frame.loc["b?", "contexts"]) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-27T23:30:00Z", "2026-11-27 23:30:00+00:00"),
        ("2026-11-27T23:30:00+01:00", "2026-11-27 22:30:00+00:00"),
        ("2026-11-27 23:30", "2026-11-27 22:30:00+00:00"),  # naive: in the configured zone (Paris)
        (1795821000, "2026-11-27 23:10:00+00:00"),  # epoch seconds
        (1795821000123, "2026-11-27 23:10:00.123000+00:00"),  # milliseconds
        ("1795821000000000000", "2026-11-27 23:10:00+00:00"),  # OTLP nanoseconds, as text
    ],
)
def test_timestamps_in_every_form_a_log_writes(value, expected):
    from zoneinfo import ZoneInfo

    assert str(parse_timestamp(value, ZoneInfo("Europe/Paris")).tz_convert("UTC")) == expected


def test_days_end_at_the_configured_midnight(tmp_path):
    rows = [{"question": "late?", "answer": "yes", "contexts": ["c"], "timestamp": "2026-11-27T23:30:00Z"}]
    write_day(tmp_path, "x", rows)
    utc = ProductionSettings.model_validate({"sources": [{"kind": "logs", "path": str(tmp_path)}]})
    paris = utc.model_copy(update={"timezone": "Europe/Paris"})
    assert list(read_sources(utc).frame["day"]) == ["2026-11-27"]
    assert list(read_sources(paris).frame["day"]) == ["2026-11-28"]  # 00:30 in Paris


def _agent_trace(tracer, question: dict, answered: str | None, version: str) -> None:
    """What an OpenInference-instrumented agent emits: a root span with the question and
    answer, a retriever span with its documents."""
    with tracer.start_as_current_span("agent") as root:
        root.set_attribute("openinference.span.kind", "CHAIN")
        root.set_attribute("input.value", question["question"])
        root.set_attribute("metadata", json.dumps({"agent_version": version, "channel": "web"}))
        with tracer.start_as_current_span("retrieve") as retriever:
            retriever.set_attribute("openinference.span.kind", "RETRIEVER")
            for n, (title, sentences) in enumerate(
                zip(question["context"]["title"][:2], question["context"]["sentences"][:2])
            ):
                retriever.set_attribute(f"retrieval.documents.{n}.document.id", f"doc-{n}")
                retriever.set_attribute(f"retrieval.documents.{n}.document.content", "".join(sentences))
                retriever.set_attribute(
                    f"retrieval.documents.{n}.document.metadata", json.dumps({"title": title})
                )
        if answered is not None:
            root.set_attribute("output.value", answered)


def test_otlp_json_exports_as_the_sdk_encodes_them(tmp_path):
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "bot", "service.version": "v7"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bot")
    questions = shared_questions(3)
    _agent_trace(tracer, questions[0], questions[0]["answer"], "v2")
    _agent_trace(tracer, questions[1], "Paris", "v2")
    _agent_trace(tracer, questions[2], None, "v2")  # an answer that never came
    # the export format the collector's file exporter writes: OTLP/JSON, one request per line
    request = MessageToDict(encode_spans(exporter.get_finished_spans()))
    (tmp_path / "export.jsonl").write_text(json.dumps(request) + "\n")
    settings = ProductionSettings.model_validate({"sources": [{"kind": "spans", "path": str(tmp_path)}]})
    read = read_sources(settings)

    assert len(read.frame) == 2
    assert (
        len(read.problems) == 1 and "no answer" in str(read.problems[0]) and "span " in str(read.problems[0])
    )
    row = read.frame.set_index("question").loc[questions[0]["question"]]
    assert row["answer"] == questions[0]["answer"]
    assert list(row["context_titles"]) == questions[0]["context"]["title"][:2]
    assert list(row["context_ids"]) == ["doc-0", "doc-1"]
    assert row["agent_version"] == "v2"  # from the root's metadata
    assert len(row["trace_id"]) == 32  # hex, whatever encoding the export used
    assert json.loads(row["metadata"])["channel"] == "web"


def test_phoenix_span_json_with_flattened_attributes(tmp_path):
    question = shared_questions(1)[0]
    spans = {
        "data": [
            {
                "context": {"trace_id": "ab" * 16, "span_id": "01" * 8},
                "parent_id": None,
                "span_kind": "CHAIN",
                "start_time": "2026-11-28T12:00:00+00:00",
                "attributes": {"input.value": question["question"], "output.value": "yes"},
            },
            {
                "context": {"trace_id": "ab" * 16, "span_id": "02" * 8},
                "parent_id": "01" * 8,
                "span_kind": "RETRIEVER",
                "start_time": "2026-11-28T12:00:00+00:00",
                "attributes": {
                    "retrieval.documents.0.document.content": "A passage.",
                    "retrieval.documents.0.document.metadata.title": "T",
                },
            },
        ]
    }
    (tmp_path / "spans.json").write_text(json.dumps(spans))
    settings = ProductionSettings.model_validate({"sources": [{"kind": "spans", "path": str(tmp_path)}]})
    frame = read_sources(settings).frame
    assert frame[["question", "answer", "day"]].values.tolist() == [
        [question["question"], "yes", "2026-11-28"]
    ]
    assert list(frame.iloc[0]["contexts"]) == ["A passage."] and list(frame.iloc[0]["context_titles"]) == [
        "T"
    ]


def test_a_bad_file_is_named_for_the_days_it_belongs_to(tmp_path):
    questions = shared_questions(2)
    good = write_day(tmp_path, "2026-11-27", [log_row(questions[0], "2026-11-27", 0, True)])
    bad = write_day(tmp_path, "2026-11-28", [log_row(questions[1], "2026-11-28", 0, True)])
    with bad.open("a") as handle:
        handle.write("{broken\n")
    settings = ProductionSettings.model_validate(production_config(tmp_path))
    assert not read_sources(settings, "2026-11-27").problems  # the 27th's own file is whole
    assert [p.file for p in read_sources(settings, "2026-11-28").problems] == [str(bad)]
    assert isinstance(read_sources(settings, "2026-11-27").frame, pd.DataFrame) and good.exists()


def test_every_kind_a_configuration_file_names_has_one_reader_and_no_reader_lacks_its_kind():
    """A kind is its settings model (in the concern's tuple, which the configuration file's
    field is built from) and one row of the concern's table: a model without its row, or a row
    whose model the file cannot name, fails here rather than at a user's first run."""
    from rag_eval_pipeline.production.feedback_sources import FEEDBACK_KINDS
    from rag_eval_pipeline.production.settings import FEEDBACK_SETTINGS, SOURCE_SETTINGS, kind_tag
    from rag_eval_pipeline.production.sources import SOURCE_KINDS

    for models, table in ((SOURCE_SETTINGS, SOURCE_KINDS), (FEEDBACK_SETTINGS, FEEDBACK_KINDS)):
        assert sorted(kind_tag(m) for m in models) == sorted(table)
        assert all(table[kind_tag(m)].settings is m for m in models)
