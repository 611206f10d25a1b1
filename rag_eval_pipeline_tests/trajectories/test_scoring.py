"""The trajectory metrics against their definitions on small hand-made sessions: argument
rules, parallel calls, empty sides, pass^k; and properties that hold for any session."""

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_eval_pipeline.trajectories.reference import Task
from rag_eval_pipeline.trajectories.scoring import pass_hat_k, score_session
from rag_eval_pipeline.trajectories.sessions import Session, ToolCall, Turn, canonical_json


def call(name: str, start: int = 0, end: int | None = None, **arguments) -> ToolCall:
    return ToolCall(
        name, canonical_json(arguments), start, start + 1 if end is None else end, f"s{start}{name}"
    )


def session(*turns: tuple[ToolCall, ...]) -> Session:
    return Session(
        "s",
        "session.id",
        "v",
        tuple(Turn("t", f"r{i}", i, "u", "a", calls, ()) for i, calls in enumerate(turns)),
        "f",
    )


def task(*turns: list[dict], **extra) -> Task:
    return Task.model_validate(
        {"task_id": "t", "session_ids": ["s"], "turns": [{"expected_tool_calls": t} for t in turns], **extra}
    )


def test_both_sides_empty_is_a_perfect_match_and_one_side_empty_scores_zero():
    empty = score_session(session(()), task([]))
    assert empty.tool_call_f1 == 1 and empty.match_strict and empty.match_superset
    assert empty.tool_error_rate is None and empty.tool_call_precision is None  # absent, not 0
    none_made = score_session(session(()), task([{"name": "a"}]))
    assert none_made.tool_call_f1 == 0 and none_made.match_subset and not none_made.match_superset
    none_expected = score_session(session((call("a"),)), task([]))
    assert none_expected.tool_call_f1 == 0 and none_expected.match_superset and not none_expected.match_subset


def test_argument_rules_exact_subset_and_ignore():
    made = session((call("mail", 0, to="a", subject="hi", meta={"x": 1, "y": 2}),))
    exact = score_session(made, task([{"name": "mail", "arguments": {"to": "a"}}]))
    assert exact.tool_call_f1 == 0  # exact: the same JSON, not a part of it
    subset = score_session(
        made, task([{"name": "mail", "arguments": {"to": "a", "meta": {"x": 1}}, "arg_match": "subset"}])
    )
    assert subset.match_strict  # nested objects: every expected key, recursively
    wrong = score_session(made, task([{"name": "mail", "arguments": {"to": "b"}, "arg_match": "subset"}]))
    assert not wrong.match_unordered
    ignored = score_session(made, task([{"name": "mail", "arguments": {"to": "b"}, "arg_match": "ignore"}]))
    assert ignored.match_strict
    renamed = score_session(made, task([{"name": "email", "arg_match": "ignore"}]))
    assert renamed.tool_call_f1 == 0  # the name always counts


def test_the_largest_pairing_is_found_when_rules_overlap():
    """A greedy pairing would give the first made call to the loose expected call and leave the
    strict one unmatched; the maximum pairing matches both."""
    made = session((call("f", 0, q=1), call("f", 2, q=2)))
    expected = task([{"name": "f", "arg_match": "ignore"}, {"name": "f", "arguments": {"q": 1}}])
    assert score_session(made, expected).tool_call_f1 == 1 and score_session(made, expected).match_unordered


def test_parallel_calls_match_in_any_order_and_sequential_ones_do_not():
    expected = task([{"name": "f", "arguments": {"q": 1}}, {"name": "f", "arguments": {"q": 2}}])
    overlapping = session((call("f", 0, 10, q=2), call("f", 5, 12, q=1)))
    assert score_session(overlapping, expected).match_strict
    sequential = session((call("f", 0, 4, q=2), call("f", 5, 9, q=1)))
    result = score_session(sequential, expected)
    assert not result.match_strict and result.match_unordered


def test_calls_count_in_turn_order_across_turns():
    expected = task([{"name": "a"}], [{"name": "b"}])
    swapped = session((call("b"),), (call("a"),))
    result = score_session(swapped, expected)
    assert result.match_unordered and not result.match_strict


def test_pass_hat_k_is_c_choose_k_over_n_choose_k():
    assert pass_hat_k(2, 3, 1) == pytest.approx(2 / 3)
    assert pass_hat_k(2, 3, 2) == pytest.approx(1 / 3)
    assert pass_hat_k(2, 3, 3) == 0
    assert pass_hat_k(4, 4, 4) == 1
    with pytest.raises(ValueError):
        pass_hat_k(1, 2, 3)


names = st.sampled_from(["a", "b", "c"])
calls = st.lists(st.tuples(names, st.integers(0, 2)), max_size=6)


@given(calls, calls)
def test_f1_is_the_harmonic_mean_of_precision_and_recall_and_ignores_order(made, expected):
    made_calls = tuple(call(n, 10 * i, q=q) for i, (n, q) in enumerate(made))
    reference = task([{"name": n, "arguments": {"q": q}} for n, q in expected])
    result = score_session(session(made_calls), reference)
    shuffled = score_session(session(tuple(reversed(made_calls))), reference)
    assert result.tool_call_f1 == pytest.approx(shuffled.tool_call_f1)
    if result.tool_call_precision is not None and result.tool_call_recall is not None:
        p, r = result.tool_call_precision, result.tool_call_recall
        assert result.tool_call_f1 == pytest.approx(0 if p + r == 0 else 2 * p * r / (p + r))
    assert result.match_unordered == (result.match_subset and result.match_superset)
    assert not result.match_strict or result.match_unordered


@given(st.integers(1, 8).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_pass_hat_k_never_grows_with_k(outcome):
    c, n = outcome
    values = [pass_hat_k(c, n, k) for k in range(1, n + 1)]
    assert all(a >= b - 1e-12 for a, b in zip(values, values[1:]))
    assert values[0] == pytest.approx(c / n) and math.isclose(values[-1], float(c == n))


def test_canonical_json_is_one_text_per_value():
    assert canonical_json({"b": 1, "a": [1, "é"]}) == canonical_json(json.loads('{"a": [1, "é"], "b": 1}'))
