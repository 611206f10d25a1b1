"""The real Dagster UI in headless Chromium: `dagster dev` with the project's workspace.yaml."""

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from rag_eval_pipeline import cli
from rag_eval_pipeline_tests.support import REPO_ROOT
from rag_eval_pipeline_tests.support.processes import free_port, stop_process_group

pytestmark = pytest.mark.slow  # dagster dev and a browser


ARTIFACTS = REPO_ROOT / "test-artifacts"


def _assets_by_group() -> dict[str, list[str]]:
    """What the UI must show: every asset of the definitions `dagster dev` loads, by group."""
    from rag_eval_pipeline.definitions import defs

    graph = defs.get_repository_def().asset_graph
    groups: dict[str, list[str]] = {}
    for key in graph.get_all_asset_keys():
        groups.setdefault(graph.get(key).group_name, []).append(key.to_user_string())
    return groups


def _wait_for(url: str, process: subprocess.Popen, timeout_s: float = 120) -> None:
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"dagster dev exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/server_info", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)  # the webserver is still starting: poll again
    raise TimeoutError(f"no Dagster webserver at {url} after {timeout_s} s")


@pytest.fixture(scope="module")
def dagster_ui(shared_hotpotqa, tmp_path_factory):
    """An instance with two evaluated models, served by `dagster dev` from the repo root."""
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is required (apt-get install chromium); .ci/run installs it"
    home = tmp_path_factory.mktemp("ui_home")
    assert (
        cli.main(
            [
                "--dagster-home",
                str(home),
                "run",
                "--dataset",
                str(shared_hotpotqa),
                "--sample",
                "5",
                "--models",
                "oracle,null",
            ]
        )
        == 0
    )
    port = free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    env.pop("ELASTICSEARCH_URL", None)
    log = open(home / "dagster-dev.log", "w")  # noqa: SIM115 (open for the server's lifetime)
    process = subprocess.Popen(
        [sys.executable, "-m", "dagster", "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
        cwd=REPO_ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(url, process)
        yield url, home, chromium
    finally:
        stop_process_group(process)
        log.close()


@pytest.fixture(scope="module")
def browser(dagster_ui):
    from playwright.sync_api import sync_playwright

    _, _, chromium = dagster_ui
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        context = browser.new_context(viewport={"width": 1600, "height": 1000})
        yield context
        context.close()
        browser.close()


def _open(page, url: str) -> None:
    """Go to a page and dismiss the first-visit "Join the Dagster community" dialog if shown."""
    page.goto(url, wait_until="networkidle")
    skip = page.get_by_role("button", name="Skip", exact=True)
    with contextlib.suppress(Exception):  # the dialog shows once per browser profile
        skip.first.click(timeout=3_000)


def _screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def test_asset_graph_lists_every_asset(dagster_ui, browser):
    url, _, _ = dagster_ui
    page = browser.new_page()
    graphs = _assets_by_group()
    assert set(graphs) == {"knowledge", "evaluation", "reporting"}
    _open(page, f"{url}/assets")
    for asset in sorted(a for assets in graphs.values() for a in assets):
        page.get_by_text(asset, exact=True).first.wait_for(timeout=30_000)
    _screenshot(page, "ui-assets")
    for group, assets in graphs.items():
        _open(page, f"{url}/locations/rag_eval_pipeline/asset-groups/{group}")
        for asset in assets:  # the nodes of the lineage graph
            page.get_by_text(asset, exact=True).first.wait_for(timeout=30_000)
        _screenshot(page, f"ui-graph-{group}")


def test_answer_model_partitions_appear(dagster_ui, browser):
    url, _, _ = dagster_ui
    page = browser.new_page()
    _open(page, f"{url}/assets/candidate_answers?view=partitions")
    for partition in ["oracle", "null"]:
        page.get_by_text(partition, exact=True).first.wait_for(timeout=30_000)
    _screenshot(page, "ui-partitions")


def test_materialization_launched_from_the_ui_succeeds(dagster_ui, browser):
    url, home, _ = dagster_ui
    page = browser.new_page()
    _open(page, f"{url}/assets/model_comparison")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        before = {r.run_id for r in instance.get_runs()}
    page.locator("button").filter(has_text=re.compile(r"^\s*Materialize\s*$")).first.click()
    deadline = time.monotonic() + 120
    launched = None
    while time.monotonic() < deadline:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            new = [
                r
                for r in instance.get_runs()
                if r.run_id not in before and "model_comparison" in str(r.asset_selection)
            ]
            finished = [
                r for r in new if r.status in (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE)
            ]
        if finished:
            launched = finished[0]
            break
        page.wait_for_timeout(1000)  # the run executes in its own process; poll the instance
    assert launched is not None, "no run of model_comparison finished after the click"
    assert launched.status == dg.DagsterRunStatus.SUCCESS
    _open(page, f"{url}/runs/{launched.run_id}")
    page.get_by_text("Success").first.wait_for(timeout=30_000)
    _screenshot(page, "ui-materialization")


def _graphql(url: str, query: str, variables: dict | None = None) -> dict:
    """The webserver's GraphQL API, as the UI itself calls it."""
    import json
    import urllib.request

    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(f"{url}/graphql", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.loads(response.read())
    assert "errors" not in answer, answer["errors"]
    return answer["data"]


def _wait_until(condition, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(2)  # the daemon ticks sensors and launches runs on its own schedule
    raise AssertionError(f"{what}: not within {timeout_s} s")


def test_a_bad_case_is_traced_from_the_asset_page(dagster_ui, browser):
    """null's worst cases, on judge_scores' page: question, answer, truth, the passages read,
    the explain command; and the path entry names the file with its extension."""
    url, home, _ = dagster_ui
    with dg.DagsterInstance.from_config(str(home)) as instance:
        record = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("judge_scores"), asset_partitions=["null"]), limit=1
        ).records[0]
        worst = record.asset_materialization.metadata["worst_cases"].value.records[0].data
    page = browser.new_page()
    _open(page, f"{url}/assets/judge_scores?view=partitions&partition=null")
    page.get_by_text("worst_cases", exact=True).first.wait_for(timeout=30_000)
    for text in (worst["question"], worst["truth"], worst["explain"], worst["passages"][:40]):
        page.get_by_text(text, exact=False).first.wait_for(timeout=30_000)
    page.get_by_text(re.compile(r"/history/judge_scores/null/[0-9a-f-]+\.parquet")).first.wait_for(
        timeout=30_000
    )
    question = page.get_by_text(worst["question"], exact=False).first
    question.scroll_into_view_if_needed()
    assert question.is_visible()
    # the table draws its rows after scrolling: wait until the row's truth cell is drawn too
    page.get_by_text(worst["truth"], exact=False).first.wait_for(state="visible", timeout=30_000)
    _screenshot(page, "ui-worst-cases")


def test_the_reports_refresh_after_a_backfill_by_themselves(dagster_ui, browser):
    """A backfill of both partitions, launched as the UI launches it; the refresh sensor (on by
    default) then rebuilds model_comparison and the report once, with no manual step."""
    url, home, _ = dagster_ui
    with dg.DagsterInstance.from_config(str(home)) as instance:
        before = (
            instance.fetch_materializations(dg.AssetKey("model_comparison"), limit=1).records[0].storage_id
        )
    assets = [
        {"path": [a]} for a in ("candidate_answers", "judge_scores", "metric_summary", "metric_history")
    ]
    launched = _graphql(
        url,
        """mutation($params: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $params) {
             __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }""",
        {"params": {"partitionNames": ["oracle", "null"], "assetSelection": assets}},
    )["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched

    def refreshed():
        with dg.DagsterInstance.from_config(str(home)) as instance:
            records = instance.fetch_materializations(dg.AssetKey("model_comparison"), limit=1).records
            return records[0] if records[0].storage_id != before else None

    record = _wait_until(refreshed, 300, "model_comparison refreshed after the backfill")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        run = instance.get_run_by_id(record.run_id)
        summaries = instance.fetch_materializations(dg.AssetKey("metric_summary"), limit=2).records
    assert run.tags.get("dagster/sensor_name") == "reports_refresh_sensor"
    assert all(s.storage_id < record.storage_id for s in summaries)  # after both partitions
    page = browser.new_page()
    _open(page, f"{url}/assets/model_comparison")
    page.get_by_text(record.run_id[:8]).first.wait_for(timeout=30_000)
    _screenshot(page, "ui-refreshed-comparison")


def test_a_rebuilt_knowledge_base_marks_the_evaluations_stale(dagster_ui, browser):
    """A rebuild on another sample: every evaluation partition and the comparison are STALE
    through GraphQL, and the asset page says so. (Tagged as rag-eval's own rebuild, so the
    rebuilt sensor leaves the re-evaluation to the command and the stale state stays visible.)"""
    from rag_eval_pipeline.definitions import build_definitions
    from rag_eval_pipeline.defs.names import CLI_PID_TAG
    from rag_eval_pipeline.defs.run_config import knowledge_base_run_config

    url, home, _ = dagster_ui
    query = """query($keys: [AssetKeyInput!], $p: String) {
                 assetNodes(assetKeys: $keys) { assetKey { path } staleStatus(partition: $p) } }"""

    def statuses(partition, assets=("candidate_answers", "judge_scores")):
        keys = [{"path": [a]} for a in assets]
        nodes = _graphql(url, query, {"keys": keys, "p": partition})["assetNodes"]
        return {n["assetKey"]["path"][0]: n["staleStatus"] for n in nodes}

    assert statuses("oracle")["candidate_answers"] == "FRESH"
    defs = build_definitions()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        defs.resolve_job_def("knowledge_base_job").execute_in_process(
            instance=instance,
            run_config=knowledge_base_run_config(sample_size=6),
            tags={CLI_PID_TAG: str(os.getpid())},
        )
    for partition in ("oracle", "null"):
        current = statuses(partition)
        assert current["candidate_answers"] == "STALE" and current["judge_scores"] == "STALE", current
    assert statuses(None, ("model_comparison",))["model_comparison"] == "STALE"
    page = browser.new_page()  # the UI badges the unpartitioned comparison (per partition: GraphQL)
    _open(page, f"{url}/assets/model_comparison")
    page.get_by_text(re.compile(r"^Unsynced")).first.wait_for(timeout=30_000)
    _open(page, f"{url}/locations/rag_eval_pipeline/asset-groups/evaluation")
    page.get_by_text(re.compile(r"^Unsynced")).first.wait_for(timeout=30_000)
    _screenshot(page, "ui-stale")


def test_a_failed_gate_leaves_the_report_as_it_was(dagster_ui, browser):
    """null judged again with one more metric under a gate it fails: the report opened in the
    browser still holds null's last accepted cases and not the failed run's metric, and the
    comparison page names the failed run."""
    from rag_eval_pipeline.config import PythonMetricSettings, Settings
    from rag_eval_pipeline.definitions import build_definitions

    url, home, chromium = dagster_ui
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
    with dg.DagsterInstance.from_config(str(home)) as instance:
        failed = gated.resolve_job_def("evaluation_job").execute_in_process(
            instance=instance, partition_key="null", raise_on_error=False
        )
        assert not failed.success
        evaluations = failed.get_asset_check_evaluations()
        gates = [e.passed for e in evaluations if e.check_name == "judge_scores_quality_gates"]
        assert gates == [False]  # it failed at the gate, not before it
        gated.resolve_job_def("comparison_job").execute_in_process(instance=instance)
    report = home / "storage" / "artifacts" / "eval_report.html"
    page = browser.new_page()
    page.goto(report.as_uri())
    page.wait_for_selector("#cases tbody tr", timeout=30_000)
    models = set(page.locator("#cases tbody tr td:first-child").all_inner_texts())
    assert models == {"oracle", "null"} and "short_answer" not in page.content()
    _screenshot(page, "ui-report-after-failed-gate")
    _open(page, f"{url}/assets/model_comparison")
    page.get_by_text(re.compile(rf"evaluation run {failed.run_id[:8]} failed")).first.wait_for(timeout=30_000)
