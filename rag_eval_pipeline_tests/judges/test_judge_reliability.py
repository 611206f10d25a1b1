"""Judges you can rely on, through the CLI against the tests' Messages API: a stable judge and an
unstable one (a share of its verdicts drawn at random) asked three times a case, and a jury of
the two. Every figure the pipeline stores is recomputed here from the stored re-scores."""

import contextlib
import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd
import pytest
import scipy.stats

from rag_eval_pipeline import cli
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.metrics.reliability import ordinal_alpha
from rag_eval_pipeline.metrics.weighted_jury import held_out
from stand_ins.anthropic_api import ExampleFollower, FakeAnthropic, UnstableJudges, lenient_correctness

pytestmark = pytest.mark.slow  # an evaluated instance of its own, through the CLI (CI runs it)

MODELS = ("extractive-baseline", "oracle")
STABLE, UNSTABLE = "claude-sonnet-4-6", "claude-haiku-4-5"
K, SAMPLE = 3, 16
AXES = ("correctness", "faithfulness", "context_relevance")


@dataclass
class Rescored:
    home: Path
    config: Path
    first_out: str
    first_calls: list[dict]
    rerun_calls: list[dict]

    def asset(self, key: str, partition: str | None = None) -> pd.DataFrame:
        return load_asset(open_instance(str(self.home)), key, partition)

    def metadata(self, key: str, partition: str) -> dict:
        record = (
            open_instance(str(self.home))
            .fetch_materializations(
                dg.AssetRecordsFilter(dg.AssetKey(key), asset_partitions=[partition]), limit=1
            )
            .records[0]
        )
        return record.asset_materialization.metadata

    def cli(self, *args: str) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = cli.main(["--dagster-home", str(self.home), "--config", str(self.config), *args])
        return code, out.getvalue()


@pytest.fixture(scope="module")
def rescored(shared_hotpotqa, tmp_path_factory, monkeypatch_module) -> Rescored:
    folder = tmp_path_factory.mktemp("rescored")
    config = folder / "rag_eval.yaml"
    config.write_text(f"judge_repeats: {K}\n")  # from the file; --jury from the command line
    with FakeAnthropic(UnstableJudges({UNSTABLE: 0.4}, seed=7)) as server:
        monkeypatch_module.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch_module.setenv("ANTHROPIC_BASE_URL", server.url)
        space = Rescored(folder / "home", config, "", [], [])
        run = [
            "run", "--dataset", str(shared_hotpotqa), "--sample", str(SAMPLE), "--models", ",".join(MODELS),
            "--judges", f"reference,{STABLE},{UNSTABLE}", "--jury",
        ]  # fmt: skip
        code, out = space.cli(*run)
        assert code == 0, out
        space.first_out, space.first_calls = out, list(server.requests)
        server.reset_counts()
        code, _ = space.cli(*run)
        assert code == 0
        space.rerun_calls = list(server.requests)
        yield space


def _lower_median(values) -> float:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def _overall(summary: pd.DataFrame, judge: str, metric: str) -> pd.Series:
    rows = summary[
        (summary["judge_id"] == judge) & (summary["metric"] == metric) & (summary["group"] == "all")
    ]
    assert len(rows) == 1, (judge, metric)
    return rows.iloc[0]


def test_each_llm_judge_is_asked_k_times_a_case_and_a_rerun_asks_nothing(rescored):
    scores = rescored.asset("judge_scores", MODELS[0])
    for judge in (STABLE, UNSTABLE):
        rows = scores[scores["judge_id"] == judge]
        assert sorted(rows["judge_repeat"].unique()) == list(range(K))
        assert rows.groupby("qid").size().eq(K).all()
    reference = scores[scores["judge_id"] == "reference"]
    assert (reference["judge_repeat"] == 0).all() and len(reference) == SAMPLE  # no LLM: asked once
    # every re-score is its own call: K judge calls per answer per LLM judge, none on the re-run
    judged = [r for r in rescored.first_calls if r.get("tool_choice")]
    for judge in (STABLE, UNSTABLE):
        assert sum(r["model"] == judge for r in judged) == K * SAMPLE * len(MODELS)
    assert rescored.rerun_calls == []
    assert "asked 3 times a case" in rescored.first_out  # said before the run, with what it costs


def test_flip_rates_are_the_share_of_cases_whose_rescores_differ_with_exact_intervals(rescored):
    for model in MODELS:
        scores = rescored.asset("judge_scores", model)
        summary = rescored.asset("metric_summary", model)
        for judge in (STABLE, UNSTABLE):
            rows = scores[(scores["judge_id"] == judge) & (scores["status"] == "ok")]
            for axis in AXES:
                flips = rows.groupby("qid")[axis].agg(lambda v: v.dropna().nunique() > 1)
                row = _overall(summary, judge, f"{axis}_flip_rate")
                assert row["n"] == len(flips)
                assert row["mean"] == pytest.approx(flips.mean())
                interval = scipy.stats.binomtest(int(flips.sum()), len(flips)).proportion_ci(method="exact")
                assert (row["ci_low"], row["ci_high"]) == pytest.approx((interval.low, interval.high))
                if judge == STABLE:
                    assert row["mean"] == 0.0  # the stable judge never flips
        unstable = [_overall(summary, UNSTABLE, f"{a}_flip_rate")["mean"] for a in AXES]
        assert max(unstable) > 0.2  # the random draws show
        # on the asset page (and plotted across materializations) beside every other mean
        metadata = rescored.metadata("metric_summary", model)
        assert metadata[f"{UNSTABLE}/correctness_flip_rate"].value == round(unstable[0], 4)
        assert "jury/correctness_juror_alpha" in metadata or np.isnan(
            _overall(summary, "jury", "correctness_juror_alpha")["mean"]
        )


def test_a_case_scores_the_median_of_its_rescores(rescored):
    scores = rescored.asset("judge_scores", MODELS[0])
    summary = rescored.asset("metric_summary", MODELS[0])
    rows = scores[(scores["judge_id"] == UNSTABLE) & (scores["status"] == "ok")]
    for axis in AXES:
        medians = rows.groupby("qid")[axis].agg(lambda v: _lower_median(v.dropna()))
        assert _overall(summary, UNSTABLE, axis)["mean"] == pytest.approx(medians.mean())
    metadata = rescored.metadata("judge_scores", MODELS[0])
    assert "median" in metadata["re-scores"].value and f"{UNSTABLE} x{K}" in metadata["re-scores"].value


def test_the_jury_scores_its_jurors_median_with_their_alpha(rescored):
    for model in MODELS:
        scores = rescored.asset("judge_scores", model)
        summary = rescored.asset("metric_summary", model)
        ok = scores[scores["status"] == "ok"]
        per_juror = {
            judge: ok[ok["judge_id"] == judge]
            .groupby("qid")[list(AXES)]
            .agg(lambda v: _lower_median(v.dropna()))
            for judge in (STABLE, UNSTABLE)
        }
        jury = scores[scores["judge_id"] == "jury"].set_index("qid")
        assert len(jury) == SAMPLE and (jury["cost_usd"] == 0).all()  # no call of its own
        for axis in AXES:
            for qid in jury.index:
                votes = [per_juror[j].loc[qid, axis] for j in (STABLE, UNSTABLE)]
                assert jury.loc[qid, axis] == _lower_median(votes)
            units = [[per_juror[j].loc[q, axis] for j in (STABLE, UNSTABLE)] for q in jury.index]
            row = _overall(summary, "jury", f"{axis}_juror_alpha")
            assert row["mean"] == pytest.approx(ordinal_alpha(units), nan_ok=True) and row["n"] == SAMPLE
        assert json.loads(jury["rationales"].iloc[0])["jurors"] == f"{STABLE}, {UNSTABLE}"
    comparison = rescored.asset("model_comparison")
    assert set(comparison["judge_id"]) >= {"jury", STABLE, UNSTABLE}


def test_ordinal_alpha_matches_krippendorffs_worked_example():
    """Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units,
    ordinal alpha 0.815; and the definition's edge cases."""
    nan = float("nan")
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    units = [[v for v in data[:, u] if not np.isnan(v)] for u in range(data.shape[1])]
    assert round(ordinal_alpha(units), 3) == 0.815
    assert ordinal_alpha([[0, 0], [1, 1], [0.5, 0.5]]) == 1.0  # always agreeing
    assert np.isnan(ordinal_alpha([[1, 1], [1, 1]]))  # one value only: agreement cannot be told
    assert ordinal_alpha([[0, 1], [1, 0]]) < 0  # disagreeing more than chance


def test_unstable_cases_are_named_in_worst_cases_and_the_paired_table_weighs_judge_noise(rescored):
    scores = rescored.asset("judge_scores", MODELS[0])
    ok = scores[(scores["judge_id"] == UNSTABLE) & (scores["status"] == "ok")]
    flipped = set(ok.groupby("qid")["correctness"].agg(lambda v: v.nunique() > 1).loc[lambda s: s].index)
    code, out = rescored.cli(
        "worst", "--model", MODELS[0], "--metric", "correctness", "--judge", UNSTABLE, "-n", str(SAMPLE)
    )
    assert code == 0 and "unstable" in out.splitlines()[0]
    marked = {
        line.split("|")[1].strip() for line in out.splitlines()[2:] if f"{UNSTABLE}/correctness" in line
    }
    assert flipped and marked == flipped
    metadata = rescored.metadata("judge_scores", MODELS[0])
    pages = [v.value for k, v in metadata.items() if f"{MODELS[0]} worst case" in k]
    assert any("- unstable: " in page for page in pages)
    # the judge's own noise beside each difference: the spread of the differences its re-scores
    # give one at a time, recomputed here; a difference no larger is said to be within it
    assert "judge_noise" in rescored.first_out
    paired = rescored.asset("paired_comparison")
    row = paired[(paired["judge_id"] == UNSTABLE) & (paired["metric"] == "correctness")].iloc[0]
    sides = [rescored.asset("judge_scores", m) for m in (row["model_a"], row["model_b"])]
    by_rescore = [
        s[(s["judge_id"] == UNSTABLE) & (s["status"] == "ok")].pivot(
            index="qid", columns="judge_repeat", values="correctness"
        )
        for s in sides
    ]
    differences = [(by_rescore[0][r] - by_rescore[1][r]).dropna().mean() for r in range(K)]
    assert row["judge_noise"] == pytest.approx(max(differences) - min(differences))
    assert bool(row["judge_noise_note"]) == (abs(row["difference"]) <= row["judge_noise"])
    reference = paired[(paired["judge_id"] == "reference") & (paired["metric"] == "correctness")].iloc[0]
    assert pd.isna(reference["judge_noise"]) and reference["judge_noise_note"] == ""  # asked once


def test_bad_judging_is_one_error_line(rescored, tmp_path, capsys):
    config = tmp_path / "rag_eval.yaml"
    config.write_text("judge_repeats: 0\n")
    code = cli.main(["--dagster-home", str(tmp_path / "home"), "--config", str(config), "run"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "judge_repeats" in err[0] and "1 to 25" in err[0]
    code = cli.main(
        [
            "--dagster-home",
            str(tmp_path / "home"),
            "run",
            "--judges",
            f"reference,{STABLE}",
            "--jury",
            "--sample",
            "2",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "a jury needs two LLM judges" in err[0]


def test_the_report_shows_how_steady_the_judges_are(rescored):
    report = (rescored.home / "storage" / "artifacts" / "eval_report.html").read_text()
    section = report.split('<section id="judge-stability">')[1].split("</section>")[0]
    summary = rescored.asset("metric_summary", MODELS[0])
    flip = _overall(summary, UNSTABLE, "correctness_flip_rate")
    assert f"{flip['mean']:.3f}" in section and "correctness_juror_alpha" in section
    cases = report.split('<table id="cases">')[1]
    assert "unstable (" in cases  # a flipped case is marked beside its diagnosis


def test_a_weighted_jury_is_fitted_on_half_the_labels_and_measured_on_the_other(
    rescored, tmp_path, shared_hotpotqa
):
    """A reviewer who labels as the stable judge scores: the weights favour it, and on the held-out
    half the weighted jury agrees with people as it does, beside the median jury and each juror."""
    space = Rescored(tmp_path / "home", tmp_path / "rag_eval.yaml", "", [], [])
    shutil.copytree(rescored.home, space.home)
    space.config.write_text(f"judge_repeats: {K}\njury: weighted\nreview:\n  folder: review\n")
    code, out = space.cli(
        "run", "--dataset", str(shared_hotpotqa), "--sample", str(SAMPLE), "--models", ",".join(MODELS),
        "--judges", f"reference,{STABLE},{UNSTABLE}",
    )  # fmt: skip
    assert code == 0, out
    assert "a jury (weighted)" in out
    labels = []
    for model in MODELS:
        assert (
            space.cli("review", "export", "--model", model, "--n", str(SAMPLE), "--name", f"{model}-q")[0]
            == 0
        )
        stable = space.asset("judge_scores", model)
        stable = stable[(stable["judge_id"] == STABLE) & (stable["judge_repeat"] == 0)].set_index("qid")
        for line in (tmp_path / "review" / f"{model}-q.jsonl").read_text().splitlines():
            row = json.loads(line)
            if row["metric"] == "correctness":
                label = float(stable.loc[row["qid"], "correctness"])
                labels.append(
                    {**row, "label": label, "reviewer": "ana", "note": "", "labelled_at": "2026-12-02"}
                )
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in labels))
    assert space.cli("review", "import", str(path))[0] == 0
    agreement = space.asset("judge_agreement")
    correctness = agreement[agreement["metric"] == "correctness"].set_index("judge_id")
    assert {STABLE, UNSTABLE, "jury", "jury:weighted"} <= set(correctness.index)  # side by side
    weighted = correctness.loc["jury:weighted"]
    held = [r for r in labels if held_out(r["answer_model"], r["qid"])]
    assert weighted["n"] == len(held) < len(labels)  # measured on the held-out half only
    assert weighted["kappa"] == pytest.approx(1.0)  # it follows the juror people agree with
    note = weighted["kappa_note"]
    assert f"fitted on {len(labels) - len(held)} other labelled cases" in note
    assert "median jury's kappa" in note
    assert correctness.loc[UNSTABLE, "kappa"] < correctness.loc[STABLE, "kappa"] == pytest.approx(1.0)


def _lenient_labels(space: Rescored, folder: Path) -> list[dict]:
    """Every case of both models labelled on correctness by a lenient reviewer, imported."""
    truth = space.asset("judgement_list").set_index("qid")["answer"]
    labels = []
    for model in MODELS:
        assert (
            space.cli("review", "export", "--model", model, "--n", str(SAMPLE), "--name", f"{model}-q")[0]
            == 0
        )
        answers = space.asset("candidate_answers", model).set_index("qid")["answer"]
        for line in (folder / "review" / f"{model}-q.jsonl").read_text().splitlines():
            row = json.loads(line)
            if row["metric"] == "correctness":
                label = lenient_correctness(str(answers[row["qid"]]), str(truth[row["qid"]]))
                labels.append(
                    {**row, "label": label, "reviewer": "ana", "note": "", "labelled_at": "2026-12-02"}
                )
    path = folder / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in labels))
    assert space.cli("review", "import", str(path))[0] == 0
    return labels


def _labelled_copy(rescored: Rescored, folder: Path) -> Rescored:
    space = Rescored(folder / "home", folder / "rag_eval.yaml", "", [], [])
    shutil.copytree(rescored.home, space.home)
    space.config.write_text(f"judge_repeats: {K}\nreview:\n  folder: review\n")
    _lenient_labels(space, folder)
    return space


@pytest.mark.parametrize("follows", [True, False], ids=["follows-examples", "ignores-examples"])
def test_a_judge_aligned_to_reviewers_is_adopted_only_when_it_agrees_better_held_out(
    rescored, tmp_path, monkeypatch, shared_hotpotqa, follows
):
    space = _labelled_copy(rescored, tmp_path)
    with FakeAnthropic(ExampleFollower(follows)) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        code, out = space.cli("judges", "align", STABLE)
        assert code == 0, out
        table = [
            line.split("|")
            for line in out.splitlines()
            if line.startswith("| current") or line.startswith("| candidate")
        ]
        kappa = {row[1].strip(): float(row[5]) for row in table}
        store = json.loads((space.home / "storage" / "judge_prompts.json").read_text()) if follows else {}
        if follows:
            assert kappa["candidate"] > kappa["current"] and "adopted:" in out
            assert f"judge_prompts: {{{STABLE}: base}}" in out  # how to select the former
            (version,) = store[STABLE]
            assert version["held_out"]["kappa"] == pytest.approx(kappa["candidate"], abs=5e-4)
            assert 0 < len(version["examples"]) <= 6
            # later runs score with it, recorded in the scores' lineage; the former stays selectable
            run = ["run", "--dataset", str(shared_hotpotqa), "--sample", str(SAMPLE), "--models", MODELS[0]]
            assert space.cli(*run, "--judges", f"reference,{STABLE}")[0] == 0
            scores = space.asset("judge_scores", MODELS[0])
            assert set(scores.loc[scores["judge_id"] == STABLE, "prompt_version"]) == {version["version"]}
            space.config.write_text(f"judge_prompts: {{{STABLE}: base}}\n")
            assert space.cli(*run, "--judges", f"reference,{STABLE}")[0] == 0
            scores = space.asset("judge_scores", MODELS[0])
            assert set(scores.loc[scores["judge_id"] == STABLE, "prompt_version"]) == {"strict-v1"}
        else:
            assert kappa["candidate"] <= kappa["current"] and "not adopted" in out
            assert not (space.home / "storage" / "judge_prompts.json").exists()
