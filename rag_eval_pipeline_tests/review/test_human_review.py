"""Human review through the entry points people use: `rag-eval review export`, the labelling
page in a real browser, `rag-eval review import` (a file, or a real Phoenix's HUMAN
annotations), the sensors, and the numbers it produces, each checked against values computed
here independently."""

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd
import pytest

from rag_eval_pipeline.data.documents import file_digest
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.metrics.schema import case_set_id
from rag_eval_pipeline_tests.metrics.test_statistics import corrected_by_definition
from rag_eval_pipeline_tests.support import ARTIFACTS
from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.phoenix import phoenix_root_spans
from stand_ins.anthropic_api import FakeAnthropic

# evaluated instances of their own, labelled and imported, through the CLI and the sensors: over
# 10 s a test, so behind `slow` (CI runs them); the pure sampling and agreement code is tested
# in test_sampling.py on the fast path
pytestmark = pytest.mark.slow

MODELS = ("extractive-baseline", "oracle")
LLM_JUDGE = "claude-sonnet-4-6"
SAMPLE = 16


@dataclass
class Workspace:
    folder: Path
    home: Path
    config: Path

    @property
    def args(self) -> list[str]:
        return ["--dagster-home", str(self.home), "--config", str(self.config)]

    @property
    def review(self) -> Path:
        return self.folder / "review"

    def defs(self):
        from rag_eval_pipeline.config import load_settings

        return build_definitions(load_settings(self.config))

    def asset(self, key: str, partition: str | None = None):
        return load_asset(open_instance(str(self.home)), key, partition)


def _workspace(folder: Path) -> Workspace:
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "rag_eval.yaml"
    config.write_text("review:\n  folder: review\n  min_kappa: 0.5\n  min_rate: 0.8\n")
    return Workspace(folder, folder / "home", config)


@pytest.fixture(scope="module")
def claude(monkeypatch_module):
    with FakeAnthropic() as server:
        monkeypatch_module.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch_module.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server


@pytest.fixture(scope="module")
def evaluated_for_review(shared_hotpotqa, tmp_path_factory, claude) -> Workspace:
    """Two models judged by the reference and by an LLM judge on the tests' Messages API."""
    space = _workspace(tmp_path_factory.mktemp("review"))
    code = _cli(
        space,
        "run",
        "--dataset",
        str(shared_hotpotqa),
        "--sample",
        str(SAMPLE),
        "--models",
        ",".join(MODELS),
        "--judges",
        f"reference,{LLM_JUDGE}",
    )
    assert code == 0
    return space


def _cli(space: Workspace, *args: str) -> int:
    from rag_eval_pipeline import cli

    return cli.main([*space.args, *args])


def _copy_space(source: Workspace, target: Path) -> Workspace:
    """An evaluated instance of a test's own (tests that import labels must not see each other's),
    with the same configuration."""
    shutil.copytree(source.folder, target, dirs_exist_ok=True)
    return Workspace(target, target / "home", target / "rag_eval.yaml")


def _strict_scores(space: Workspace, model: str, judge: str) -> pd.DataFrame:
    scores = space.asset("judge_scores", model)
    return scores[(scores["judge_id"] == judge) & (scores["status"] == "ok")].set_index("qid")


def _reviewer_labels(space: Workspace, queue: Path, reviewer: str, flip_every: int) -> list[dict]:
    """A test reviewer: gives the reference judge's correctness, except on every
    ``flip_every``-th case, where it gives the opposite (so the expected agreement is known)."""
    rows = [json.loads(line) for line in queue.read_text().splitlines()]
    labels = []
    for number, row in enumerate(r for r in rows if r["metric"] == "correctness"):
        truth = _strict_scores(space, row["answer_model"], "reference").loc[row["qid"], "correctness"]
        label = 1.0 - truth if number % flip_every == 0 else truth
        labels.append({**row, "label": label, "reviewer": reviewer, "note": "", "labelled_at": "2026-12-01"})
    return labels


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _weighted_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa, linearly weighted on 0 / 0.5 / 1, written out here from its definition."""
    levels = [0.0, 0.5, 1.0]
    observed = np.array([[np.sum((a == x) & (b == y)) for y in levels] for x in levels], dtype=float)
    n = observed.sum()
    weights = np.array([[1 - abs(i - j) / 2 for j in range(3)] for i in range(3)])
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / n
    p_observed, p_expected = (weights * observed).sum() / n, (weights * expected).sum() / n
    return float((p_observed - p_expected) / (1 - p_expected))


@pytest.fixture(scope="module")
def labelled(evaluated_for_review, tmp_path_factory) -> tuple[Workspace, dict]:
    """Both models' queues exported, labelled by two test reviewers and imported."""
    space = _copy_space(evaluated_for_review, tmp_path_factory.mktemp("labelled"))
    imported = {}
    for model in MODELS:
        assert (
            _cli(
                space,
                "review",
                "export",
                "--model",
                model,
                "--n",
                str(SAMPLE),
                "--strategy",
                "random",
                "--name",
                f"{model}-q",
            )
            == 0
        )
        queue = space.review / f"{model}-q.jsonl"
        ana = _reviewer_labels(space, queue, "ana", flip_every=4)
        bo = _reviewer_labels(space, queue, "bo", flip_every=6)[: SAMPLE // 2]  # a second reviewer on half
        path = _write(space.folder / f"{model}.labels.jsonl", ana + bo)
        assert _cli(space, "review", "import", str(path)) == 0
        imported[model] = ana + bo
    return space, imported


def _export(capsys, space: Workspace, name: str, *extra: str):
    """Five cases of extractive-baseline for the LLM judge, picked where the judges disagree."""
    arguments = ["--model", "extractive-baseline", "--n", "5", "--judge", LLM_JUDGE, "--name", name]
    return in_process(capsys, *space.args, "review", "export", *arguments, *extra)


def test_a_queue_holds_what_a_reviewer_needs_and_hides_the_judge(evaluated_for_review, tmp_path, capsys):
    space = _copy_space(evaluated_for_review, tmp_path / "space")
    code, out, _ = _export(capsys, space, "blind")
    assert code == 0 and "5 cases of extractive-baseline (disagreement)" in out
    rows = [json.loads(line) for line in (space.review / "blind.jsonl").read_text().splitlines()]
    assert {r["metric"] for r in rows} == {"correctness", "faithfulness", "context_relevance"}
    assert len(rows) == 15 and all(r["label"] is None and r["truth"] for r in rows)
    page = (space.review / "blind.html").read_text()
    assert "verdicts are hidden" in page and '"judge": {}' in page
    # a draw weighted towards where the two judges' scores differ most, each case's chance of
    # being drawn recorded, its place in a random review order and the cases it was drawn from
    scores = space.asset("judge_scores", "extractive-baseline")
    spread = pd.concat(
        [
            scores.pivot_table(index="qid", columns="judge_id", values=m).pipe(
                lambda w: w.max(axis=1) - w.min(axis=1)
            )
            for m in ("correctness", "context_relevance")
        ],
        axis=1,
    ).max(axis=1)
    assert [(r["queue_position"], r["queue_size"]) for r in rows[::3]] == [(i, 5) for i in range(5)]
    assert {r["case_set"] for r in rows} == {case_set_id(scores["qid"])}
    weights = 0.2 + spread.fillna(0.0)
    for row in rows:
        expected = min(1.0, 5 * weights[row["qid"]] / weights.sum())  # none capped at 5 of 40
        assert row["selection"] == "disagreement" and row["inclusion_probability"] == pytest.approx(expected)
    # the same seed picks the same cases; --show-judge shows the verdicts
    assert _export(capsys, space, "shown", "--show-judge")[0] == 0

    def cases(name: str) -> list[dict]:  # the same rows but for the queue's own name
        return [
            {**json.loads(line), "queue": None}
            for line in (space.review / f"{name}.jsonl").read_text().splitlines()
        ]

    assert cases("shown") == cases("blind")
    assert f'"{LLM_JUDGE} / correctness"' in (space.review / "shown.html").read_text()
    code, _, err = in_process(capsys, *space.args, "review", "export", "--model", "never-evaluated")
    assert code == 2 and err.startswith("error: never-evaluated is not an evaluated answer model here")


def test_a_queue_labelled_in_part_corrects_from_its_prefix_and_labels_of_other_cases_do_not(
    evaluated_for_review, tmp_path, capsys
):
    """A weighted queue of 8 whose first 4 cases (in its random review order) were labelled
    corrects from those 4, weighted by their chances; labels that skip the queue's second case
    rest on its first only, too few; labels drawn from another set of cases correct nothing.
    Each says so in the corrections' note."""
    space = _copy_space(evaluated_for_review, tmp_path / "space")
    assert _export(capsys, space, "half", "--n", "8")[0] == 0
    rows = [json.loads(line) for line in (space.review / "half.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["metric"] == "correctness"]
    assert sorted(r["queue_position"] for r in rows) == list(range(8))

    def corrected_after(labels: list[dict], name: str) -> pd.Series:
        path = _write(tmp_path / f"{name}.labels.jsonl", labels)
        assert in_process(capsys, *space.args, "review", "import", str(path))[0] == 0
        table = space.asset("corrected_means")
        return table[
            (table["answer_model"] == "extractive-baseline")
            & (table["judge_id"] == LLM_JUDGE)
            & (table["metric"] == "correctness")
        ].iloc[0]

    def labelled(chosen: list[dict], queue: str, **change) -> list[dict]:
        return [{**r, "label": 1.0, "reviewer": "ana", "queue": queue, **change} for r in chosen]

    first = sorted(rows, key=lambda r: r["queue_position"])
    row = corrected_after(labelled(first[:4], "half"), "half")
    assert row["n_labels"] == 4 and not np.isnan(row["corrected_mean"])
    assert "the first 4 of its 8 in review order" in row["correction_note"]
    # the heaviest first, as the old page showed them: the second case in review order skipped
    skipped = labelled([first[0], *first[2:7]], "skipped")
    row = corrected_after(skipped, "skipped")
    assert row["n_labels"] == 0 and np.isnan(row["corrected_mean"])
    assert row["correction_note"].startswith("not corrected: queue skipped was labelled out of order")
    other = labelled(first, "earlier", case_set="0123456789ab")  # a queue of another run's cases
    row = corrected_after(other, "earlier")
    assert row["n_labels"] == 0 and np.isnan(row["corrected_mean"])
    assert (
        "not corrected: queue earlier was drawn from another set of cases (0123456789ab)"
        in (row["correction_note"])
    )


def test_judge_agreement_and_corrected_means_match_an_independent_computation(labelled):
    space, imported = labelled
    agreement = space.asset("judge_agreement").set_index(["judge_id", "metric"])
    for judge in ("reference", LLM_JUDGE):
        human, judged = [], []
        for model, labels in imported.items():
            scores = _strict_scores(space, model, judge)
            for label in labels:
                human.append(label["label"])
                judged.append(scores.loc[label["qid"], "correctness"])
        human_a, judged_a = np.array(human), np.array(judged)
        row = agreement.loc[(judge, "correctness")]
        assert row["n"] == len(human) == 2 * SAMPLE + SAMPLE
        assert row["accuracy"] == pytest.approx(np.mean(human_a == judged_a))
        assert row["kappa"] == pytest.approx(_weighted_kappa(human_a, judged_a))
        assert row["kappa_low"] <= row["kappa"] <= row["kappa_high"]
        passed, failed = human_a >= 0.5, human_a < 0.5
        tpr, tnr = np.mean(judged_a[passed] >= 0.5), np.mean(judged_a[failed] < 0.5)
        assert row["true_positive_rate"] == pytest.approx(tpr) and row["true_negative_rate"] == pytest.approx(
            tnr
        )
        kappa = _weighted_kappa(human_a, judged_a)
        assert bool(row["flagged"]) == (kappa < 0.5 or tpr < 0.8 or tnr < 0.8)
    # the reviewers follow the reference except on every 4th (ana) and 6th (bo) case
    assert agreement.loc[("reference", "correctness"), "accuracy"] < 1

    corrected = space.asset("corrected_means")
    for model in MODELS:
        row = corrected[
            (corrected["answer_model"] == model)
            & (corrected["judge_id"] == LLM_JUDGE)
            & (corrected["metric"] == "correctness")
        ].iloc[0]
        scores = _strict_scores(space, model, LLM_JUDGE)["correctness"]
        people = pd.DataFrame(imported[model]).groupby("qid")["label"].mean()
        estimate, low, high, _ = corrected_by_definition(
            scores.to_numpy(), scores.loc[people.index].to_numpy(), people.to_numpy()
        )
        assert (
            row["n_labels"] == len(people) == SAMPLE
            and "indicative below 60 labels" in row["correction_note"]
        )
        assert row["corrected_mean"] == pytest.approx(min(max(estimate, 0), 1))
        assert row["corrected_low"] == pytest.approx(max(0.0, low))
        assert row["corrected_high"] == pytest.approx(min(1.0, high))
        # the corrections say when people flagged the judge, and why; so does the comparison
        assert row["flagged_by_people"] == agreement.loc[(LLM_JUDGE, "correctness"), "why"]
    comparison = space.asset("model_comparison").set_index(["answer_model", "judge_id"])
    why = agreement.loc[(LLM_JUDGE, "correctness"), "why"]
    if why:
        assert comparison.loc[(MODELS[0], LLM_JUDGE), "flagged_by_people"] == f"correctness: {why}"


def test_the_report_and_the_import_say_how_the_judges_fare_against_people(labelled, capsys):
    space, _ = labelled
    report = (space.home / "storage" / "artifacts" / "eval_report.html").read_text()
    section = report[report.index('id="human-review"') : report.index("<h2>Trend</h2>")]
    assert "corrected by people" in section and "judge mean" in section and LLM_JUDGE in section
    assert 'id="flagged-judges"' in section
    history = pd.read_parquet(space.home / "storage" / "history" / "agreement_history.parquet")
    assert history["labels_version"].nunique() == 2  # one set of labels per import
    assert "agreement with people over time" in report
    _render_section(space.home / "storage" / "artifacts" / "eval_report.html")
    # importing the same file again changes nothing: the same labels are the same version
    path = space.folder / "oracle.labels.jsonl"
    code, out, _ = in_process(capsys, *space.args, "review", "import", str(path))
    assert code == 0 and "judges against people" in out and "means corrected by the labels" in out
    assert "reviewers against each other" in out and f"| correctness | {SAMPLE} | {SAMPLE} |" in out
    assert (
        pd.read_parquet(space.home / "storage" / "history" / "agreement_history.parquet")[
            "labels_version"
        ].nunique()
        == 2
    )
    assert sorted(p.name for p in (space.review / "labels").iterdir()) == [
        "extractive-baseline.labels.jsonl",
        "oracle.labels.jsonl",
    ]
    reviewers = space.asset("human_labels")["reviewer"].value_counts().to_dict()
    assert reviewers == {"ana": 2 * SAMPLE, "bo": SAMPLE}
    # the daemon's labels sensor, started after the imports (no cursor yet), finds every file
    # read as it is: one change, one read
    defs = space.defs()
    with dg.build_sensor_context(instance=open_instance(str(space.home)), definitions=defs) as context:
        result = defs.resolve_sensor_def("new_labels_sensor")(context)
    assert not result.run_requests and "each read as it is" in result.skip_reason.skip_message


def test_a_refresh_after_an_import_measures_the_same_labels_and_summarizes_nothing_again(labelled, tmp_path):
    """`rag-eval review import` corrected the models' means across them; a comparison the daemon
    launches later (a refresh after another evaluation: no rag-eval tags) measures the judges
    against the same labels again, corrects the same, summarizes no model, and the labels sensor
    finds nothing new to read."""
    space = _copy_space(labelled[0], tmp_path / "space")
    defs = space.defs()
    instance = open_instance(str(space.home))
    before = space.asset("corrected_means")
    summaries = {m: _latest_summary_id(instance, m) for m in MODELS}
    refresh = defs.resolve_job_def("comparison_job")
    assert refresh.execute_in_process(instance=instance, tags={"rag_eval/trigger": "new_results"}).success
    pd.testing.assert_frame_equal(space.asset("corrected_means"), before)
    assert {m: _latest_summary_id(instance, m) for m in MODELS} == summaries
    sensor = defs.resolve_sensor_def("new_labels_sensor")
    with dg.build_sensor_context(instance=instance, definitions=defs) as context:
        result = sensor.evaluate_tick(context)
    assert not result.run_requests


def _render_section(report: Path) -> None:
    """The report's human-review section in a real browser, offline: its tables and its chart
    drawn (and kept as a picture for the README)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
        page.goto(report.as_uri())
        section = page.locator("#human-review")
        section.scroll_into_view_if_needed()
        page.wait_for_selector(".main-svg", timeout=60_000)
        assert page.locator("#flagged-judges").count() == 1
        assert page.get_by_text("corrected by people").count() >= 1
        assert section.locator("table").count() == 2  # the judges against people, the corrected means
        ARTIFACTS.mkdir(exist_ok=True)
        section.screenshot(path=str(ARTIFACTS / "report-human-review.png"))
        browser.close()


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"qid": "5a-no-such-case"},
            "case '5a-no-such-case' is not among extractive-baseline's evaluated cases",
        ),
        ({"label": 0.7}, "label 0.7 is not 0, 0.5 or 1"),
        ({"label": True}, "label True is not 0, 0.5 or 1"),  # JSON true is no score
        ({"answer_model": "gpt-9"}, "answer model 'gpt-9' was never evaluated"),
        ({"metric": "style"}, "metric 'style' is not one of correctness, faithfulness, context_relevance"),
        ({"reviewer": ""}, "no reviewer"),
        ({"queue_position": 5, "queue_size": 5}, "are not a place in a queue (0 <= position < size)"),
        ("conflict", "ana labelled extractive-baseline"),
    ],
)
def test_a_bad_label_row_is_named_by_file_and_line_and_nothing_is_imported(
    evaluated_for_review, tmp_path, capsys, change, expected
):
    space = _copy_space(evaluated_for_review, tmp_path / "space")
    qids = list(space.asset("candidate_answers", "extractive-baseline")["qid"])
    rows = [
        {
            "qid": q,
            "answer_model": "extractive-baseline",
            "metric": "correctness",
            "label": 1,
            "reviewer": "ana",
        }
        for q in qids[:5]
    ]
    if change == "conflict":
        rows.append({**rows[1], "label": 0})
    else:
        rows[3] = {**rows[3], **change}
    path = _write(tmp_path / "labels.jsonl", rows)
    code, out, err = in_process(capsys, *space.args, "review", "import", str(path))
    line = 6 if change == "conflict" else 4
    assert code == 2 and err.startswith(f"error: {path}: 1 problem(s)")
    assert f"{path.name}, line {line}: " in err and expected in err and "Traceback" not in err
    assert not (space.review / "labels").exists() and "kept" not in out


def test_a_dropped_label_file_is_read_by_the_sensors_and_corrects_the_labelled_model(
    evaluated_for_review, tmp_path
):
    space = _copy_space(evaluated_for_review, tmp_path / "space")
    defs = space.defs()
    instance = open_instance(str(space.home))
    qids = list(space.asset("candidate_answers", "oracle")["qid"])[:6]
    labels = space.review / "labels"
    labels.mkdir(parents=True)
    _write(
        labels / "dropped.jsonl",
        [
            {
                "qid": q,
                "answer_model": "oracle",
                "metric": "correctness",
                "label": 0.5 if number % 2 else 0.0,  # people fail half of what the judge passes
                "reviewer": "cy",
                # as a random queue of 6 writes them: what lets the labels correct the mean
                "queue": "cy-random",
                "selection": "random",
                "inclusion_probability": 6 / len(space.asset("candidate_answers", "oracle")),
            }
            for number, q in enumerate(qids)
        ],
    )
    elsewhere = _write(  # a link out of the drop folder: never read, whatever it holds
        tmp_path / "elsewhere.jsonl",
        [
            {"qid": q, "answer_model": "oracle", "metric": "correctness", "label": 1, "reviewer": "zed"}
            for q in qids
        ],
    )
    (labels / "linked.jsonl").symlink_to(elsewhere)
    sensor = defs.resolve_sensor_def("new_labels_sensor")
    with dg.build_sensor_context(instance=instance, definitions=defs) as context:
        result = sensor(context)
    assert len(result.run_requests) == 1
    summaries_before = {m: _latest_summary_id(instance, m) for m in MODELS}
    job = defs.resolve_job_def(sensor.job_name)  # one run across the models: labels to report
    assert job.name == "comparison_job"
    assert job.execute_in_process(instance=instance, tags=result.run_requests[0].tags).success
    record = instance.fetch_materializations(dg.AssetKey("judge_agreement"), limit=1).records[0]
    assert record.event_log_entry.asset_materialization.metadata["labels"].value == 6
    assert (
        "reference / correctness"
        in record.event_log_entry.asset_materialization.metadata["flagged_judges"].value
    )
    # no model's own evaluation is touched: its summary reads no labels
    assert {m: _latest_summary_id(instance, m) for m in MODELS} == summaries_before
    corrected = space.asset("corrected_means")
    row = corrected[
        (corrected["answer_model"] == "oracle")
        & (corrected["judge_id"] == "reference")
        & (corrected["metric"] == "correctness")
    ].iloc[0]
    # the judge gives 1 everywhere, people 0.25 on average: corrected by 0.75, from a random draw
    assert row["mean"] == 1.0 and row["n_labels"] == 6 and row["corrected_mean"] == pytest.approx(0.25)
    assert row["correction_note"].startswith("corrected from 6 labelled cases of queue cy-random")
    assert "true-negative rate" in row["flagged_by_people"] or "kappa" in row["flagged_by_people"]
    # every model's comparison row says its judge is flagged (a flag is the judge's, pooled)
    comparison = space.asset("model_comparison").set_index("answer_model")
    assert all("correctness" in str(comparison.loc[m, "flagged_by_people"]) for m in MODELS)
    # the same folder again: nothing new to read
    cursor = json.dumps({"dropped.jsonl": file_digest(labels / "dropped.jsonl")})
    with dg.build_sensor_context(instance=instance, definitions=defs, cursor=cursor) as context:
        assert isinstance(sensor(context), dg.SkipReason)


def _latest_summary_id(instance, model: str) -> int | None:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("metric_summary"), asset_partitions=[model]), limit=1
    ).records
    return records[0].storage_id if records else None


def test_the_labelling_page_works_offline_by_keyboard_and_click_and_its_file_imports(
    evaluated_for_review, tmp_path, capsys
):
    from playwright.sync_api import sync_playwright

    space = _copy_space(evaluated_for_review, tmp_path / "space")
    code, _, _ = in_process(
        capsys,
        *space.args,
        "review",
        "export",
        "--model",
        "oracle",
        "--n",
        "3",
        "--strategy",
        "random",
        "--name",
        "page",
    )
    assert code == 0
    page_file = space.review / "page.html"
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is required; .ci/run installs it"
    fetched = []

    def block(route):
        fetched.append(route.request.url)
        return route.continue_() if route.request.url.startswith("file:") else route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context(offline=True, accept_downloads=True)
        page = context.new_page()
        page.route("**/*", block)
        page.goto(page_file.as_uri())
        assert page.locator("section.case").count() == 3
        assert page.locator("#progress").inner_text() == "0 of 9 labelled"
        page.fill("#reviewer", "dee")
        page.locator("main").click(position={"x": 2, "y": 2})  # out of the name field
        # the keys do what the legend says and nothing more: a label stays on the highlighted
        # metric (and shows there), m moves to the next metric, j and k to the next and previous case
        page.keyboard.press("1")
        page.keyboard.press("3")  # a second press corrects the same metric: correctness 1
        assert page.locator('input[name="label-0-0"][value="1"]').is_checked()
        assert page.locator("#case-0.current").count() == 1 and page.locator("#m-0-0.current").count() == 1
        for key in ("m", "2", "m", "1"):  # faithfulness 0.5, context relevance 0
            page.keyboard.press(key)
        assert page.locator("#case-0.current").count() == 1  # still case 1: only j moves on
        page.keyboard.press("j")
        page.keyboard.press("j")
        page.keyboard.press("3")  # case 3's correctness: no case was skipped on the way
        assert page.locator('input[name="label-2-0"][value="1"]').is_checked()
        page.keyboard.press("k")
        assert page.locator("#case-1.current").count() == 1
        page.locator('input[name="label-1-0"][value="0"]').check()  # a click on case 2's correctness
        page.locator("#m-1-0 input.note").fill("names the wrong year")
        page.keyboard.press("Escape")
        assert page.locator("#progress").inner_text() == "5 of 9 labelled"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "review-page.png"))
        with page.expect_download() as download:
            page.click("#save")
        assert download.value.suggested_filename == "page.labels.jsonl"
        saved = tmp_path / "page.labels.jsonl"
        download.value.save_as(saved)
        context.close()
        browser.close()
    assert all(url.startswith("file:") for url in fetched)
    rows = [json.loads(line) for line in saved.read_text().splitlines()]
    queue = [json.loads(line) for line in (space.review / "page.jsonl").read_text().splitlines()]
    qids = list(dict.fromkeys(r["qid"] for r in queue))
    got = {(r["qid"], r["metric"]): (r["label"], r["note"]) for r in rows}
    assert got == {
        (qids[0], "correctness"): (1, ""),
        (qids[0], "faithfulness"): (0.5, ""),
        (qids[0], "context_relevance"): (0, ""),
        (qids[1], "correctness"): (0, "names the wrong year"),
        (qids[2], "correctness"): (1, ""),
    }
    assert {r["reviewer"] for r in rows} == {"dee"} and all(r["answer_model"] == "oracle" for r in rows)
    code, out, _ = in_process(capsys, *space.args, "review", "import", str(saved))
    assert code == 0 and "5 labels by dee kept in" in out
    labels = space.asset("human_labels")
    assert len(labels) == 5 and labels.set_index(["qid", "metric"]).loc[(qids[1], "correctness"), "note"] == (
        "names the wrong year"
    )


@pytest.mark.slow  # a real Phoenix
def test_human_annotations_in_phoenix_import_with_the_same_agreement_as_a_file(
    phoenix, shared_hotpotqa, tmp_path, capsys, claude
):
    import httpx

    project = "review-test"
    space = Workspace(tmp_path / "space", tmp_path / "space" / "home", tmp_path / "space" / "rag_eval.yaml")
    space.folder.mkdir()
    tracing = {"enabled": True, "preset": "phoenix", "endpoint": f"{phoenix}/v1/traces", "project": project}
    space.config.write_text(json.dumps({"review": {"folder": "review"}, "tracing": tracing}))
    assert (
        _cli(
            space,
            "run",
            "--dataset",
            str(shared_hotpotqa),
            "--sample",
            "8",
            "--models",
            ",".join(MODELS),
            "--judges",
            f"reference,{LLM_JUDGE}",
        )
        == 0
    )
    roots = phoenix_root_spans(phoenix, project, 2 * 8)
    assert len(roots) == 16
    annotations, rows = [], []
    for number, span in enumerate(roots):
        attributes = span["attributes"]
        model, qid = attributes["rag_eval.answer_model"], attributes["rag_eval.qid"]
        truth = _strict_scores(space, model, "reference").loc[qid, "correctness"]
        label = 1.0 - truth if number % 3 == 0 else truth
        rows.append(
            {"qid": qid, "answer_model": model, "metric": "correctness", "label": label, "reviewer": "eve"}
        )
        annotations.append(
            {
                "span_id": span["context"]["span_id"],
                "name": "correctness",
                "annotator_kind": "HUMAN",
                "result": {"score": label, "explanation": "checked"},
                "metadata": {"reviewer": "eve"},
            }
        )
    # a model's annotation is not a person's: left out
    annotations.append(
        {
            "span_id": roots[0]["context"]["span_id"],
            "name": "correctness",
            "annotator_kind": "LLM",
            "result": {"score": 1 - rows[0]["label"]},
            "identifier": "auto",
        }
    )
    response = httpx.post(
        f"{phoenix}/v1/span_annotations", params={"sync": "true"}, json={"data": annotations}
    )
    assert response.status_code == 200, response.text

    code, out, err = in_process(
        capsys, *space.args, "review", "import", "--phoenix", phoenix, "--project", project
    )
    assert code == 0, err
    assert "16 labels by eve kept in" in out
    from_phoenix = space.asset("judge_agreement")

    same = _copy_space(space, tmp_path / "same")
    shutil.rmtree(same.review)
    path = _write(tmp_path / "eve.jsonl", rows)
    assert in_process(capsys, *same.args, "review", "import", str(path))[0] == 0
    from_file = same.asset("judge_agreement")
    pd.testing.assert_frame_equal(from_phoenix, from_file)
    assert set(from_phoenix["judge_id"]) == {"reference", LLM_JUDGE} and (from_phoenix["n"] == 16).all()

    code, _, err = in_process(
        capsys, *space.args, "review", "import", "--phoenix", phoenix, "--project", "nope"
    )
    assert code == 2 and err.startswith("error: ") and "Traceback" not in err


def test_the_monthly_schedule_writes_a_fresh_blind_queue_per_model(evaluated_for_review, tmp_path):
    space = _copy_space(evaluated_for_review, tmp_path / "space")
    space.config.write_text(
        "review:\n  folder: review\n  schedule: '0 6 1 * *'\n  queue_size: 5\n  strategy: random\n"
    )
    defs = space.defs()
    schedule = defs.resolve_schedule_def("review_queue_schedule")
    assert schedule.cron_schedule == "0 6 1 * *" and schedule.job_name == "review_queue_job"
    instance = open_instance(str(space.home))
    assert defs.resolve_job_def("review_queue_job").execute_in_process(instance=instance).success
    queues = space.asset("review_queue").set_index("answer_model")
    assert sorted(queues.index) == sorted(MODELS) and (queues["cases"] == 5).all()
    for model in MODELS:
        page = Path(queues.loc[model, "page"])
        assert page.parent == space.review and page.name.startswith(f"{model}-random-")
        assert "verdicts are hidden" in page.read_text()
        assert len(Path(queues.loc[model, "rows"]).read_text().splitlines()) == 5 * 3  # 3 metrics a case
