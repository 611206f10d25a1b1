"""Production traffic in the real UI, nothing run from the command line: `rag-eval ui` on a fresh
home over a folder of logs. The daemon's sensor materializes each day the logs hold, the
automation sensor then refreshes the trend and its report, late rows re-run their own day; the
daily view and the report are what a person looks at (screenshots)."""

import contextlib

import dagster as dg
import pytest
import yaml

from rag_eval_pipeline_tests.support.cli import rag_eval
from rag_eval_pipeline_tests.support.processes import free_port
from rag_eval_pipeline_tests.support.production import log_row, production_config, shared_questions, write_day
from rag_eval_pipeline_tests.support.ui import (
    browser_context,
    graphql,
    open_page,
    screenshot,
    sensor_ticks,
    serve_ui,
    wait_until,
)

pytestmark = pytest.mark.slow  # `rag-eval ui` (webserver and daemon) and a browser

DAYS = ("2026-11-27", "2026-11-28", "2026-11-29")
GROUNDED = {"2026-11-27": 10, "2026-11-28": 3, "2026-11-29": 9}  # of 10 a day: the 28th fails
TRIGGER = "rag_eval/trigger"


def _production_runs(instance, day: str | None = None) -> list[dg.DagsterRun]:
    tags = {TRIGGER: "production_logs", **({"dagster/partition": day} if day else {})}
    return instance.get_runs(dg.RunsFilter(tags=tags))


def _finished(instance, runs) -> bool:
    return bool(runs) and all(r.is_finished for r in runs)


def _latest(instance, asset: str, day: str | None = None):
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[day] if day else None), limit=1
    ).records
    return records[0] if records else None


def test_the_daemon_scores_each_day_the_logs_hold_and_the_trend_follows(tmp_path):
    questions = shared_questions(30)
    for d, day in enumerate(DAYS):
        rows = [log_row(q, day, n, n < GROUNDED[day]) for n, q in enumerate(questions[d * 10 : (d + 1) * 10])]
        write_day(tmp_path / "logs", day, rows)
    reports_port = free_port()
    config = tmp_path / "rag_eval.yaml"
    production = production_config(
        tmp_path / "logs", sample_per_day=8, thresholds={"faithfulness_lexical": 0.8}, sensor_interval_s=10
    )
    settings = {
        "statistics": {"min_cases": 5},
        "production": production,
        "ui": {"reports_port": reports_port},
    }
    config.write_text(yaml.safe_dump(settings))
    with contextlib.ExitStack() as stack:
        ui = serve_ui(stack, tmp_path, config, reports_port)

        def every_day_scored():
            with ui.instance() as instance:
                runs = _production_runs(instance)
                return len(runs) == 3 and _finished(instance, runs)

        wait_until(every_day_scored, 300, "a production run per day, launched by the sensor")
        with ui.instance() as instance:
            status = {r.tags["dagster/partition"]: r.status for r in _production_runs(instance)}
        # the day under its threshold fails its blocking check, and so its run
        assert status == {
            "2026-11-27": dg.DagsterRunStatus.SUCCESS,
            "2026-11-28": dg.DagsterRunStatus.FAILURE,
            "2026-11-29": dg.DagsterRunStatus.SUCCESS,
        }

        def trend_after_the_days():
            with ui.instance() as instance:
                trend, summaries = (
                    _latest(instance, "production_trend"),
                    _latest(instance, "production_summary"),
                )
                report = _latest(instance, "production_report")
                return trend and report and trend.storage_id > summaries.storage_id

        wait_until(trend_after_the_days, 300, "the trend and report refreshed by declarative automation")

        page = browser_context(stack).new_page()
        open_page(page, f"{ui.url}/assets/production_summary?view=partitions")
        page.get_by_text("2026-11-28", exact=True).first.click(timeout=60_000)
        page.get_by_text("faithfulness_lexical", exact=True).first.wait_for(timeout=60_000)  # its summary
        screenshot(page, "ui-production-days", full_page=False)
        # the failing day reads Failed where users filter days: the verdict the check stopped
        open_page(page, f"{ui.url}/assets/production_verdict?view=partitions")
        page.get_by_text("Failed (1)", exact=True).first.wait_for(timeout=60_000)
        page.get_by_text("Materialized (2)", exact=True).first.wait_for(timeout=60_000)
        screenshot(page, "ui-production-failed-day", full_page=False)
        open_page(page, f"{ui.url}/assets/production_summary?view=checks")
        page.get_by_text("Execution history", exact=True).first.click(timeout=60_000)
        # each day's verdict, the failed one naming metric, value and threshold
        page.get_by_text("faithfulness_lexical (reference) mean 0.375 < threshold 0.8").wait_for(
            timeout=60_000
        )
        assert page.get_by_text("every threshold passed").count() == 2
        screenshot(page, "ui-production-checks", full_page=False)
        open_page(page, f"{ui.reports_url}/production_report.html")
        page.get_by_text("Production traffic", exact=True).first.wait_for(timeout=60_000)
        assert page.get_by_text("FAIL: faithfulness_lexical (reference)").count() == 1  # only the 28th
        screenshot(page, "production-report")

        # late rows of the 29th: that day alone is scored again
        late = [log_row(q, "2026-11-29", 30 + n, True) for n, q in enumerate(shared_questions(3, start=100))]
        write_day(tmp_path / "logs", "2026-11-29", late, "late.jsonl")

        def late_rows_scored():
            with ui.instance() as instance:
                runs = _production_runs(instance, "2026-11-29")
                return len(runs) == 2 and _finished(instance, runs)

        wait_until(late_rows_scored, 300, "the 29th scored again after its late rows")
        with ui.instance() as instance:
            assert len(_production_runs(instance)) == 4
            assert len(_production_runs(instance, "2026-11-27")) == 1


def test_the_ui_the_command_prints_has_its_days_and_scores_none_of_them_again(tmp_path):
    """`rag-eval production run`, then the UI command it prints, started from another folder: the
    production assets are there (the command carries its configuration), and the daemon's logs
    sensor, starting without a cursor, finds each day stored as its rows are: one change, one
    run, whoever made it."""
    questions = shared_questions(20)
    for d, day in enumerate(DAYS[:2]):
        rows = [log_row(q, day, n, True) for n, q in enumerate(questions[d * 10 : (d + 1) * 10])]
        write_day(tmp_path / "logs", day, rows)
    reports_port = free_port()
    config = tmp_path / "rag_eval.yaml"
    production = production_config(
        tmp_path / "logs", sample_per_day=8, thresholds={"faithfulness_lexical": 0.0}, sensor_interval_s=10
    )
    settings = {"statistics": {"min_cases": 5}, "production": production}
    config.write_text(yaml.safe_dump(settings | {"ui": {"reports_port": reports_port}}))
    scored = rag_eval(
        "--config", str(config), "--dagster-home", str(tmp_path / "home"), "production", "run", cwd=tmp_path
    )
    assert scored.returncode == 0, scored.stderr
    printed = scored.stdout.split("open the UI with: ")[1].split()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with contextlib.ExitStack() as stack:
        ui = serve_ui(stack, tmp_path, config, reports_port, command=printed, cwd=elsewhere)
        nodes = graphql(ui.url, "{ assetNodes { assetKey { path } } }")["assetNodes"]
        assert {"production_summary", "production_verdict"} <= {n["assetKey"]["path"][0] for n in nodes}
        ticks = wait_until(
            lambda: (found := sensor_ticks(ui, "production_logs_sensor")) and len(found) >= 2 and found,
            240,
            "two ticks of the logs sensor",
        )
        assert all(not tick["runIds"] for tick in ticks), ticks
        assert "each stored as it is" in ticks[-1]["skipReason"]  # its first tick, without a cursor
        with ui.instance() as instance:
            assert _production_runs(instance) == []  # the command's runs are the only ones
            assert _latest(instance, "production_summary", DAYS[0]) is not None  # scored by the command
