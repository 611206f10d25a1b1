"""The real Dagster UI in headless Chromium, as a new user meets it: `rag-eval ui` on a fresh
instance with a 25-question configuration and two named models, nothing run from the command line
first. The tests run in order on one instance: the configured models are there, "Materialize all"
of one partition is green, a content change makes everything stale, a failed gate is named on its
run page, a bad case reads in one screen, and the report link opens the report."""

import collections
import contextlib
import json
import re
import statistics
import time

import dagster as dg
import pytest
from dagster._core.execution.backfill import BulkActionStatus
from playwright.sync_api import expect

from rag_eval_pipeline.config import Settings, load_settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.defs.names import CLI_PID_TAG, KNOWLEDGE_BASE_RUN_TAG
from rag_eval_pipeline.defs.run_config import knowledge_base_run_config
from rag_eval_pipeline_tests.support import ARTIFACTS, SHARED_HOTPOTQA
from rag_eval_pipeline_tests.support.agent import HTTP_BODY, HTTP_RESPONSE, agent_service
from rag_eval_pipeline_tests.support.cli import rag_eval
from rag_eval_pipeline_tests.support.processes import free_port
from rag_eval_pipeline_tests.support.ui import (
    LAPTOP,
    LOCATION,
    MATERIALIZE_ALL,
    UI,
    browser_context,
    evaluates,
    graphql,
    materialize_all,
    open_page,
    screenshot,
    sensor_ticks,
    serve_ui,
    table_and_pane_widths,
    wait_until,
)

pytestmark = pytest.mark.slow  # `rag-eval ui` (webserver and daemon) and a browser

EVALUATION_ASSETS = ("candidate_answers", "judge_scores", "metric_summary", "metric_history")
CROSS_MODEL_ASSETS = (
    "model_comparison",
    "paired_comparison",
    "judge_validation",
    "eval_report",
    "prometheus_metrics",
)
MODELS = ("oracle", "null", "bot")  # "bot": the team's agent over HTTP


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    """`rag-eval ui` on a fresh home: no run, no partition, only the configuration file (two
    offline models and the team's agent, a service of its own)."""
    with contextlib.ExitStack() as stack:
        folder = tmp_path_factory.mktemp("ui")
        reports_port = free_port()
        config = folder / "rag_eval.yaml"
        agent = stack.enter_context(agent_service())
        bot = {"name": "bot", "provider": "http", "url": agent.url, "version": "v1"}
        bot |= {"body": HTTP_BODY, "response": HTTP_RESPONSE}
        config.write_text(
            f"dataset: {{source: '{SHARED_HOTPOTQA}', sample_size: 25}}\n"
            "answer_models:\n"
            "  - {name: oracle, provider: offline, model: oracle}\n"
            '  - {name: "null", provider: offline, model: "null"}\n'
            f"  - {json.dumps(bot)}\n"
            f"ui: {{reports_port: {reports_port}}}\n"
        )
        yield serve_ui(stack, folder, config, reports_port)


@pytest.fixture(scope="module")
def browser(ui):
    with contextlib.ExitStack() as stack:
        yield browser_context(stack)


def _in_flight(ui: UI) -> int:
    with ui.instance() as instance:
        return instance.get_runs_count(
            dg.RunsFilter(
                statuses=[
                    dg.DagsterRunStatus.QUEUED,
                    dg.DagsterRunStatus.NOT_STARTED,
                    dg.DagsterRunStatus.STARTING,
                    dg.DagsterRunStatus.STARTED,
                ]
            )
        )


def _latest(ui: UI, asset: str, partition: str | None = None):
    with ui.instance() as instance:
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=dg.AssetKey(asset), asset_partitions=[partition] if partition else None
            ),
            limit=1,
        ).records
    return records[0] if records else None


def _settled(ui: UI) -> bool:
    """No run in flight and the comparison newer than every summary: the daemon is done."""
    if _in_flight(ui):
        return False
    comparison, summary = _latest(ui, "model_comparison"), _latest(ui, "metric_summary")
    return summary is not None and comparison is not None and comparison.storage_id > summary.storage_id


def _stale(ui: UI, assets, partition: str | None) -> dict[str, str]:
    query = """query($keys: [AssetKeyInput!], $p: String) {
                 assetNodes(assetKeys: $keys) { assetKey { path } staleStatus(partition: $p) } }"""
    nodes = graphql(ui.url, query, {"keys": [{"path": [a]} for a in assets], "p": partition})["assetNodes"]
    return {n["assetKey"]["path"][0]: n["staleStatus"] for n in nodes}


def test_the_asset_graph_shows_every_asset_by_group(ui, browser):
    graph = build_definitions(load_settings(ui.config)).resolve_asset_graph()
    groups: dict[str, list[str]] = {}
    for key in graph.get_all_asset_keys():
        groups.setdefault(graph.get(key).group_name, []).append(key.to_user_string())
    assert set(groups) == {"knowledge", "evaluation", "reporting", "review"}  # none named like an asset
    page = browser.new_page()
    # tall enough for every row at once: the catalog draws only the rows in view (a user scrolls)
    page.set_viewport_size({"width": 1440, "height": 3000})
    open_page(page, f"{ui.url}/assets")
    for asset in sorted(a for assets in groups.values() for a in assets):
        page.get_by_text(asset, exact=True).first.wait_for(timeout=60_000)
    screenshot(page, "ui-assets")
    page.set_viewport_size(LAPTOP)
    for group, assets in groups.items():
        open_page(page, f"{ui.url}/locations/{LOCATION}/asset-groups/{group}")
        # the graph opens on part of the group (nodes out of view are not drawn): one of its own
        shown = re.compile("^(" + "|".join(re.escape(a) for a in sorted(assets)) + ")$")
        page.get_by_text(shown).first.wait_for(timeout=60_000)
        screenshot(page, f"ui-graph-{group}")


def test_the_configured_models_are_partitions_without_any_cli_step(ui, browser):
    def registered():
        with ui.instance() as instance:
            return set(instance.get_dynamic_partitions("answer_model")) == set(MODELS)

    wait_until(registered, 180, "the configured models registered by answer_models_sensor")
    page = browser.new_page()
    open_page(page, f"{ui.url}/assets/candidate_answers?view=partitions")
    for model in MODELS:
        page.get_by_text(model, exact=True).first.wait_for(timeout=60_000)
    screenshot(page, "ui-configured-partitions")


def test_a_partition_no_run_could_start_on_is_removed_with_a_reason(ui):
    """What the UI's "Add a partition" dialog accepts: `bad..name`. The registering sensor
    removes it and logs why; no run starts on it."""
    with ui.instance() as instance:
        instance.add_dynamic_partitions("answer_model", ["bad..name"])

    def removed():
        with ui.instance() as instance:
            return "bad..name" not in instance.get_dynamic_partitions("answer_model")

    wait_until(removed, 180, "bad..name removed by answer_models_sensor")
    ticks = graphql(
        ui.url,
        """query { sensorOrError(sensorSelector: {repositoryLocationName: "rag_eval_pipeline",
             repositoryName: "__repository__", sensorName: "answer_models_sensor"}) {
             ... on Sensor { sensorState { ticks(limit: 20) { logEvents { events { message } } } } } } }""",
    )["sensorOrError"]["sensorState"]["ticks"]
    messages = [e["message"] for t in ticks for e in t["logEvents"]["events"]]
    assert any(
        "removing answer-model partition 'bad..name'" in m and "start with a letter" in m for m in messages
    )
    with ui.instance() as instance:
        assert instance.get_runs(dg.RunsFilter(tags={"dagster/partition": "bad..name"})) == []


def test_materialize_all_for_one_partition_is_a_green_run(ui, browser):
    """The global lineage's "Materialize all", one model's partition chosen: one run of every
    asset (knowledge base, the partition's evaluation, the cross-model reports) succeeds, and
    the comparison holds that model."""
    page = browser.new_page()
    open_page(page, f"{ui.url}/asset-groups")
    with ui.instance() as instance:
        before = {r.run_id for r in instance.get_runs()}
    page.get_by_role("button", name=MATERIALIZE_ALL).click()
    dialog = page.locator("[role=dialog]")
    dialog.get_by_text("Select a partition or create one").click()
    page.get_by_text("oracle", exact=True).first.click()
    dialog.get_by_role("button", name="Launch 1 run").click()

    def finished():
        with ui.instance() as instance:
            new = [
                r
                for r in instance.get_runs()
                if r.run_id not in before and r.tags.get("dagster/partition") == "oracle"
            ]
            return next((r for r in new if r.is_finished), None)

    run = wait_until(finished, 300, "the Materialize all run")
    assert run.status == dg.DagsterRunStatus.SUCCESS
    open_page(page, f"{ui.url}/runs/{run.run_id}")
    page.get_by_text("Success").first.wait_for(timeout=60_000)
    screenshot(page, "ui-materialize-all")
    comparison = _latest(ui, "model_comparison")
    assert comparison.run_id == run.run_id  # the same run compared what existed: oracle
    # the run published a knowledge base: the rebuilt sensor evaluates every model on it, then
    # the refresh sensor compares them
    for model in ("null", "bot"):
        wait_until(
            lambda m=model: _latest(ui, "metric_summary", m), 300, f"{model} evaluated by the rebuilt sensor"
        )
    wait_until(lambda: _settled(ui), 300, "the refresh after the sensor's evaluations")


def test_a_backfill_of_every_model_evaluates_each_once_and_the_comparison_is_two_clicks_away(ui, browser):
    """The global lineage's "Materialize all…" with All partitions (the dialog opens on Custom,
    none chosen: Dagster's default for dynamic partitions): one backfill, exactly one evaluation
    run per model (the knowledge base it publishes is not evaluated again by the sensor), its
    page reads Succeeded, and the comparison is two clicks from the asset graph."""
    with ui.instance() as instance:
        runs_before = {r.run_id for r in instance.get_runs()}
    page = browser.new_page()
    backfill = materialize_all(ui, page, len(MODELS))
    assert backfill.status == BulkActionStatus.COMPLETED_SUCCESS
    backfill_id = backfill.backfill_id
    wait_until(lambda: _settled(ui), 300, "the refresh after the backfill")
    with ui.instance() as instance:
        new = [r for r in instance.get_runs() if r.run_id not in runs_before]
    evaluations = collections.Counter(r.tags.get("dagster/partition") for r in new if evaluates(r))
    assert evaluations == dict.fromkeys(MODELS, 1)  # each model once: no second round by a sensor
    assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in new)
    for model in MODELS:  # fresh means fresh: nothing of a completed backfill reads stale
        assert set(_stale(ui, EVALUATION_ASSETS, model).values()) == {"FRESH"}, model
    assert set(_stale(ui, CROSS_MODEL_ASSETS, None).values()) == {"FRESH"}
    open_page(page, f"{ui.url}/runs/b/{backfill_id}")
    status = page.get_by_text("Status", exact=True).first.locator("xpath=..")  # the page's header
    expect(status).to_contain_text("Succeeded", timeout=60_000)
    screenshot(page, "ui-backfill", full_page=False)

    page.set_viewport_size({"width": 1440, "height": 900})  # a laptop's screen
    open_page(page, f"{ui.url}/asset-groups")  # the graph: click 1 opens the group, 2 the asset
    group = page.get_by_text("reporting", exact=True).first
    box = group.bounding_box()
    page.mouse.click(box["x"] - 40, box["y"] + box["height"] / 2)  # the group's disclosure arrow
    page.get_by_text("model_comparison", exact=True).first.click()
    panel = page.locator("tr", has=page.get_by_text("comparison", exact=True))
    for model in MODELS:
        expect(panel.get_by_text(model, exact=True).first).to_be_visible(timeout=60_000)
    # what decides reads in the side panel at 1,440 px, no scrolling sideways: where the model
    # stands first, then correctness with its interval
    expect(panel.locator("th", has_text=re.compile("^verdict$")).first).to_be_visible(timeout=60_000)
    expect(panel.get_by_text(re.compile(r"^above (bot, null|null, bot)$")).first).to_be_visible()  # oracle
    screenshot(page, "ui-comparison-two-clicks", full_page=False)
    for header in ("verdict", "correctness"):
        box = panel.locator("th", has_text=re.compile(f"^{header}$")).first.bounding_box()
        assert box["x"] + box["width"] <= 1440, header


def test_a_content_change_makes_every_evaluation_and_report_stale(ui, browser):
    """A rebuild on other questions (tagged as rag-eval's, so nothing re-evaluates by itself):
    every evaluation asset of every partition and every cross-model asset reads STALE. After one
    model is evaluated again, the comparison's stale column says what Dagster says of each
    partition."""
    settings = load_settings(ui.config)
    defs = build_definitions(settings)
    with ui.instance() as instance:
        rebuild = defs.resolve_job_def("knowledge_base_job").execute_in_process(
            instance=instance, run_config=knowledge_base_run_config(sample_size=20), tags={CLI_PID_TAG: "1"}
        )
    for model in MODELS:
        assert set(_stale(ui, EVALUATION_ASSETS, model).values()) == {"STALE"}, model
    assert set(_stale(ui, CROSS_MODEL_ASSETS, None).values()) == {"STALE"}
    page = browser.new_page()
    open_page(page, f"{ui.url}/assets/model_comparison")
    page.get_by_text(re.compile(r"^Unsynced")).first.wait_for(timeout=60_000)
    screenshot(page, "ui-stale")

    with ui.instance() as instance:  # oracle evaluated on the new knowledge base, null not
        defs.resolve_job_def("evaluation_job").execute_in_process(
            instance=instance, partition_key="oracle", tags={KNOWLEDGE_BASE_RUN_TAG: rebuild.run_id}
        )
    wait_until(lambda: _settled(ui), 300, "the comparison refreshed after oracle's summary")
    with ui.instance() as instance:
        comparison = defs.load_asset_value("model_comparison", instance=instance).set_index("answer_model")
    dagster_says = {
        model: _stale(ui, ("metric_summary",), model)["metric_summary"] == "STALE" for model in MODELS
    }
    assert dagster_says == {"oracle": False, "null": True, "bot": True}
    assert {model: bool(comparison.loc[model, "stale"]) for model in MODELS} == dagster_says


def test_a_failed_gate_names_its_metric_and_threshold_on_the_run_page(ui, browser):
    settings = Settings.model_validate(
        {
            **load_settings(ui.config).model_dump(),
            "thresholds": {"correctness": {"min": 0.5, "bound": "lower"}},
        }
    )
    with ui.instance() as instance:
        failed = (
            build_definitions(settings)
            .resolve_job_def("evaluation_job")
            .execute_in_process(instance=instance, partition_key="null", raise_on_error=False)
        )
    assert not failed.success
    # the failure sensor writes which gate failed at the foot of the run's log, where the page
    # opens: after the run's failure, followed only by Dagster's own "Sensor ... acted on" line
    gate = "judge_scores quality_gates failed: correctness (reference) lower bound 0.000 < threshold 0.5"

    def said_after_the_failure():
        with ui.instance() as instance:
            entries = instance.all_logs(failed.run_id)
        failure = [e.dagster_event_type for e in entries].index(dg.DagsterEventType.RUN_FAILURE)
        after = [entry.message for entry in entries[failure + 1 :]]
        return gate in after and all(m == gate or "failed_checks_sensor" in m for m in after)

    wait_until(said_after_the_failure, 120, "the failed gate written at the foot of its run's log")
    page = browser.new_page()
    open_page(page, f"{ui.url}/runs/{failed.run_id}")
    first_screen = page.get_by_text(gate, exact=True).first
    first_screen.wait_for(timeout=60_000)
    expect(first_screen).to_be_in_viewport()  # no scrolling, no filter: the page opens on it
    said = page.get_by_text(
        re.compile(r"quality gate failed: correctness \(reference\) lower bound 0\.000 < threshold 0\.5")
    )
    said.first.wait_for(timeout=60_000)
    page.locator("input[placeholder^='Filter']").first.fill("quality gate failed")  # the run log's filter
    said.first.wait_for(timeout=60_000)
    screenshot(page, "ui-failed-gate", full_page=False)
    # the refresh follows the failed run's scores: the comparison names it, not "current"
    wait_until(
        lambda: (
            (c := _latest(ui, "model_comparison"))
            and c.storage_id > _latest(ui, "judge_scores", "null").storage_id
        ),
        300,
        "the comparison refreshed after the failed gate",
    )
    with ui.instance() as instance:
        comparison = build_definitions(settings).load_asset_value("model_comparison", instance=instance)
    note = comparison.set_index("answer_model").loc["null", "note"]
    assert f"evaluation run {failed.run_id[:8]} failed" in note


def test_a_bad_case_reads_in_one_screen_and_its_passages_are_one_click_away(ui, browser):
    """A worst case is one compact row, read without scrolling sideways at a laptop's width; the
    table and each case's detail are named by their model (the page shows whichever ran last)."""
    page = browser.new_page()
    page.set_viewport_size({"width": 1440, "height": 900})
    open_page(page, f"{ui.url}/assets/judge_scores?view=partitions&partition=oracle")
    record = _latest(ui, "judge_scores", "oracle")
    metadata = record.asset_materialization.metadata
    worst = metadata["worst cases of oracle"].value.records[0].data
    assert set(worst) == {"case", "correct", "diagnosis", "gold", "question"}
    page.get_by_text("worst cases of oracle", exact=True).first.wait_for(timeout=60_000)
    row = page.get_by_text(worst["case"], exact=True).first
    row.scroll_into_view_if_needed()
    row.wait_for(state="visible", timeout=60_000)
    cell = page.locator("tr", has=page.get_by_text(worst["case"], exact=True)).last  # the innermost row
    screenshot(page, "ui-worst-cases", full_page=False)
    box = cell.bounding_box()
    assert box["height"] < 200  # a case reads in one screen
    table, pane = table_and_pane_widths(page, worst["case"])  # ... and without scrolling sideways
    assert table <= pane, f"the worst cases are {table} px wide in a {pane} px pane"
    entry = next(k for k in metadata if k.startswith("oracle worst case 1: "))
    assert "Passages the model read" in metadata[entry].value and "- index: " in metadata[entry].value
    page.get_by_text(entry, exact=True).first.wait_for(timeout=60_000)


def test_the_verdicts_and_the_review_queue_read_without_a_click(ui, browser):
    """paired_comparison's verdicts are a table on its page (not behind "Show Markdown"), and
    review_queue, never materialized here, says what it writes and how, not "No metadata"."""
    verdicts = _latest(ui, "paired_comparison").asset_materialization.metadata["verdicts"].value.records
    # one judge: no judge column; the cases a column only where pairs differ in them (here the
    # agent's pairs are on fewer cases than the offline models'), else said once (`cases`)
    counts = {record.data.get("n") for record in verdicts}
    assert verdicts and {"pair", "metric", "diff", "p adj", "verdict"} <= set(verdicts[0].data)
    assert "judge" not in verdicts[0].data and ("n" in verdicts[0].data) == (len(counts) > 1)
    page = browser.new_page()
    open_page(page, f"{ui.url}/assets/paired_comparison")
    page.get_by_text(verdicts[0].data["pair"], exact=True).first.wait_for(timeout=60_000)
    page.get_by_text(verdicts[0].data["verdict"], exact=True).first.wait_for(timeout=60_000)
    screenshot(page, "ui-paired-verdicts", full_page=False)
    open_page(page, f"{ui.url}/assets/review_queue")
    page.get_by_text(re.compile(r"run `rag-eval review export`")).first.wait_for(timeout=60_000)
    screenshot(page, "ui-review-queue-before-export", full_page=False)


def test_the_report_link_opens_the_report(ui, browser):
    record = _latest(ui, "eval_report")
    link = record.asset_materialization.metadata["report"].value
    assert link == f"{ui.reports_url}/eval_report.html"
    page = browser.new_page()
    open_page(page, f"{ui.url}/assets/eval_report")
    page.locator(f'a[href="{link}"]').first.wait_for(timeout=60_000)
    page.goto(link, wait_until="load")
    page.wait_for_selector("#cases tbody tr", timeout=60_000)
    assert "RAG evaluation report" in page.title() and page.locator("#judge-validation").count() == 1
    screenshot(page, "ui-report")


def test_a_baseline_diff_reads_on_its_asset_page_and_opens_the_report(ui, browser):
    """`rag-eval baseline set main oracle`, then the comparison refresh: `baseline_diffs` says
    main's verdict on its page, and the report opens with the diff against main."""
    from rag_eval_pipeline import cli

    assert (
        cli.main(
            ["--dagster-home", str(ui.home), "--config", str(ui.config), "baseline", "set", "main", "oracle"]
        )
        == 0
    )
    settings = load_settings(ui.config)
    with ui.instance() as instance:
        refreshed = (
            build_definitions(settings)
            .resolve_job_def("comparison_job")
            .execute_in_process(
                instance=instance, asset_selection=[dg.AssetKey("baseline_diffs"), dg.AssetKey("eval_report")]
            )
        )
    assert refreshed.success
    verdict = _latest(ui, "baseline_diffs").asset_materialization.metadata["main: verdict"].value
    assert "against run" in verdict and "significantly worse" in verdict
    page = browser.new_page()
    open_page(page, f"{ui.url}/assets/baseline_diffs")
    page.get_by_text("main: verdict", exact=True).first.wait_for(timeout=60_000)
    page.get_by_text(verdict, exact=True).first.wait_for(timeout=60_000)
    screenshot(page, "ui-baseline-diff", full_page=False)
    page.goto(f"{ui.reports_url}/eval_report.html", wait_until="load")
    section = page.locator("#baseline-diffs")
    expect(section).to_be_visible(timeout=60_000)
    expect(section.locator("h3")).to_have_text("main")


def test_the_teams_agent_is_a_partition_like_any_model(ui, browser):
    """The HTTP agent of the configuration beside oracle: its scores in model_comparison, and its
    worst cases, with the contexts it returned, on judge_scores' page."""
    with ui.instance() as instance:
        comparison = build_definitions(load_settings(ui.config)).load_asset_value(
            "model_comparison", instance=instance
        )
    row = comparison.set_index("answer_model").loc["bot"]
    assert row["n_cases"] == 25 and 0 < row["f1"] < 1  # evaluated by the sensor after the first rebuild
    page = browser.new_page()
    open_page(page, f"{ui.url}/assets/model_comparison")
    page.get_by_text("bot", exact=True).first.wait_for(timeout=60_000)
    record = _latest(ui, "judge_scores", "bot")
    metadata = record.asset_materialization.metadata
    worst = metadata["worst cases of bot"].value.records[0].data
    entry = next(k for k in metadata if k.startswith("bot worst case 1: "))
    assert "**Contexts the agent returned**" in metadata[entry].value
    open_page(page, f"{ui.url}/assets/judge_scores?view=partitions&partition=bot")
    page.get_by_text(worst["case"], exact=True).first.wait_for(timeout=60_000)
    screenshot(page, "ui-agent-worst-cases", full_page=False)


def test_dropped_labels_measure_the_judge_and_the_ui_shows_its_flags(ui, browser):
    """A reviewer's file dropped into review/labels (people fail every oracle answer the
    reference judge passes): the labels sensor reads it, judge_agreement flags the judge on its
    asset page, and corrected_means corrects oracle's mean by the labels, in one cross-model run
    launched by the daemon (no model's summary is touched)."""
    with ui.instance() as instance:
        answers = build_definitions(load_settings(ui.config)).load_asset_value(
            "candidate_answers", instance=instance, partition_key="oracle"
        )
    drawn = {"queue": "ui-test", "selection": "random", "inclusion_probability": 10 / len(answers)}
    rows = [
        {
            "qid": q,
            "answer_model": "oracle",
            "metric": "correctness",
            "label": 0,
            "reviewer": "ui-test",
            **drawn,
        }
        for q in answers["qid"][:10]
    ]
    labels = ui.config.parent / "review" / "labels"
    labels.mkdir(parents=True)
    (labels / "ui-test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def flagged():
        record = _latest(ui, "judge_agreement")
        flags = record.asset_materialization.metadata["flagged_judges"].value if record else ""
        return record if "reference / correctness" in flags else None

    wait_until(flagged, 300, "judge_agreement flagging the reference judge")

    def corrected():
        record = _latest(ui, "corrected_means")
        return record if record and record.asset_materialization.metadata["corrected"].value else None

    wait_until(corrected, 300, "oracle's mean corrected by the labels")
    with ui.instance() as instance:
        table = build_definitions(load_settings(ui.config)).load_asset_value(
            "corrected_means", instance=instance
        )
    row = table[(table["answer_model"] == "oracle") & (table["judge_id"] == "reference")]
    row = row[row["metric"] == "correctness"].iloc[0]
    assert row["mean"] == 1.0 and row["n_labels"] == 10 and row["corrected_mean"] == 0.0
    page = browser.new_page()
    open_page(page, f"{ui.url}/assets/judge_agreement")
    page.get_by_text("reference / correctness", exact=False).first.wait_for(timeout=60_000)
    screenshot(page, "ui-judge-agreement")
    header = page.locator("th", has_text=re.compile(r"^flagged")).first  # the agreement table's flags
    header.wait_for(timeout=60_000)
    assert header.bounding_box()["x"] < LAPTOP["width"] - 40  # the flags begin in view at a laptop's width

    # labels imported by the command while the daemon runs: its sensors find them read, and
    # neither reads them again nor summarizes the models a second time
    imported = ui.config.parent / "cli-labels.jsonl"
    imported.write_text("".join(json.dumps({**r, "reviewer": "ui-cli"}) + "\n" for r in rows))
    done = rag_eval(
        "--config", str(ui.config), "--dagster-home", str(ui.home), "review", "import", str(imported)
    )
    assert done.returncode == 0, done.stderr
    after = time.time()

    def ticked_after_the_import():
        ticks = {
            sensor: [tick for tick in sensor_ticks(ui, sensor) if tick["timestamp"] > after]
            for sensor in ("new_labels_sensor",)
        }
        return ticks if all(ticks.values()) else None

    ticks = wait_until(ticked_after_the_import, 240, "the labels sensors' ticks after the import")
    assert all(not tick["runIds"] for found in ticks.values() for tick in found), ticks


METADATA_BYTES = 64_000  # an asset page reads its latest materialization's metadata: bounded
BASELINE_EVERY = 5  # asset pages timed against one overview baseline (a figure, not asserted)
PAGE_WAIT_MS = 180_000  # how long a page may take on a loaded machine before it counts as broken


def test_every_asset_page_renders_and_its_metadata_stays_bounded(ui, browser):
    """Every asset page renders (loaded, its data shown: the code location's name, which the page
    shows once its queries answered; a page that did not answer is asked once more before it
    counts as broken), and what would make a page slow stays bounded: each asset's latest
    metadata is under METADATA_BYTES serialized (the worst cases, verdicts and charts are a
    fixed number of rows, whatever the number of cases). How long each page took against
    Dagster's own overview page goes to test-artifacts/ as figures: on a loaded machine a time
    says more about the machine than about the page, so none is asserted."""
    from dagster._serdes import serialize_value
    from playwright.sync_api import TimeoutError as NoAnswer

    page = browser.new_page()
    page.set_default_navigation_timeout(PAGE_WAIT_MS)
    open_page(page, f"{ui.url}/overview")  # past the first visit's dialog

    def render(path: str) -> float:
        start = time.perf_counter()
        for attempt in (1, 2):
            try:
                page.goto(f"{ui.url}{path}", wait_until="load")
                page.get_by_text(LOCATION, exact=True).first.wait_for(timeout=PAGE_WAIT_MS)
                break
            except NoAnswer:
                if attempt == 2:
                    raise
        return time.perf_counter() - start

    nodes = graphql(ui.url, "{ assetNodes { assetKey { path } } }")["assetNodes"]
    assets = sorted(n["assetKey"]["path"][0] for n in nodes)
    assert len(assets) >= 15  # every asset of the code location
    ratios: dict[str, float] = {}
    for start in range(0, len(assets), BASELINE_EVERY):
        overview = statistics.median(render("/overview") for _ in range(3))
        for asset in assets[start : start + BASELINE_EVERY]:
            ratios[asset] = render(f"/assets/{asset}") / overview
    ARTIFACTS.mkdir(exist_ok=True)
    figures = {asset: round(r, 2) for asset, r in sorted(ratios.items(), key=lambda item: -item[1])}
    (ARTIFACTS / "page-render-ratios.json").write_text(json.dumps(figures, indent=1))

    sizes = {}
    with ui.instance() as instance:
        for asset in assets:
            latest = instance.fetch_materializations(dg.AssetKey(asset), limit=1).records
            if latest:
                sizes[asset] = len(serialize_value(latest[0].asset_materialization.metadata))
    assert {"judge_scores", "paired_comparison", "metric_summary"} <= set(sizes)  # the largest
    large = {asset: size for asset, size in sizes.items() if size > METADATA_BYTES}
    assert not large, f"asset metadata over {METADATA_BYTES} bytes: {large}"
