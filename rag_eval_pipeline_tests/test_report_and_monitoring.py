"""The report in headless chromium, the history, and the Prometheus textfile."""

import re
import shutil

import dagster as dg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.defs.resources import MonitoringResource, SettingsResource
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.reporting.html import PLOTLY_FILE
from rag_eval_pipeline_tests.support import REPO_ROOT


@pytest.fixture(scope="module")
def reported(evaluated):
    """The session's instance, evaluated twice through the CLI: the history grows, the report
    shows a trend, the textfile is where the CLI's default writes it."""
    textfile = evaluated.home / "storage" / "metrics" / "rag_eval.prom"
    return evaluated.defs, evaluated.instance, evaluated.home, textfile


def test_history_appends_each_materialization(reported):
    defs, instance, home, _ = reported
    history = __import__("pandas").read_parquet(home / "storage" / "history" / "metric_history.parquet")
    per_run = history[(history["answer_model"] == "oracle") & (history["metric"] == "correctness")]
    assert len(per_run) == 2 and (per_run["mean"] == 1.0).all()
    assert per_run["materialized_at"].is_monotonic_increasing
    assert per_run["kb_version"].nunique() == 1 and per_run["summary_run_id"].nunique() == 2


def test_history_records_a_summary_once_however_often_it_is_recorded(evaluated_copy):
    """Re-materializing metric_history for the same summary replaces its rows, never adds copies."""
    import pandas as pd

    defs, instance, home = evaluated_copy.defs, evaluated_copy.instance, evaluated_copy.home
    history_file = home / "storage" / "history" / "metric_history.parquet"
    before = pd.read_parquet(history_file)
    job = defs.resolve_job_def("evaluation_job")
    history_only = job.get_subset(asset_selection={dg.AssetKey("metric_history")})
    for _ in range(2):
        assert history_only.execute_in_process(instance=instance, partition_key="oracle").success
    after = pd.read_parquet(history_file)
    assert len(after) == len(before)
    assert set(map(tuple, after[["answer_model", "summary_run_id"]].to_numpy())) == set(
        map(tuple, before[["answer_model", "summary_run_id"]].to_numpy())
    )


def test_prometheus_textfile_parses(reported):
    _, _, _, textfile = reported
    families = {f.name: f for f in text_string_to_metric_families(textfile.read_text())}
    scores = {
        (s.labels["model"], s.labels["metric"], s.labels["judge"]): s.value
        for s in families["rag_eval_score"].samples
    }
    assert scores[("oracle", "correctness", "reference")] == 1.0
    assert scores[("null", "correctness", "reference")] == 0.0
    cases = {
        s.labels["model"]: s.value
        for s in families["rag_eval_cases"].samples
        if s.name == "rag_eval_cases_total"
    }
    assert cases == {"extractive-baseline": 40.0, "null": 40.0, "oracle": 40.0}
    assert "rag_eval_cost_usd" in families and "rag_eval_failures" in families


def test_summary_has_intervals_and_a_chart(reported):
    defs, instance, _, _ = reported
    summary = load_asset(instance, "metric_summary", "extractive-baseline")
    row = summary[(summary["group"] == "all") & (summary["metric"] == "correctness")].iloc[0]
    assert row["ci_low"] <= row["mean"] <= row["ci_high"] and row["ci_high"] > row["ci_low"]
    record = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("metric_summary"), asset_partitions=["oracle"]), limit=1
    ).records[0]
    assert record.asset_materialization.metadata["chart"].value.startswith(
        "![mean score per metric](data:image/svg+xml;base64,"
    )


def test_report_renders_offline_and_the_table_filters(reported):
    from playwright.sync_api import sync_playwright

    _, _, home, _ = reported
    report = home / "storage" / "artifacts" / "eval_report.html"
    text = report.read_text()
    # offline: no script is a URL; plotly.js is a file beside the report, read when a chart is near
    assert not re.findall(r'src=\\?"[a-z]+:', text) and f'PLOTLY_FILE="{PLOTLY_FILE}"' in text
    assert (report.parent / PLOTLY_FILE).is_file() and len(text) < 1_000_000  # plotly.js is not inlined
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is required; .ci/run installs it"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        page.route(
            "**/*",
            lambda route: route.abort() if not route.request.url.startswith("file:") else route.continue_(),
        )
        page.goto(report.as_uri())
        # the first screen's pictures are drawn with the page; the charts further down when near
        assert page.locator("#answers svg.chart:visible").count() == 2
        page.locator("#trend").scroll_into_view_if_needed()
        page.wait_for_selector(".main-svg", timeout=60_000)
        page.wait_for_function(
            "document.querySelectorAll('.plot-container').length === 2"
        )  # distribution, trend
        assert page.locator("g.point").count() > 0 or page.locator("path.point").count() > 0  # bars drawn
        rows = page.locator("#cases tbody tr")
        assert rows.count() == 100 and page.inner_text("#case-count") == "120"
        rule = page.locator("#verdict-rule").inner_text()
        assert "exact paired sign-flip test" in rule and "below 0.05" in rule
        page.fill("#case-filter", "oracle")
        page.wait_for_function("document.getElementById('case-count').innerText === '40'")
        shown = page.locator("#cases tbody tr:visible td:first-child").all_inner_texts()
        assert shown == ["oracle"] * 40
        page.fill("#case-filter", "")
        page.wait_for_function("document.getElementById('case-count').innerText === '120'")
        rows.first.locator("button.open").click()  # the row's record: the passages the model read
        opened = page.locator("#cases tr.record")
        opened.locator("summary").click()
        passages = opened.locator("details p")
        assert passages.count() >= 1 and passages.first.is_visible() and len(passages.first.inner_text()) > 40
        assert re.fullmatch(r"run [0-9a-f]{8} · index \S+", opened.locator("dd").nth(11).inner_text())
        page.locator("#cases th").nth(4).click()  # sort by correctness
        first = page.locator("#cases tbody tr").first.locator("td").nth(4).inner_text()
        assert first == "0.00"
        artifacts = REPO_ROOT / "test-artifacts"
        artifacts.mkdir(exist_ok=True)
        page.set_viewport_size({"width": 1440, "height": 900})  # the first screen, as README shows it
        page.goto(report.as_uri())
        page.wait_for_selector("#answers svg.chart")
        page.screenshot(path=str(artifacts / "report.png"), full_page=False)
        print(f"screenshot: {artifacts / 'report.png'}")
        browser.close()


def test_grafana_dashboard_queries_the_exported_series(reported):
    import json
    import re

    _, _, _, textfile = reported
    dashboard_file = REPO_ROOT / "rag_eval_pipeline" / "reporting" / "grafana_dashboard.json"
    dashboard = json.loads(dashboard_file.read_text())
    exported = {f.name for f in text_string_to_metric_families(textfile.read_text())}
    exported |= {f"{name}_total" for name in exported}
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            for series in re.findall(r"\b(rag_eval_[a-z_]+)\b", target["expr"]):
                assert series in exported, f"panel '{panel['title']}' queries {series}, which is not exported"


def test_metrics_are_pushed_to_a_pushgateway(tmp_path):
    """A local stand-in for the Pushgateway's HTTP API receives the exposition."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    import pandas as pd

    from rag_eval_pipeline.reporting.monitoring import prometheus_exposition

    received = {}

    class Gateway(BaseHTTPRequestHandler):
        def do_PUT(self):  # noqa: N802
            received["path"] = self.path
            received["body"] = self.rfile.read(int(self.headers["content-length"])).decode()
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Gateway)
    threading.Thread(target=server.handle_request, daemon=True).start()
    summary = pd.DataFrame(
        [
            {
                "judge_id": "reference",
                "metric": "correctness",
                "group": "all",
                "mean": 0.5,
                "ci_low": 0.3,
                "ci_high": 0.7,
                "n": 4,
                "n_cases": 4,
                "n_failed": 0,
                "total": float("nan"),
            }
        ]
    )
    settings = Settings.model_validate(
        {
            "monitoring": {
                "textfile": str(tmp_path / "m.prom"),
                "pushgateway_url": f"http://127.0.0.1:{server.server_port}",
            }
        }
    )
    resource = MonitoringResource(settings=SettingsResource.from_settings(settings))
    resource._file = tmp_path / "m.prom"  # what setup_for_execution sets from the instance
    resource.publish(prometheus_exposition({"m": summary}))
    server.server_close()
    assert received["path"] == "/metrics/job/rag_eval"
    assert 'rag_eval_score{judge="reference",metric="correctness",model="m"} 0.5' in received["body"]
    assert (tmp_path / "m.prom").read_text() == received["body"]


def test_the_case_table_keeps_cases_the_judgement_list_no_longer_has():
    """A stale partition (evaluated on another sample) is still shown, as it was answered."""
    import pandas as pd

    from rag_eval_pipeline.reporting.report import case_table

    answers = pd.DataFrame(
        {
            "qid": ["kept", "gone"],
            "question": ["Who kept it?", "Who lost it?"],
            "answer": ["Ann", "Bob"],
            "retrieved_titles": [["A"], ["B"]],
            "retrieved_passages": [["Ann kept it."], ["Bob lost it."]],
        }
    )
    scores = pd.DataFrame(
        {"qid": ["kept", "gone"], "judge_id": "reference", "status": "ok", "correctness": [1.0, 0.0]}
    )
    truth = pd.DataFrame(
        {"qid": ["kept"], "question": ["Who kept it?"], "answer": ["Ann"], "gold_titles": [["A"]]}
    )
    summary = pd.DataFrame({"summary_run_id": ["0123456789abcdef"], "kb_version": ["v1"]})
    table = case_table({"m": scores}, {"m": answers}, truth, {"m": summary})
    assert "Who lost it?" in table and "(not in the current judgement list)" in table
    assert '<span class="gold">A</span>' in table and "Bob lost it." in table
    assert "run 01234567 · index v1" in table


def test_a_model_scored_but_not_yet_answered_in_the_reads_is_left_out_of_the_case_table():
    """Two people on one instance: another run's model may have its scores read and not yet its
    answers (each read as its last summary left them, one after the other). The report leaves
    that model's cases to the next refresh, never fails on it (CI: KeyError 'null')."""
    import pandas as pd

    from rag_eval_pipeline.reporting.report import case_table

    answers = pd.DataFrame(
        {"qid": ["q"], "question": ["Who?"], "answer": ["Ann"], "retrieved_titles": [["A"]],
         "retrieved_passages": [["Ann did."]]}
    )  # fmt: skip
    scores = pd.DataFrame({"qid": ["q"], "judge_id": "reference", "status": "ok", "correctness": [1.0]})
    truth = pd.DataFrame({"qid": ["q"], "question": ["Who?"], "answer": ["Ann"], "gold_titles": [["A"]]})
    table = case_table({"m": scores, "null": scores}, {"m": answers}, truth)
    assert "Ann did." in table and ">null<" not in table


@pytest.mark.slow  # ten materializations of the report
def test_ten_reports_keep_their_folder_small_and_a_kept_one_still_draws(evaluated_copy):
    """plotly.js is written once beside the reports, not into each: ten materializations of
    the report stay under 15 MB together (each kept copy was 5 MB when it inlined plotly.js),
    and a kept copy in the history still draws its charts, offline (plotly.js read from above
    its folder when its charts are drawn)."""
    from playwright.sync_api import sync_playwright

    defs, instance, home = evaluated_copy.defs, evaluated_copy.instance, evaluated_copy.home
    report_only = defs.resolve_job_def("comparison_job").get_subset(
        asset_selection={dg.AssetKey("eval_report")}
    )
    for _ in range(10):
        assert report_only.execute_in_process(instance=instance).success
    artifacts = home / "storage" / "artifacts"
    files = [artifacts / "eval_report.html", artifacts / PLOTLY_FILE]
    files += list((artifacts / "history" / "eval_report").iterdir())
    assert len(files) >= 12 and sum(f.stat().st_size for f in files) < 15_000_000
    kept = sorted((artifacts / "history" / "eval_report").iterdir())[0]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        page = browser.new_page()
        page.route("**/*", lambda r: r.abort() if not r.request.url.startswith("file:") else r.continue_())
        page.goto(kept.as_uri())
        page.wait_for_selector(".main-svg", timeout=60_000)  # plotly.js from two folders up
        # the distribution and the trend by plotly.js; the first screen's pictures drawn as SVG
        page.wait_for_function("document.querySelectorAll('.plot-container').length === 2")
        assert page.locator("#answers svg.chart").count() >= 2
        browser.close()
