"""Production traffic through a real Dagster instance: three days of logs (one with late rows)
through the sensor, one daily partition each; the same sample for the same seed; late rows
re-materialize their own day only; a day under its threshold fails its check naming metric,
value and threshold; Prometheus series per day; and the CLI's `production run` and `promote`,
whose judgement list `rag-eval run --dataset` evaluates."""

import json
import re
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest
import yaml

from rag_eval_pipeline.config import Settings, load_settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.defs.resources import SettingsResource
from rag_eval_pipeline.defs.resources.production import ProductionResource
from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.production import (
    log_row,
    production_config,
    shared_questions,
    write_day,
)

DAYS = ("2026-11-27", "2026-11-28", "2026-11-29")
PER_DAY = 12
SAMPLE = 8
# grounded answers per day: the second day's agent mostly says what its documents do not
GROUNDED = {"2026-11-27": 12, "2026-11-28": 3, "2026-11-29": 10}


def _write_logs(folder):
    questions = shared_questions(len(DAYS) * PER_DAY)
    for d, day in enumerate(DAYS):
        today = questions[d * PER_DAY : (d + 1) * PER_DAY]
        write_day(
            folder,
            day,
            [log_row(q, day, n, n < GROUNDED[day], "v1" if n % 4 else "v2") for n, q in enumerate(today)],
        )


def _settings(folder, **production) -> Settings:
    return Settings.model_validate(
        {
            "statistics": {"min_cases": 5},
            "production": production_config(
                folder / "logs", sample_per_day=SAMPLE, thresholds={"faithfulness_lexical": 0.8}, **production
            ),
        }
    )


def _tick(defs, instance, settings, cursor=None):
    sensor = defs.resolve_sensor_def("production_logs_sensor")
    sources = ProductionResource(settings=SettingsResource.from_settings(settings))
    with dg.build_sensor_context(
        instance=instance, cursor=cursor, resources={"production_sources": sources}
    ) as context:
        return sensor(context)


def _materializations(instance, asset, day):
    return instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[day]), limit=100
    ).records


def _check(instance, run_id):
    events = instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    return [e.dagster_event.event_specific_data for e in events]


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_three_days_through_the_sensor_late_rows_and_the_failing_day(tmp_path):
    _write_logs(tmp_path / "logs")
    settings = _settings(tmp_path)
    defs = build_definitions(settings)
    job = defs.resolve_job_def("production_job")
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        first = _tick(defs, instance, settings)
        assert sorted(r.partition_key for r in first.run_requests) == list(DAYS)  # a partition per day
        runs = {}
        for request in first.run_requests:  # as the daemon launches them
            runs[request.partition_key] = job.execute_in_process(
                instance=instance,
                partition_key=request.partition_key,
                tags=request.tags,
                raise_on_error=False,
            )
        again = _tick(defs, instance, settings, first.cursor)
        assert isinstance(again, dg.SkipReason)  # nothing new: no run

        # the day under its threshold fails its check, naming metric, value and threshold
        checks = {day: _check(instance, run.run_id) for day, run in runs.items()}
        assert [c.passed for c in checks["2026-11-27"]] == [True]
        failed = checks["2026-11-28"][0]
        assert not failed.passed
        assert re.search(
            r"faithfulness_lexical \(reference\) mean 0\.\d{3} < threshold 0\.8", failed.description
        ), failed.description

        # the same seed draws the same sample: materializing a day again changes nothing
        sample = defs.load_asset_value("production_sample", instance=instance, partition_key="2026-11-27")
        assert len(sample) == SAMPLE and sample["interaction_id"].is_unique
        job.execute_in_process(instance=instance, partition_key="2026-11-27")
        same = defs.load_asset_value("production_sample", instance=instance, partition_key="2026-11-27")
        assert list(same["interaction_id"]) == list(sample["interaction_id"])
        scores = defs.load_asset_value("production_scores", instance=instance, partition_key="2026-11-27")
        assert set(scores["qid"]) == set(sample["interaction_id"])
        # nothing that needs a reference answer is attempted: those columns are empty
        assert scores[["correctness", "exact_match", "f1"]].isna().all().all()
        assert scores["faithfulness_lexical"].notna().all()

        # late rows of the 28th: that day, and only that day, is materialized again
        late = shared_questions(4, start=200)
        write_day(
            tmp_path / "logs",
            "2026-11-28",
            [log_row(q, "2026-11-28", 50 + n, True) for n, q in enumerate(late)],
            "late.jsonl",
        )
        later = _tick(defs, instance, settings, first.cursor)
        assert [r.partition_key for r in later.run_requests] == ["2026-11-28"]
        assert later.run_requests[0].run_key != next(
            r.run_key for r in first.run_requests if r.partition_key == "2026-11-28"
        )
        job.execute_in_process(
            instance=instance,
            partition_key="2026-11-28",
            tags=later.run_requests[0].tags,
            raise_on_error=False,
        )
        grown = defs.load_asset_value(
            "production_interactions", instance=instance, partition_key="2026-11-28"
        )
        assert len(grown) == PER_DAY + 4
        assert len(_materializations(instance, "production_interactions", "2026-11-28")) == 2
        assert len(_materializations(instance, "production_interactions", "2026-11-29")) == 1
        # a sensor that starts afresh (the UI opened after `rag-eval production run`) finds
        # every day stored as its rows are: one change, one run, whoever made it
        fresh = _tick(defs, instance, settings)
        assert not fresh.run_requests and "each stored as it is" in fresh.skip_reason.skip_message
        assert isinstance(_tick(defs, instance, settings, fresh.cursor), dg.SkipReason)

        # the trend across days, and Prometheus series per day
        defs.resolve_job_def("production_report_job").execute_in_process(instance=instance)
        trend = defs.load_asset_value("production_trend", instance=instance)
        overall = trend[(trend["agent_version"] == "all") & (trend["metric"] == "faithfulness_lexical")]
        assert list(overall["day"]) == list(DAYS)
        assert overall.set_index("day")["passed"].to_dict() == {
            "2026-11-27": True,
            "2026-11-28": False,
            "2026-11-29": bool(overall.set_index("day").loc["2026-11-29", "mean"] >= 0.8),
        }
        # a day's verdict exists only where it met its thresholds (the UI reads the rest Failed)
        verdicts = instance.get_materialized_partitions(dg.AssetKey("production_verdict"))
        assert verdicts == {day for day, ok in overall.set_index("day")["passed"].items() if ok}
        textfile = Path(instance.storage_directory()) / "metrics" / "rag_eval_production.prom"
        exposition = textfile.read_text()
        for day in DAYS:
            assert re.search(
                rf'rag_eval_production_score\{{agent_version="all",day="{day}",judge="reference",'
                rf'metric="faithfulness_lexical"\}} (0|1)\.\d+',
                exposition,
            ), day
        passed = 'rag_eval_production_threshold_passed{day="2026-11-28",judge="reference",'
        assert passed + 'metric="faithfulness_lexical"} 0.0' in exposition
        # stratified: both agent versions of the day are in its sample and in its summary
        summary = defs.load_asset_value("production_summary", instance=instance, partition_key="2026-11-27")
        assert {"all", "agent_version=v1", "agent_version=v2"} <= set(summary["group"])


@pytest.fixture
def project(tmp_path):
    _write_logs(tmp_path / "logs")
    config = tmp_path / "rag_eval.yaml"
    settings = {
        "statistics": {"min_cases": 5},
        "production": production_config(
            "logs", sample_per_day=SAMPLE, thresholds={"faithfulness_lexical": 0.8}
        ),
    }
    config.write_text(yaml.safe_dump(settings))
    return tmp_path, ["--dagster-home", str(tmp_path / "home"), "--config", str(config)]


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_production_run_prints_each_day_and_promote_feeds_a_regression_run(project, capsys):
    folder, args = project
    with (folder / "logs" / "2026-11-29.jsonl").open("a") as handle:
        handle.write("{broken\n")
    code, out, err = in_process(capsys, *args, "production", "run")
    assert code == 1, err  # the 28th fails its threshold
    assert f"skipped: {folder / 'logs' / '2026-11-29.jsonl'}, line {PER_DAY + 1}: invalid JSON" in out
    for day in DAYS:
        assert f"{day}: {SAMPLE} interactions sampled" in out
    assert re.search(
        r"\| reference \| faithfulness_lexical \| all \| 1\.000 \[0\.\d{3}, 1\.000\] \| 8 \| 0\.8 \| pass \|",
        out,
    )
    assert re.search(
        r"2026-11-28 FAILED: faithfulness_lexical \(reference\) mean 0\.\d{3} < threshold 0\.8", out
    )
    assert "error: 2026-11-28 failed a production threshold" in err

    code, out, err = in_process(capsys, *args, "production", "run", "--day", "2026-11-27")
    assert code == 0 and "1 of 1 days passed" in out, err
    # the UI command it prints reads the same configuration, from any folder: its production
    # assets are there
    opener = out.split("open the UI with: ")[1].split()
    config = Path(opener[opener.index("--config") + 1])
    assert config.is_absolute() and config.samefile(folder / "rag_eval.yaml") and opener[-1] == "ui"
    assert "production_summary" in {
        key.to_user_string() for key in build_definitions(load_settings(str(config))).resolve_all_asset_keys()
    }

    out_file = folder / "regressions.jsonl"
    code, out, err = in_process(
        capsys,
        *args,
        "production",
        "promote",
        "--day",
        "2026-11-28",
        "--worst",
        "3",
        "--metric",
        "faithfulness_lexical",
        "--with-contexts",
        "--out",
        str(out_file),
    )
    assert code == 0, err
    version = re.search(r"holds 3 cases \(version (\w+)\)", out)[1]
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert [r["answer"] for r in rows] == ["", "", ""] and all(r["reference_pending"] for r in rows)
    assert all(r["documents"] and "day:2026-11-28" in r["tags"] for r in rows)
    # the worst first: the unsupported answers of the failing day
    assert all(r["served_answer"].startswith("It was founded by") for r in rows)

    # a person fills in one answer; the list runs as a judgement list, over its carried contexts
    rows[0]["answer"] = "something"
    out_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = in_process(
        capsys, *args, "run", "--dataset", str(out_file), "--models", "extractive-baseline"
    )
    assert code == 0, err
    assert "judgement list: 3 cases, version" in out and version not in out  # edited: a new version
    assert "note: 2 of 3 cases have no reference answer yet" in out
    assert "| extractive-baseline | reference | 3 | 0 |" in out

    # promoting again adds to the list instead of replacing it
    code, out, err = in_process(
        capsys,
        *args,
        "production",
        "promote",
        "--day",
        "2026-11-27",
        "--qid",
        *list(
            pd.read_parquet(next((folder / "home").rglob("production_sample/2026-11-27.parquet")))[
                "interaction_id"
            ][:1]
        ),
        "--out",
        str(out_file),
    )
    assert code == 0 and "holds 4 cases" in out, err


def test_bad_production_input_is_one_line_each(project, capsys, tmp_path):
    folder, args = project
    code, _, err = in_process(
        capsys, *args, "production", "promote", "--day", "2026-11-20", "--worst", "2", "--out", "x.jsonl"
    )
    assert code == 2 and err.strip().startswith("error: no Dagster instance")
    code, _, err = in_process(capsys, *args, "production", "run", "--day", "2026-10-01")
    assert code == 2 and "error: no interaction of 2026-10-01 in the production sources" in err
    with pytest.raises(SystemExit) as exited:  # argparse's own usage error
        in_process(capsys, *args, "production", "run", "--day", "27-11-2026")
    assert exited.value.code == 2 and "expected a day as YYYY-MM-DD" in capsys.readouterr().err
    config = folder / "rag_eval.yaml"
    settings = yaml.safe_load(config.read_text())
    settings["production"]["thresholds"] = {"faithfulness": 0.8}  # nobody measures it offline
    settings["production"]["sources"].append({"kind": "logs", "path": "nowhere"})
    config.write_text(yaml.safe_dump(settings))
    code, out, err = in_process(capsys, *args, "production", "run")
    assert code == 2 and "Traceback" not in err
    assert "error: production source logs: " in err and "nowhere does not exist" in err
    assert "error: production threshold faithfulness is measured by none of the production judges" in err
    settings["production"]["sources"][0]["columns"] = {"question": "a[["}
    config.write_text(yaml.safe_dump(settings))
    code, _, err = in_process(capsys, *args, "production", "run")
    assert code == 2 and "production.sources.0.columns.question: JSONPath 'a[[' does not compile" in err
    assert len(err.strip().splitlines()) == 1


def test_an_llm_judge_without_references_within_a_daily_budget(project, capsys, monkeypatch):
    """The STRICT judge on production traffic makes only its grounding call (it never sees a
    truth); a daily budget stops the calls it does not allow, said in one line, and a re-run
    of the day pays for nothing it already paid for, nor past what is left of the budget."""
    from stand_ins.anthropic_api import FakeAnthropic

    folder, args = project
    config = folder / "rag_eval.yaml"
    settings = yaml.safe_load(config.read_text())
    budget = 0.02
    settings["production"] |= {
        "judges": ["claude-sonnet-4-6"],
        "thresholds": {"faithfulness": 0.8},
        "daily_budget_usd": budget,
    }
    config.write_text(yaml.safe_dump(settings))
    with FakeAnthropic() as claude:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        code, out, err = in_process(capsys, *args, "production", "run", "--day", "2026-11-27")
        calls = len(claude.requests)
        assert {r["tool_choice"]["name"] for r in claude.requests} == {"record_grounding"}
        assert all("<ground_truth>" not in json.dumps(r["messages"]) for r in claude.requests)
        stopped = int(re.search(r"note: the daily budget stopped (\d+) cases", out)[1])
        assert 0 < stopped < SAMPLE and calls == SAMPLE - stopped, out
        spent = float(re.search(r"judgements cost \$(\d+\.\d+)", out)[1])
        assert 0 < spent <= budget
        # a day whose budget stopped cases is not judged on them: n counts the scored only
        assert re.search(
            rf"\| claude-sonnet-4-6 \| faithfulness \| all \| [01]\.\d{{3}} \[.*\] \| {SAMPLE - stopped} \|",
            out,
        )

        claude.reset_counts()
        code, out, err = in_process(capsys, *args, "production", "run", "--day", "2026-11-27")
        assert len(claude.requests) == 0  # what was paid for is cached; the rest does not fit
        assert f"note: the daily budget stopped {stopped} cases" in out
