"""`rag-eval diff` and `rag-eval baseline` as a reviewer uses them on a pull request: two real
evaluations of different retrieval settings on all 500 shared questions, a re-run of the same
configuration, a changed ground truth and a run with another judge."""

import json
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd
import pytest

from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline_tests.support.cli import in_process
from stand_ins.anthropic_api import FakeAnthropic

pytestmark = pytest.mark.slow  # whole runs on 500 questions (the module shares them)

WIDE, NARROW = "baseline@bm25-k6", "baseline@bm25-k2"  # the same answerer, fewer passages read


def _judge_scores_of(home: Path, model: str, run_id: str) -> pd.DataFrame:
    folder = home / "storage" / "artifacts" / "history" / "judge_scores" / model
    return pd.read_parquet(next(f for f in folder.iterdir() if f.name.startswith(run_id)))


@pytest.fixture(scope="module")
def two_settings(shared_hotpotqa, tmp_path_factory):
    """One home: both retrieval settings on every shared question, ``main`` pinned to the wide
    one, then the wide one evaluated again (a pull request that changed nothing)."""
    from rag_eval_pipeline import cli

    home = tmp_path_factory.mktemp("diff") / "home"
    base = ["--dagster-home", str(home)]
    run = [*base, "run", "--dataset", str(shared_hotpotqa), "--sample", "0"]
    assert cli.main([*run, "--models", f"{WIDE},{NARROW}"]) == 0
    assert cli.main([*base, "baseline", "set", "main", WIDE]) == 0
    assert cli.main([*run, "--models", WIDE]) == 0
    return home


def test_the_json_counts_are_those_of_the_stored_scores(two_settings, capsys):
    code, out, err = in_process(
        capsys, "--dagster-home", str(two_settings), "diff", WIDE, NARROW, "--format", "json"
    )
    assert code == 0, err
    diff = json.loads(out)
    before = _judge_scores_of(two_settings, WIDE, diff["before"]["run_id"])
    after = _judge_scores_of(two_settings, NARROW, diff["after"]["run_id"])
    assert len(before) == len(after) == 500
    paired = before.merge(after, on=["qid", "judge_id"], suffixes=("_b", "_a"))
    lower_is_better = {"error_rate", "false_answer_rate", "over_abstention_rate"}
    # what the answers took and cost, a family of its own beside the scores': never a regression
    budgets = {m["metric"]: m for m in diff["metrics"] if m["judge_id"] == "answer_model"}
    assert set(budgets) == {"latency_s", "cost_usd"} and not any(m["worse"] for m in budgets.values())
    assert budgets["cost_usd"]["n"] == budgets["cost_usd"]["unchanged"] == 500  # offline: $0 both sides
    scores = [m for m in diff["metrics"] if m["judge_id"] != "answer_model"]
    shown = {(m["judge_id"], m["metric"]): m for m in scores}
    assert {"correctness", "f1", "context_recall", "context_precision", "error_rate"} <= {m for _, m in shown}
    for (judge_id, metric), row in shown.items():
        pairs = paired[paired["judge_id"] == judge_id][[f"{metric}_b", f"{metric}_a"]].dropna()
        change = pairs[f"{metric}_a"].to_numpy() - pairs[f"{metric}_b"].to_numpy()
        change[np.abs(change) < 1e-9] = 0
        worse = change > 0 if metric in lower_is_better else change < 0
        better = change < 0 if metric in lower_is_better else change > 0
        assert row["n"] == len(pairs)
        assert (row["regressed"], row["improved"], row["unchanged"]) == (
            worse.sum(),
            better.sum(),
            (change == 0).sum(),
        )
        assert row["mean_change"] == pytest.approx(change.mean())
    # Holm over the metrics shown, recomputed by hand
    p = np.array([m["p_value"] for m in scores])
    order = np.argsort(p, kind="stable")
    holm = np.minimum(1, np.maximum.accumulate(p[order] * (len(p) - np.arange(len(p)))))
    assert [m["p_adjusted"] for m in scores] == pytest.approx(holm[np.argsort(order)].tolist())
    # fewer passages read: recall is worse, and each regressed case says the retrieval changed
    recall = shown[("reference", "context_recall")]
    assert recall["regressed"] > 50 and recall["improved"] == 0 and recall["worse"]
    assert diff["regression"] and diff["regressions"]
    assert all("top_k 6 → 2" in case["lineage_change"] for case in diff["regressions"])
    cases = pd.DataFrame(diff["cases"])
    recall_cases = cases[(cases["metric"] == "context_recall") & (cases["judge_id"] == "reference")]
    assert (recall_cases["after"] < recall_cases["before"]).sum() == recall["regressed"]
    by_tag = {(g["group"], g["metric"]) for g in diff["groups"]}
    assert ("type:bridge", "context_recall") in by_tag and ("type:comparison", "context_recall") in by_tag


def test_the_pull_request_comment_puts_regressions_first_under_its_limit(two_settings, capsys):
    code, out, _ = in_process(
        capsys, "--dagster-home", str(two_settings), "diff", WIDE, NARROW, "--format", "markdown"
    )
    assert code == 0
    assert len(out) < 60_000
    assert (
        out.index("### Significantly worse")
        < out.index("### Regressed cases")
        < out.index("### Every metric")
    )
    assert "context\\_recall" in out.split("### Regressed cases")[0]
    regressed = json.loads(
        in_process(capsys, "--dagster-home", str(two_settings), "diff", WIDE, NARROW, "--format", "json")[1]
    )["regressions"]
    shown = out.split("### Regressed cases")[1].split("### Every metric")[0]
    rows = [line for line in shown.splitlines() if line.startswith("| 5")]
    assert 0 < len(rows) <= len(regressed)
    if len(rows) < len(regressed):
        assert f"and {len(regressed) - len(rows)} more regressed cases" in shown
    assert rows[0].startswith(f"| {regressed[0]['qid']} ")  # worst first


def test_fail_on_regression_blocks_the_worse_branch_and_passes_an_unchanged_one(two_settings, capsys):
    home = ["--dagster-home", str(two_settings)]
    code, out, err = in_process(capsys, *home, "diff", "main", NARROW, "--fail-on-regression")
    assert code == 1, err
    assert "REGRESSION: significantly worse: reference/context_recall" in out
    code, out, err = in_process(capsys, *home, "diff", "main", "current", "--fail-on-regression")
    assert code == 0, err
    assert "no metric is significantly worse" in out
    assert "cases: 500 compared; none added, removed or changed" in out
    # a large enough --min-effect lets a small worsening through
    code, _, _ = in_process(
        capsys, *home, "diff", "main", NARROW, "--fail-on-regression", "--min-effect", "0.9"
    )
    assert code == 0


def test_the_report_and_the_asset_show_the_diff_against_main(two_settings):
    instance = open_instance(str(two_settings))
    record = instance.fetch_materializations(dg.AssetKey("baseline_diffs"), limit=1).records[0]
    metadata = record.asset_materialization.metadata
    assert metadata["regressions"].value == "none"  # the re-run of main's configuration
    assert "no metric is significantly worse" in metadata["main: verdict"].value
    table: pd.DataFrame = load_asset(instance, "baseline_diffs")
    assert set(table["baseline"]) == {"main"} and set(table["model"]) == {WIDE}
    report = (two_settings / "storage" / "artifacts" / "eval_report.html").read_text()
    section = report.split('<section id="baseline-diffs">')[1].split("</section>")[0]
    assert "<h3>main</h3>" in section and "no metric significantly worse" in section


def test_a_damaged_baselines_file_is_named_and_the_report_still_refreshes(two_settings):
    from rag_eval_pipeline.definitions import build_definitions

    pinned = two_settings / "storage" / "artifacts" / "baselines.json"
    kept = pinned.read_text()
    pinned.write_text("{not json")
    try:
        instance = open_instance(str(two_settings))
        refreshed = (
            build_definitions()
            .resolve_job_def("comparison_job")
            .execute_in_process(
                instance=instance, asset_selection=[dg.AssetKey("baseline_diffs"), dg.AssetKey("eval_report")]
            )
        )
        assert refreshed.success
        record = instance.fetch_materializations(dg.AssetKey("baseline_diffs"), limit=1).records[0]
        assert "baselines.json is unreadable" in record.asset_materialization.metadata["unreadable"].value
    finally:
        pinned.write_text(kept)


def test_a_changed_truth_is_reported_as_changed_and_a_baseline_on_another_list_is_refused(
    shared_hotpotqa, tmp_path, capsys
):
    rows = [json.loads(line) for line in shared_hotpotqa.read_text().splitlines()[:30]]
    original, edited = tmp_path / "original.jsonl", tmp_path / "edited.jsonl"
    original.write_text("".join(json.dumps(r) + "\n" for r in rows))
    home = ["--dagster-home", str(tmp_path / "home")]
    run = [*home, "run", "--sample", "0", "--models", "extractive-baseline"]
    assert in_process(capsys, *run, "--dataset", str(original))[0] == 0
    assert in_process(capsys, *home, "baseline", "set", "before", "extractive-baseline")[0] == 0
    first = json.loads(in_process(capsys, *home, "diff", "before", "current", "--format", "json")[1])
    scored = pd.DataFrame(first["cases"])
    scored_f1 = scored[(scored["metric"] == "f1") & (scored["before"] > 0)]["qid"].tolist()
    assert scored_f1, "the extractive answers overlap some truths"
    changed = set(scored_f1[:3])
    for row in rows:
        if row["id"] in changed:
            row["answer"] = "an answer no passage holds"
    edited.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert in_process(capsys, *run, "--dataset", str(edited))[0] == 0

    code, _, err = in_process(capsys, *home, "diff", "before", "current")
    assert code == 2 and err.startswith("error: baseline before was scored on judgement list")
    assert len(err.strip().splitlines()) == 1
    code, out, err = in_process(
        capsys, *home, "diff", first["before"]["run_id"][:8], "extractive-baseline", "--format", "json",
        "--fail-on-regression",
    )  # fmt: skip
    assert code == 0, err  # the f1 that fell with its truth is no regression
    diff = json.loads(out)
    truth_changes = {c["qid"] for c in diff["case_changes"] if c["change"] == "truth changed"}
    assert truth_changes == changed
    assert not changed & {c["qid"] for c in diff["cases"]}
    assert not changed & {c["qid"] for c in diff["regressions"]}


def test_a_baseline_judged_by_another_judge_is_refused(shared_hotpotqa, tmp_path, capsys, monkeypatch):
    home = ["--dagster-home", str(tmp_path / "home")]
    run = [*home, "run", "--dataset", str(shared_hotpotqa), "--sample", "8", "--models", "oracle"]
    assert in_process(capsys, *run)[0] == 0
    assert in_process(capsys, *home, "baseline", "set", "main", "oracle")[0] == 0
    code, _, err = in_process(capsys, *home, "baseline", "set", "oracle", "oracle")
    assert code == 2 and "is an answer model here" in err
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        assert in_process(capsys, *run, "--judges", "reference,claude-sonnet-4-6")[0] == 0
    code, out, err = in_process(capsys, *home, "diff", "main", "current")
    assert code == 2 and out == ""
    assert err.startswith("error: baseline main was judged by reference, current oracle by ")
    assert "claude-sonnet-4-6" in err and len(err.strip().splitlines()) == 1
    code, _, err = in_process(capsys, *home, "diff", "main", "nosuchthing")
    assert code == 2 and err.startswith("error: 'nosuchthing' is no baseline, answer model or run")
