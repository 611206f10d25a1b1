"""Sessions rebuilt from spans: keys found where each convention puts them, children reattached
through their root, orphans counted, versions from the span or the resource, and the forms of
arguments a tool span may carry."""

import json

import pytest

from rag_eval_pipeline.production.spans import Span, nested
from rag_eval_pipeline.trajectories.reference import ExpectedCall
from rag_eval_pipeline.trajectories.sessions import reconstruct
from rag_eval_pipeline.trajectories.traces import LocatedSpan, TraceInputError


def span(trace, span_id, parent=None, start=0, resource=None, **attributes) -> LocatedSpan:
    flat = {k.replace("__", "."): v for k, v in attributes.items()}
    return LocatedSpan(Span(trace, span_id, parent, start, nested(flat), resource or {}, span_id), "f.json")


def test_keys_in_order_children_reattached_and_orphans_counted():
    spans = [
        span("t1", "r1", session__id="s-1", openinference__span__kind="AGENT"),
        span("t1", "c1", "r1", 1, openinference__span__kind="TOOL", tool__name="a", input__value='{"x": 1}'),
        # a later turn of the same conversation, its key in the metadata
        span("t2", "r2", None, 5, metadata=json.dumps({"thread_id": "s-1"})),
        span("t2", "c2", "r2", 6, gen_ai__operation__name="execute_tool", gen_ai__tool__name="b"),
        # no key anywhere: a session of its own, by trace
        span("t3", "r3", None, 9),
        # a trace whose root is not in the file
        span("t4", "c4", "gone", 3, openinference__span__kind="TOOL", tool__name="c", input__value="{}"),
    ]
    sessions, report = reconstruct(spans)
    assert [s.session_id for s in sessions] == ["s-1", "t3"]
    first = sessions[0]
    assert [t.span_id for t in first.turns] == ["r1", "r2"] and [c.name for c in first.tool_calls] == [
        "a",
        "b",
    ]
    assert first.tool_calls[1].arguments == "{}"  # no arguments attribute: none, and counted
    assert (report.own_session_key, report.reattached, report.orphans) == (2, 2, 1)
    assert (report.tool_spans, report.tool_spans_with_arguments, report.sessions_by_trace_id) == (3, 2, 1)
    assert report.files["f.json"].orphans == 1 and report.files["f.json"].spans == 6
    assert report.shortfalls() == [
        "spans with a session key: 66.7% < 95%",
        "tool spans with arguments: 66.7% < 95%",
        "spans in a turn (not orphans): 83.3% < 95%",
    ]


def test_the_version_comes_from_the_root_span_then_the_resource():
    on_span = reconstruct([span("t", "r", gen_ai__agent__version="2.0", session__id="a")])[0][0]
    on_resource = reconstruct([span("t", "r", resource={"service": {"version": "3.1"}}, session__id="a")])[0][
        0
    ]
    nowhere = reconstruct([span("t", "r", session__id="a")])[0][0]
    assert (on_span.agent_version, on_resource.agent_version, nowhere.agent_version) == (
        "2.0",
        "3.1",
        "unversioned",
    )


def test_arguments_not_json_name_the_span_and_the_tool_and_empty_ones_are_none():
    bad = span("t", "c", "r", 1, openinference__span__kind="TOOL", tool__name="mail", input__value="{to: x}")
    with pytest.raises(TraceInputError, match=r"f\.json: span c \(tool mail\): arguments are not JSON"):
        reconstruct([span("t", "r"), bad])
    empty = span("t", "c", "r", 1, gen_ai__operation__name="execute_tool", gen_ai__tool__name="now",
                 gen_ai__tool__call__arguments="")  # fmt: skip
    sessions, report = reconstruct([span("t", "r"), empty])
    assert sessions[0].tool_calls[0].arguments == "{}" and report.tool_spans_with_arguments == 1


def test_expected_arguments_written_as_json_text_are_the_same_arguments():
    as_text = ExpectedCall(name="f", arguments='{"b": 2, "a": 1}')
    as_object = ExpectedCall(name="f", arguments={"a": 1, "b": 2})
    assert as_text.canonical_arguments == as_object.canonical_arguments == '{"a":1,"b":2}'
    with pytest.raises(ValueError, match="not JSON"):
        ExpectedCall(name="f", arguments="{a: 1}")


def test_sessions_in_chinese_and_spanish_match_their_calls_character_for_character():
    """Arguments compare as JSON values, whatever the script: 北京 matches 北京 (escaped as
    \\u5317\\u4eac by one exporter or not by another), and 'Bogotá' is not 'Bogota'."""
    from rag_eval_pipeline.trajectories.reference import Task
    from rag_eval_pipeline.trajectories.scoring import score_session

    spans = [
        span("t1", "r1", session__id="会话-1", input__value="北京明天的天气？"),
        span(
            "t1",
            "c1",
            "r1",
            1,
            openinference__span__kind="TOOL",
            tool__name="天气",
            input__value='{"城市": "\\u5317\\u4eac"}',
        ),  # fmt: skip
        span("t2", "r2", None, 5, session__id="sesión-2", input__value="¿Qué tiempo hace en Bogotá?"),
        span(
            "t2",
            "c2",
            "r2",
            6,
            openinference__span__kind="TOOL",
            tool__name="clima",
            input__value='{"ciudad": "Bogota"}',
        ),  # fmt: skip
    ]
    sessions, _ = reconstruct(spans)
    chinese, spanish = sessions
    assert chinese.turns[0].user == "北京明天的天气？" and chinese.session_id == "会话-1"
    expected = Task.model_validate(
        {
            "task_id": "a",
            "session_ids": ["会话-1"],
            "turns": [{"expected_tool_calls": [{"name": "天气", "arguments": {"城市": "北京"}}]}],
        }  # fmt: skip
    )
    assert score_session(chinese, expected).match_strict
    accented = Task.model_validate(
        {
            "task_id": "b",
            "session_ids": ["sesión-2"],
            "turns": [{"expected_tool_calls": [{"name": "clima", "arguments": {"ciudad": "Bogotá"}}]}],
        }  # fmt: skip
    )
    assert score_session(spanish, accented).tool_call_f1 == 0
