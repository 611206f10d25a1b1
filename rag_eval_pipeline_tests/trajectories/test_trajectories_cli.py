"""`rag-eval trajectories` on the scripted support agent's traces: every session's figures and
pass^k equal values worked out by hand from the definitions (docs/judges-and-statistics.md),
the GenAI conventions give the same scores as OpenInference's, children without a session id
are reattached through their root and counted, and input that cannot be read is one line."""

import json
import math
from pathlib import Path

import dagster as dg
import pytest

from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline_tests.support.cli import in_process, rag_eval
from rag_eval_pipeline_tests.trajectories.support_agent import VERSION, write_files

# (tool_call_f1, strict, unordered, subset, superset) per session, worked out by hand:
# made calls m, expected e, matched p: F1 = 2p / (m + e)
GOLDEN = {
    "refund-1": (1, True, True, True, True),
    "refund-2": (1, True, True, True, True),
    "refund-3": (1, True, True, True, True),
    "stock-1": (1, True, True, True, True),
    "stock-2": (4 / 5, False, False, False, True),  # an extra identical call: m 3, e 2, p 2
    "stock-3": (2 / 4, False, False, False, False),  # a wrong argument: m 2, e 2, p 1
    "email-1": (1, True, True, True, True),  # send_email's subset rule: extra keys allowed
    "email-2": (2 / 3, False, False, True, False),  # the mail is missing: m 1, e 2, p 1
    "email-3": (1, True, True, True, True),
    "policy-1": (1, True, True, True, True),  # search_kb's arguments are ignored
    "policy-2": (1, False, True, True, True),  # reordered: the same multiset
    "policy-3": (4 / 6, False, False, False, False),  # a wrong tool: m 3, e 3, p 2
    "parallel-1": (1, True, True, True, True),
    "parallel-2": (1, True, True, True, True),  # the two checks ran in parallel: any order
    "parallel-3": (1, False, True, True, True),  # one after the other, in the wrong order
    "account-1": (1, True, True, True, True),
    "account-2": (4 / 5, False, False, False, True),  # a failed call retried: m 3, e 2, p 2
    "account-3": (4 / 5, False, False, False, True),  # a forbidden extra call
}
# (steps, repeated_calls, tool_error_rate, forbidden_calls, matched): calls made, identical calls
# made again, failed calls over calls, calls to a forbidden tool, and p of the F1 above
EFFICIENCY = {
    **{f"refund-{t}": (2, 0, 0, 0, 2) for t in (1, 2, 3)},
    "stock-1": (2, 0, 0, 0, 2),
    "stock-2": (3, 1, 0, 0, 2),
    "stock-3": (2, 0, 0, 0, 1),
    "email-1": (2, 0, 0, 0, 2),
    "email-2": (1, 0, 0, 0, 1),
    "email-3": (2, 0, 0, 0, 2),
    "policy-1": (3, 0, 0, 0, 3),
    "policy-2": (3, 0, 0, 0, 3),
    "policy-3": (3, 0, 0, 0, 2),
    **{f"parallel-{t}": (3, 0, 0, 0, 3) for t in (1, 2, 3)},
    "account-1": (2, 0, 0, 0, 2),
    "account-2": (3, 1, 1 / 3, 0, 2),
    "account-3": (3, 0, 0, 1, 2),
}
EXPECTED_CALLS = {"refund": 2, "stock": 2, "email": 2, "policy": 3, "parallel": 3, "account": 2}
# successes c of n = 3 trials per task (strict; the policy task counts unordered matches):
# refund 3, stock 1, email 2, policy 2, parallel 2, account 1
SUCCESSES = [3, 1, 2, 2, 2, 1]
PASS_HAT_K = {
    str(k): sum(math.comb(c, k) for c in SUCCESSES) / (len(SUCCESSES) * math.comb(3, k)) for k in (1, 2, 3)
}
assert pytest.approx({"1": 11 / 18, "2": 6 / 18, "3": 1 / 6}) == PASS_HAT_K
FIGURES = ("tool_call_f1", "match_strict", "match_unordered", "match_subset", "match_superset")


def _run(capsys, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    return in_process(capsys, "--dagster-home", str(tmp_path / "home"), "trajectories", *args)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The same 18 runs in each convention, each evaluated by the installed command."""
    results = {}
    for convention in ("openinference", "genai"):
        folder = tmp_path_factory.mktemp(convention)
        traces, reference = write_files(folder, convention)
        done = rag_eval(
            "--dagster-home", str(folder / "home"), "trajectories", "--traces", str(traces),
            "--reference", str(reference), "--format", "json", cwd=folder,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        results[convention] = (json.loads(done.stdout), folder)
    return results


def test_every_session_and_pass_hat_k_equal_the_hand_computed_values(both):
    document, _ = both["openinference"]
    sessions = {s["session_id"]: s for s in document["sessions"]}
    assert set(sessions) == set(GOLDEN)
    for session_id, expected in GOLDEN.items():
        got = tuple(sessions[session_id][f] for f in FIGURES)
        assert got[0] == pytest.approx(expected[0]) and got[1:] == expected[1:], session_id
    assert document["pass_hat_k"] == pytest.approx(PASS_HAT_K)
    low, high = document["pass_hat_k_intervals"]["1"]
    assert low <= PASS_HAT_K["1"] <= high
    for session_id, (steps, repeated, errors, forbidden, matched) in EFFICIENCY.items():
        got = sessions[session_id]
        expected_calls = EXPECTED_CALLS[got["task_id"]]
        assert (got["steps"], got["repeated_calls"], got["forbidden_calls"]) == (steps, repeated, forbidden)
        assert got["tool_error_rate"] == pytest.approx(errors), session_id
        assert got["tool_call_precision"] == pytest.approx(matched / steps), session_id
        assert got["tool_call_recall"] == pytest.approx(matched / expected_calls), session_id
        assert got["tool_call_f1"] == pytest.approx(2 * matched / (steps + expected_calls)), session_id


def test_the_genai_conventions_give_identical_scores_and_children_are_reattached(both):
    openinference, _ = both["openinference"]
    genai, _ = both["genai"]
    drop = ("span_ids",)
    assert [{k: v for k, v in s.items() if k not in drop} for s in genai["sessions"]] == [
        {k: v for k, v in s.items() if k not in drop} for s in openinference["sessions"]
    ]
    assert genai["pass_hat_k"] == openinference["pass_hat_k"]
    for document in (openinference, genai):
        report = document["reconstruction"]
        # 36 turns: a root span with the session id each; the LLM and tool spans under them have none
        assert report["turns"] == 36 and report["own_session_key"] == 36
        assert report["reattached_through_root"] == report["spans"] - 36 == 80
        assert report["session_key_share"] == 1 and report["orphan_spans"] == 0
        assert report["tool_spans_with_arguments"] == report["tool_spans"] == 44
        (file,) = report["files"].values()  # the same counts, file by file
        assert (file["spans"], file["reattached_through_root"], file["orphan_spans"]) == (116, 80, 0)


def test_each_version_is_a_partition_with_lineage_from_a_bad_session_to_its_spans(both):
    _, folder = both["openinference"]
    instance = open_instance(str(folder / "home"))
    assert instance.get_dynamic_partitions("agent_version") == [VERSION]
    record = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("trajectory_scores"), asset_partitions=[VERSION]), limit=1
    ).records[0]
    metadata = record.asset_materialization.metadata
    worst = metadata["worst_sessions"].value.records[0].data
    assert worst["session"] == "stock-3" and worst["f1"] == 0.5  # the lowest F1
    assert worst["first difference"] == 'call 2 sku: "SKU-3" (expected "SKU-2")'  # the wrong SKU, seen
    entry = metadata["worst session 1: stock-3"].value  # its turns' root spans: the way down to its spans
    assert len(entry.split("root spans of its turns: ")[1].split()) == 2
    spans = dg.AssetKey("trajectory_spans")
    stored = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=spans, asset_partitions=[VERSION]), limit=1
    ).records[0]
    assert stored.asset_materialization.metadata["spans"].value == 116
    checks = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        [dg.AssetCheckKey(dg.AssetKey("agent_sessions"), "reconstruction")]
    )
    assert all(c.status.value == "SUCCEEDED" for c in checks.values()) and checks


def _rewrite(path: Path, change) -> None:
    document = json.loads(path.read_text())
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    document["resourceSpans"][0]["scopeSpans"][0]["spans"] = change(spans)
    path.write_text(json.dumps(document))


def test_orphans_below_the_required_share_fail_the_blocking_check(tmp_path, capsys):
    traces, reference = write_files(tmp_path)
    # the root spans of four sessions' second turns are lost: their children are orphans
    lost = {"refund-1", "refund-2", "policy-1", "account-1"}

    def without_roots(spans):
        values = lambda s: {a["key"]: a["value"].get("stringValue") for a in s["attributes"]}  # noqa: E731
        return [
            s for s in spans
            if not ("parentSpanId" not in s and values(s).get("session.id") in lost
                    and values(s).get("input.value") not in (None,) and "?" not in values(s)["input.value"])
        ]  # fmt: skip

    _rewrite(traces, without_roots)
    code, out, err = _run(capsys, tmp_path, "--traces", str(traces), "--reference", str(reference))
    assert code == 1, (out, err)
    assert "orphans" in out and "spans in a turn (not orphans):" in err and "< 95%" in err
    assert "Traceback" not in err


def test_a_threshold_fails_the_command_and_names_metric_and_value(tmp_path, capsys):
    traces, reference = write_files(tmp_path)
    args = ["--traces", str(traces), "--reference", str(reference)]
    code, out, err = _run(capsys, tmp_path, *args, "--min", "match_strict=0.9", "--min", "pass^1=0.5")
    assert code == 1 and "match_strict (trajectory) mean 0.556 < threshold 0.9" in err
    # pass^k is a mean over tasks: 6 are too few to conclude on (statistics.min_cases, 10)
    assert "pass^1 (trajectory): too few cases to conclude: n = 6 < 10" in err
    code, out, err = _run(capsys, tmp_path, *args, "--min", "tool_call_f1=0.8")
    assert code == 0, err
    assert "| refund-1 | refund |" in out and "| trajectory | pass^3 | 0.167 |" in out


def test_a_diff_of_two_agent_versions_pairs_their_trials(tmp_path, capsys):
    before, reference = write_files(tmp_path / "v1", version="agent-1.0", prefix="a-", perfect=True)
    after, reference_after = write_files(tmp_path / "v2", version="agent-2.0", prefix="b-", seed=8)
    both_tasks = [json.loads(line) for line in reference.read_text().splitlines()]
    for task, other in zip(both_tasks, (json.loads(x) for x in reference_after.read_text().splitlines())):
        task["session_ids"] += other["session_ids"]
    merged = tmp_path / "reference.jsonl"
    merged.write_text("".join(json.dumps(t) + "\n" for t in both_tasks))
    code, out, err = _run(
        capsys, tmp_path, "--traces", str(before), str(after), "--reference", str(merged),
        "--diff", "agent-1.0", "agent-2.0", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    document = json.loads(out)
    assert set(document["agent_versions"]) == {"agent-1.0", "agent-2.0"}
    rows = {r["metric"]: r for r in document["diff"]["metrics"]}  # over every trial
    # 8 of the 18 trials lost their strict match, none gained one; paired by task and trial
    assert rows["match_strict"]["n"] == 18
    assert (rows["match_strict"]["regressed"], rows["match_strict"]["improved"]) == (8, 0)


BAD_OTLP = '{"traces": []}'


@pytest.mark.parametrize(
    "case",
    ["not otlp", "bad json line", "unknown session", "arguments not json", "reference line"],
)
def test_bad_input_is_one_error_line_and_nothing_is_run(tmp_path, capsys, case):
    traces, reference = write_files(tmp_path)
    if case == "not otlp":
        traces.write_text(BAD_OTLP)
        said = f"error: {traces}: not an OTLP/JSON trace export"
    elif case == "bad json line":
        traces.write_text(traces.read_text().replace("\n", " ") + "\n{oops\n")
        said = f"error: {traces}, line 2: not JSON"
    elif case == "unknown session":
        lines = reference.read_text().splitlines()
        row = json.loads(lines[2])
        row["session_ids"].append("ghost-9")
        lines[2] = json.dumps(row)
        reference.write_text("\n".join(lines) + "\n")
        said = f"error: {reference}, line 3: session ghost-9 of task email is in no trace"
    elif case == "arguments not json":
        traces.write_text(traces.read_text().replace('"{\\"sku\\": \\"SKU-2\\"}"', '"{sku: SKU-2}"', 1))
        said = f"error: {traces}: span "
    else:
        reference.write_text(reference.read_text() + '{"task_id": "x"}\n')
        said = f"error: {reference}, line 7: session_ids: Field required"
    code, out, err = _run(capsys, tmp_path, "--traces", str(traces), "--reference", str(reference))
    assert code == 2, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(said), err
    if case == "arguments not json":
        assert "(tool check_inventory): arguments are not JSON" in lines[0]
    assert not (tmp_path / "home").exists()  # nothing was run, no instance made


def test_rag_eval_gate_holds_an_agent_versions_trajectory_summary(both, capsys):
    """`rag-eval gate --model trajectories:VERSION` reads the stored summary, as for a model."""
    _, folder = both["openinference"]
    home = ["--dagster-home", str(folder / "home")]
    model = f"trajectories:{VERSION}"
    code, out, err = in_process(capsys, *home, "gate", "--model", model, "--min", "tool_call_f1=0.85")
    assert code == 0, err
    assert "| tool_call_f1 | all | trajectory | 0.902 |" in out and f"{model}: all gates passed" in out
    code, out, err = in_process(
        capsys, *home, "gate", "--model", model, "--min", "match_strict=0.6", "--bound", "lower"
    )
    assert code == 1 and f"{model}: FAILED 1 gate(s)" in out
    code, out, err = in_process(capsys, *home, "gate", "--model", "trajectories:9.9", "--min", "steps=0.5")
    assert code == 2 and "9.9 is not an agent version here" in err
