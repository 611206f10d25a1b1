"""explain, worst and gate on a fixture run; asset checks that fail when they should."""

from pathlib import Path

import dagster as dg
import pytest

from rag_eval_pipeline import cli
from rag_eval_pipeline.answering.registry import AnswerRegistry
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.defs.partitions import add_models
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.instance.runs import run_evaluation

QID = "5a8c7595554299585d9e36b6"  # the Corliss Archer question, first of the shared file


@pytest.fixture(scope="module")
def home(evaluated):
    """The session's instance evaluated through the CLI (40 questions, three offline models)."""
    return evaluated.home


def _cli(home, capsys, *args):
    code = cli.main(["--dagster-home", str(home), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_explain_shows_the_whole_lineage(home, capsys, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    code, out, _ = _cli(home, capsys, "explain", QID, "--model", "extractive-baseline")
    assert code == 0
    assert "ground truth: Chief of Protocol" in out
    assert "1. [GOLD] Kiss and Tell (1945 film)" in out
    assert "not retrieved: Shirley Temple" in out
    assert "prompt extractive-v1" in out and "diagnosis retrieval_miss" in out
    assert "index embedded version" in out
    for step in ["hotpotqa_raw", "kb_index", "candidate_answers", "judge_scores"]:
        assert f"  {step}: run " in out
    code, _, err = _cli(home, capsys, "explain", "no-such-question", "--model", "oracle")
    assert code == 2 and "no-such-question" in err


def test_worst_lists_lowest_scores_first(home, capsys, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    code, out, _ = _cli(home, capsys, "worst", "--model", "extractive-baseline", "--metric", "f1", "-n", "3")
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith("| 5")]
    assert len(rows) == 3
    scores = [float(r.split("|")[3]) for r in rows]
    assert scores == sorted(scores)
    code, _, err = _cli(home, capsys, "worst", "--model", "oracle", "--metric", "nope")
    assert code == 2 and "no metric 'nope'" in err


def test_gate_exit_codes(home, capsys, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    assert _cli(home, capsys, "gate", "--model", "oracle", "--min", "correctness=0.9")[0] == 0
    code, out, _ = _cli(home, capsys, "gate", "--model", "null", "--min", "correctness=0.6")
    assert code == 1 and "FAIL" in out and "FAILED 1 gate(s)" in out
    code, out, _ = _cli(home, capsys, "gate", "--model", "oracle", "--min", "faithfulness=0.7")
    assert code == 1 and "not measured" in out
    assert _cli(home, capsys, "gate", "--model", "unregistered", "--min", "f1=0.1")[0] == 2
    # 40 cases pass the default minimum of 10, not a required 50: no verdict on too few cases
    code, out, _ = _cli(
        home, capsys, "gate", "--model", "oracle", "--min", "correctness=0.9", "--min-n", "50"
    )
    assert code == 1 and "too few cases to conclude: n = 40 < 50" in out


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_blocking_quality_gate_stops_the_summary(shared_hotpotqa, tmp_path):
    defs = build_definitions(settings=Settings(thresholds={"correctness": 0.5}))
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        run_evaluation(
            defs, instance, ["oracle"], dataset=str(shared_hotpotqa), sample=10, echo=lambda _: None
        )
        add_models(instance, ["null"], AnswerRegistry().resolve)
        result = defs.resolve_job_def("evaluation_job").execute_in_process(
            instance=instance, partition_key="null", raise_on_error=False
        )
        assert not result.success
        check = instance.event_log_storage.get_latest_asset_check_execution_by_key(
            [dg.AssetCheckKey(dg.AssetKey("judge_scores"), "quality_gates")]
        )
        evaluation = next(iter(check.values())).event.dagster_event.event_specific_data
        assert evaluation.passed is False
        summaries = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("metric_summary"), asset_partitions=["null"]), limit=1
        ).records
        assert summaries == []  # blocked: no summary for a model below the gate


def test_validators_fail_when_they_should():
    import pandas as pd

    from rag_eval_pipeline.metrics.scales import THREE_POINT, UNIT
    from rag_eval_pipeline.metrics.validation import (
        judge_error_share_problems,
        score_range_problems,
        scoring_completeness_problems,
    )

    scores = pd.DataFrame(
        {
            "qid": ["a", "b", "c"],
            "judge_id": ["j"] * 3,
            "judge_kind": ["strict"] * 3,
            "status": ["ok", "judge_error", "ok"],
            "correctness": [1.0, None, 0.7],
        }
    )
    assert score_range_problems(scores, {"j": {"correctness": THREE_POINT}}) == [
        "correctness: 1 values not in {0, 0.5, 1}: case c (j) 0.7"  # the case and value named
    ]
    assert score_range_problems(scores, {"j": {"correctness": UNIT}}) == []  # a judge whose scores are shares
    assert score_range_problems(scores, {}) == []
    assert judge_error_share_problems(scores, 0.2) == ["j: 33.3% judge errors (allowed 20.0%)"]
    assert judge_error_share_problems(scores, 0.5) == []
    answers = pd.DataFrame({"qid": ["a", "b", "c", "d"]})
    assert scoring_completeness_problems(scores, answers) == ["j: 3 score rows for 4 cases"]
    rescored = pd.concat([scores.assign(judge_repeat=0), scores.assign(judge_repeat=1)])
    assert scoring_completeness_problems(rescored, answers) == ["j: 6 score rows for 4 cases x 2 re-scores"]
    assert scoring_completeness_problems(rescored, answers[:3]) == []


def test_explain_shows_a_case_as_an_earlier_run_scored_it(home, capsys, evaluated):
    """The session's instance was evaluated twice: the first run's files are still kept."""
    records = evaluated.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("judge_scores"), asset_partitions=["oracle"]), limit=2
    ).records
    latest_run, earlier_run = (r.run_id for r in records)
    code, out, _ = _cli(home, capsys, "explain", QID, "--model", "oracle", "--run", earlier_run)
    assert (
        code == 0 and f"  judge_scores: run {earlier_run}" in out and "ground truth: Chief of Protocol" in out
    )
    code, out, _ = _cli(home, capsys, "explain", QID, "--model", "oracle")
    assert f"  judge_scores: run {latest_run}" in out
    code, _, err = _cli(home, capsys, "explain", QID, "--model", "oracle", "--run", "0" * 36)
    assert (
        code == 2 and err.startswith("error: no judge_scores of oracle from run 000") and earlier_run in err
    )


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_a_failed_gate_leaves_the_reports_as_they_were(shared_hotpotqa, tmp_path):
    """null passes, then is judged again with one more metric under a gate it fails: that run's
    judge_scores are stored (and kept), but no summary follows, so the comparison, judge
    validation and report built afterwards still read what null's last accepted summary saw."""
    from rag_eval_pipeline.config import PythonMetricSettings

    defs = build_definitions(settings=Settings())
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        run_evaluation(
            defs, instance, ["oracle", "null"], dataset=str(shared_hotpotqa), sample=10, echo=lambda _: None
        )
        paired_before = load_asset(instance, "paired_comparison")
        gated = build_definitions(
            settings=Settings(
                thresholds={"correctness": 0.5},
                custom_metrics=[
                    PythonMetricSettings(
                        name="short_answer", callable="rag_eval_pipeline_tests.custom_metrics:answer_is_short"
                    )
                ],
            )
        )
        failed = gated.resolve_job_def("evaluation_job").execute_in_process(
            instance=instance, partition_key="null", raise_on_error=False
        )
        assert not failed.success
        stored = load_asset(instance, "judge_scores", "null")
        assert "short_answer" in set(stored["judge_id"])  # the failed run's scores are stored

        gated.resolve_job_def("comparison_job").execute_in_process(instance=instance)
        comparison = load_asset(instance, "model_comparison").set_index("answer_model")
        paired_after = load_asset(instance, "paired_comparison")
        validation = load_asset(instance, "judge_validation")
        report = (Path(instance.storage_directory()) / "artifacts" / "eval_report.html").read_text()
    # null keeps its last good values, marked: the failed run is named in the note
    assert bool(comparison.loc["null", "stale"]) and not bool(comparison.loc["oracle", "stale"])
    assert comparison.loc["null", "note"].startswith(f"evaluation run {failed.run_id[:8]} failed")
    assert "short_answer" not in set(paired_after["judge_id"])
    assert paired_after.drop(columns=["p_value"]).equals(paired_before.drop(columns=["p_value"]))
    assert "short_answer" not in set(validation.get("judge_id", []))
    assert "short_answer" not in report  # the failing run's metric never reached the report


def test_plan_says_how_many_cases_a_comparison_needs(home, capsys):
    """`rag-eval plan`: from a stated discordance, and from two stored models' per-case
    differences; more models compared at once (Holm) need more cases; two models that never
    differ give no basis and say so in one line."""
    import re

    from rag_eval_pipeline.metrics.statistics import cases_needed, exact_power

    def needed(*args):
        code, out, err = _cli(home, capsys, "plan", "--difference", "0.1", *args)
        assert code == 0, err
        return [int(n) for n in re.findall(r": (\d+) (?:paired )?cases", out)], out

    rare, _ = needed("--discordance", "0.2")
    often, _ = needed("--discordance", "0.6", "--models-compared", "3")
    assert rare[0] < often[0] < often[1]  # more disagreement, more noise; Holm asks for more
    stored, out = needed("--model", "oracle", "--model", "extractive-baseline")
    assert "oracle vs extractive-baseline on correctness (reference), 40 paired cases stored" in out
    # they differ on every case: as noisy as a stated discordance of 1
    assert stored == needed("--discordance", "1")[0]
    code, _, err = _cli(home, capsys, "plan", "--difference", "0.1", "--model", "null", "--model", "null")
    assert code == 2 and err.startswith("error: null and null score alike on all 40 stored cases")
    code, _, err = _cli(home, capsys, "plan", "--difference", "0.3", "--discordance", "0.05")
    assert (
        code == 2
        and len(err.splitlines()) == 1
        and "needs the models to differ on at least that share" in err
    )
    # the planned size reaches the stated power by the test's exact power, and the curve shows it
    planned, out = needed("--discordance", "0.4")
    assert planned == [cases_needed(0.1, 0.4)] and f"{planned[0]:>6} cases -> power 0.80" in out
    assert exact_power(planned[0], 0.1, 0.4) >= 0.8 > exact_power(312, 0.1, 0.4)  # the old 312
