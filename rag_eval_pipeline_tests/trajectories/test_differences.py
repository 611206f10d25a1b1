"""Where a session's calls part from the reference: aligned by tool name, the differing
arguments named and shown in full, in shapes the agent did not design for (extra, missing and
reordered calls, nested and non-object arguments, other scripts)."""

import json

from rag_eval_pipeline.trajectories.differences import (
    aligned_calls,
    calls_markdown,
    differing_arguments,
    first_difference,
)


def _call(name: str, **arguments) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def test_a_wrong_argument_is_named_with_both_values_and_shown_in_full():
    made = [_call("check_inventory", sku="SKU-1"), _call("check_inventory", sku="SKU-3")]
    expected = [_call("check_inventory", sku="SKU-1"), _call("check_inventory", sku="SKU-2")]
    pairs = aligned_calls(made, expected)
    assert [p.differs for p in pairs] == [False, True] and pairs[1].differing == ("sku",)
    assert first_difference(pairs) == 'call 2 sku: "SKU-3" (expected "SKU-2")'
    lines = calls_markdown(pairs).replace("\\", "").splitlines()  # as rendered: no escapes
    assert lines[1] == (
        '2. check_inventory({**"sku": "SKU-3"**}): **sku differs**, '
        'expected check_inventory({**"sku": "SKU-2"**})'
    )
    assert lines[0] == '1. check_inventory({"sku": "SKU-1"}): as expected'  # the matching call is plain


def test_extra_missing_and_other_tools_are_pairs_with_one_side_absent():
    made = [_call("search", q="lyon"), _call("refund", order="A1", amount=5), _call("email", to="x")]
    expected = [_call("search", q="lyon"), _call("refund", order="A1", amount=5), _call("close", id=1)]
    pairs = aligned_calls(made, expected)
    assert [(p.made and p.made[0], p.expected and p.expected[0]) for p in pairs] == [
        ("search", "search"),
        ("refund", "refund"),
        ("email", "close"),
    ]
    assert first_difference(pairs) == "call 3: email (expected close)"
    assert first_difference(aligned_calls(made[:2], expected)) == "call 3: missing close"
    assert first_difference(aligned_calls(made, made[:1])) == "call 2: extra refund"
    assert first_difference(aligned_calls(made, made)) == "none"
    assert "3. **missing**: expected close" in calls_markdown(aligned_calls(made[:2], expected))


def test_arguments_differ_by_key_nested_values_and_non_objects():
    assert differing_arguments('{"a": 1, "b": {"c": [1, 2]}}', '{"a": 1, "b": {"c": [1, 3]}}') == ("b",)
    assert differing_arguments('{"a": 1}', '{"a": 1, "limit": 5}') == ("limit",)  # one side only
    assert differing_arguments('["x"]', '["y"]') == ("*",) and differing_arguments("[1]", "[1]") == ()
    assert differing_arguments("not json", "not json") == ()
    # other scripts, as written
    pairs = aligned_calls([_call("查询库存", 商品="苹果")], [_call("查询库存", 商品="香蕉")])
    assert first_difference(pairs) == 'call 1 商品: "苹果" (expected "香蕉")'
