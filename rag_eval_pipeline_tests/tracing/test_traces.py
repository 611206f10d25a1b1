"""Case traces through the CLI: the OTLP/HTTP wire shape Langfuse reads (a receiver of the tests'
own: a live Langfuse was not available here), a collector that is down, and a real Phoenix
server that lists the traces and renders them in headless chromium."""

import base64
import json
import os
import shutil
import urllib.request
from pathlib import Path

import dagster as dg
import pytest

from rag_eval_pipeline import cli
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline_tests.support import REPO_ROOT
from rag_eval_pipeline_tests.support.otlp import OtlpReceiver
from rag_eval_pipeline_tests.support.processes import free_port
from stand_ins.anthropic_api import FakeAnthropic


def _run(tmp_path, dataset, tracing: dict, models="oracle,null", sample="10", env=None, judges="reference"):
    config = tmp_path / "rag_eval.yaml"
    config.write_text(json.dumps({"tracing": {"enabled": True, **tracing}}))
    old = dict(os.environ)
    os.environ.update(env or {})
    try:
        code = cli.main(
            [
                "--config",
                str(config),
                "--dagster-home",
                str(tmp_path / "home"),
                "run",
                "--dataset",
                str(dataset),
                "--sample",
                sample,
                "--models",
                models,
                "--judges",
                judges,
            ]
        )
    finally:
        os.environ.clear()
        os.environ.update(old)
    return code


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_traces_carry_the_attributes_langfuse_reads_on_its_otlp_path(shared_hotpotqa, tmp_path, capsys):
    """Claude answering and judging (the tests' Messages-API server) beside the oracle: the LLM
    spans carry model and usage, the spans of work that called no model do not."""
    with OtlpReceiver() as receiver, FakeAnthropic() as claude:
        env = {
            "LANGFUSE_HOST": receiver.url,
            "LANGFUSE_PUBLIC_KEY": "pk-lf-test",
            "LANGFUSE_SECRET_KEY": "sk-lf-test",
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": claude.url,
        }
        judges = "reference,claude-sonnet-4-6"
        assert (
            _run(tmp_path, shared_hotpotqa, {"preset": "langfuse"}, "oracle,haiku", env=env, judges=judges)
            == 0
        )
    capsys.readouterr()
    assert {r["path"] for r in receiver.requests} == {"/api/public/otel/v1/traces"}
    expected = "Basic " + base64.b64encode(b"pk-lf-test:sk-lf-test").decode()
    assert {r["headers"].get("authorization") for r in receiver.requests} == {expected}
    roots = [s for s in receiver.spans if not s["parent"]]
    assert len(roots) == 20  # ten cases, two answer models: one trace each

    def case(answer_model: str) -> tuple[dict, dict[str, dict]]:
        root = next(s for s in roots if s["attributes"]["rag_eval.answer_model"] == answer_model)
        children = [s for s in receiver.spans if s["trace_id"] == root["trace_id"] and s["parent"]]
        return root["attributes"], {s["name"]: s["attributes"] for s in children}

    attributes, by_name = case("oracle")
    assert attributes["langfuse.trace.name"].startswith("case ") and attributes["input.value"]
    assert attributes["rag_eval.score.reference.correctness"] == 1.0  # the oracle, judged
    assert "rag_eval.score.claude-sonnet-4-6.correctness" in attributes  # every judge's metrics
    assert attributes["rag_eval.index_version"] and attributes["rag_eval.dagster_run_id"]
    assert set(by_name) == {"retrieval", "answer", "judge claude-sonnet-4-6"}  # reference: on the root
    assert by_name["retrieval"]["openinference.span.kind"] == "RETRIEVER"
    assert len(by_name["retrieval"]["rag_eval.retrieval.titles"]) == 4
    assert by_name["answer"]["langfuse.observation.type"] == "generation"
    assert by_name["answer"]["gen_ai.request.model"] == "oracle"
    assert "gen_ai.usage.input_tokens" not in by_name["answer"]  # the oracle called no model

    _, by_name = case("haiku")
    answer, judge = by_name["answer"], by_name["judge claude-sonnet-4-6"]
    assert (
        answer["gen_ai.request.model"].startswith("claude-haiku") and answer["gen_ai.system"] == "anthropic"
    )
    assert answer["gen_ai.usage.input_tokens"] > 0 and answer["llm.token_count.completion"] > 0
    assert answer["rag_eval.cost_usd"] > 0 and answer["rag_eval.cached"] is False
    assert (
        judge["gen_ai.request.model"] == "claude-sonnet-4-6"
        and judge["openinference.span.kind"] == "EVALUATOR"
    )
    assert judge["gen_ai.usage.input_tokens"] > 0 and judge["rag_eval.judge.status"] == "ok"


def test_a_collector_or_phoenix_that_is_down_never_fails_the_evaluation(shared_hotpotqa, tmp_path, capsys):
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    tracing = {
        "endpoint": f"{down}/v1/traces",
        "flush_timeout_s": 1,
        "phoenix": {"experiments": True, "url": down},
    }
    code = _run(tmp_path, shared_hotpotqa, tracing, models="oracle")
    out = capsys.readouterr()
    assert code == 0 and "| oracle | reference | 10 | 0 |" in out.out
    assert (out.out + out.err).count("spans dropped") == 1  # said once, for the partition
    assert (out.out + out.err).count("phoenix experiment not uploaded") == 1
    with dg.DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        record = instance.fetch_materializations(dg.AssetKey("case_traces"), limit=1).records[0]
        metadata = record.asset_materialization.metadata
        experiment = instance.fetch_materializations(dg.AssetKey("phoenix_experiment"), limit=1).records[0]
        experiment_metadata = experiment.asset_materialization.metadata
    assert metadata["spans_dropped"].value == 30 and metadata["spans_exported"].value == 0  # 10 x 3 spans
    assert experiment_metadata["uploaded"].value is False and "Connect" in experiment_metadata["error"].value


def test_a_replayed_experiment_keeps_failures_as_failures_never_zero():
    import pandas as pd

    from rag_eval_pipeline.tracing.phoenix_experiments import (
        StoredFailure,
        experiment_cases,
        replay_evaluator,
        replay_task,
    )

    answers = pd.DataFrame(
        [
            {"qid": "a", "status": "ok", "answer": "Paris", "error": None},
            {"qid": "b", "status": "failed", "answer": "", "error": "timeout after 3 tries"},
            {"qid": "c", "status": "ok", "answer": "Rome", "error": None},
        ]
    )
    scores = pd.DataFrame(
        [
            {
                "qid": "a",
                "judge_id": "strict",
                "status": "judge_error",
                "error": "bad JSON twice",
                "correctness": None,
            },
            {"qid": "a", "judge_id": "reference", "status": "ok", "error": None, "correctness": 1.0},
            {"qid": "c", "judge_id": "strict", "status": "ok", "error": None, "correctness": 0.5},
            {
                "qid": "c",
                "judge_id": "ragas",
                "status": "judge_error",
                "error": "refused",
                "correctness": None,
            },
        ]
    )
    cases = experiment_cases(answers, scores)
    task = replay_task(cases)
    assert task({"qid": "a"}) == {"answer": "Paris"}
    with pytest.raises(StoredFailure, match="timeout"):
        task({"qid": "b"})
    assert replay_evaluator(cases, "reference.correctness")({"qid": "a"}) == {"score": 1.0}
    with pytest.raises(StoredFailure, match="bad JSON"):
        replay_evaluator(cases, "strict.correctness")({"qid": "a"})
    assert replay_evaluator(cases, "strict.correctness")({"qid": "c"}) == {"score": 0.5}
    with pytest.raises(StoredFailure, match="refused"):  # failed on every case: under its id
        replay_evaluator(cases, "ragas")({"qid": "c"})


def _phoenix_spans(url: str, project: str) -> list[dict]:
    spans, cursor = [], None
    while True:
        query = f"?limit=1000{'&cursor=' + cursor if cursor else ''}"
        with urllib.request.urlopen(f"{url}/v1/projects/{project}/spans{query}", timeout=30) as response:
            page = json.loads(response.read())
        spans += page["data"]
        cursor = page.get("next_cursor")
        if not cursor:
            return spans


def _phoenix_get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


@pytest.mark.slow  # a real Phoenix
def test_phoenix_lists_every_case_and_each_model_as_an_experiment_over_the_questions(
    phoenix, shared_hotpotqa, tmp_path, capsys
):
    tracing = {
        "preset": "phoenix",
        "endpoint": f"{phoenix}/v1/traces",
        "project": "rag-eval-test",
        "phoenix": {"experiments": True},  # its URL: the traces' host
    }
    with FakeAnthropic() as claude:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": claude.url}
        judges = "reference,claude-sonnet-4-6"
        assert _run(tmp_path, shared_hotpotqa, tracing, models="oracle,haiku", env=env, judges=judges) == 0
    out = capsys.readouterr()
    assert "running tasks" not in out.out + out.err  # the client's own progress bars stay in the log
    spans = _phoenix_spans(phoenix, "rag-eval-test")
    roots = [s for s in spans if not s.get("parent_id")]
    assert len(roots) == 20 and all(r["name"].startswith("case ") for r in roots)  # 10 cases x 2 models
    kinds = {s["name"]: s["span_kind"] for s in spans if s.get("parent_id")}
    assert kinds == {"retrieval": "RETRIEVER", "answer": "LLM", "judge claude-sonnet-4-6": "EVALUATOR"}
    answer = next(s for s in spans if s["name"] == "answer" and "claude-haiku" in json.dumps(s["attributes"]))
    assert "llm.token_count.prompt" in json.dumps(answer["attributes"])  # Phoenix's token columns
    assert all("rag_eval.score.reference.correctness" in json.dumps(r["attributes"]) for r in roots)

    # the judgement list as one dataset (named by its case set), each model an experiment over it
    datasets = [
        d for d in _phoenix_get(f"{phoenix}/v1/datasets")["data"] if d["name"].startswith("rag-eval-test")
    ]
    assert len(datasets) == 1
    dataset = datasets[0]
    examples = _phoenix_get(f"{phoenix}/v1/datasets/{dataset['id']}/examples")["data"]["examples"]
    assert len(examples) == 10 and all(e["input"]["question"] and e["output"]["answer"] for e in examples)
    experiments = _phoenix_get(f"{phoenix}/v1/datasets/{dataset['id']}/experiments")["data"]
    assert sorted(e["metadata"]["answer_model"] for e in experiments) == ["haiku", "oracle"]
    instance = open_instance(str(tmp_path / "home"))
    for experiment in experiments:
        model = experiment["metadata"]["answer_model"]
        runs = _phoenix_get(f"{phoenix}/v1/experiments/{experiment['id']}/json")
        assert len(runs) == 10 and not any(run.get("error") for run in runs)
        stored = load_asset(instance, "judge_scores", model)
        for judge in ("reference", "claude-sonnet-4-6"):
            replayed = {
                run["input"]["qid"]: a["score"]
                for run in runs
                for a in run["annotations"]
                if a["name"] == f"{judge}.correctness"
            }
            rows = stored[stored["judge_id"] == judge]
            assert replayed == dict(zip(rows["qid"], rows["correctness"]))  # the stored scores, replayed
        assert model != "oracle" or set(stored[stored["judge_id"] == "reference"]["correctness"]) == {1.0}
    with dg.DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        records = instance.fetch_materializations(dg.AssetKey("phoenix_experiment"), limit=5).records
        metadata = [r.asset_materialization.metadata for r in records]
    assert len(metadata) == 2
    assert all(
        m["uploaded"].value and m["runs"].value == 10 and m["failed_runs"].value == 0 for m in metadata
    )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(f"{phoenix}/projects", wait_until="networkidle")
        page.get_by_text("rag-eval-test").first.click()
        page.get_by_text(roots[0]["name"]).first.wait_for(timeout=60_000)
        artifacts = REPO_ROOT / "test-artifacts"
        artifacts.mkdir(exist_ok=True)
        page.screenshot(path=str(artifacts / "phoenix-traces.png"))
        page.goto(f"{phoenix}/datasets/{dataset['id']}/experiments", wait_until="networkidle")
        page.get_by_text(
            next(e["name"] for e in experiments if e["name"].startswith("oracle"))
        ).first.wait_for(timeout=60_000)  # the experiments' table, drawn
        page.screenshot(path=str(artifacts / "phoenix-experiments.png"))
        browser.close()
    assert Path(artifacts / "phoenix-traces.png").is_file()
    assert Path(artifacts / "phoenix-experiments.png").is_file()


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_the_teams_agent_is_an_agent_span_with_its_own_contexts(
    shared_hotpotqa, tmp_path, capsys, monkeypatch
):
    """An agent under test: its call is the case's AGENT span, the contexts it returned are the
    retriever span's documents (no score: the agent ranked them, it did not score them for us)."""
    from example_agent import answer as agent_answer
    from rag_eval_pipeline_tests.support.agent import HTTP_BODY, HTTP_RESPONSE, agent_service

    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    with OtlpReceiver() as receiver, agent_service() as agent:
        bot = {
            "name": "bot",
            "provider": "http",
            "url": agent.url,
            "body": HTTP_BODY,
            "response": HTTP_RESPONSE,
        }
        config = tmp_path / "rag_eval.yaml"
        config.write_text(
            json.dumps(
                {
                    "tracing": {"enabled": True, "endpoint": f"{receiver.url}/v1/traces"},
                    "answer_models": [{**bot, "version": "t1"}],
                }
            )
        )
        home = ["--config", str(config), "--dagster-home", str(tmp_path / "home")]
        arguments = ["run", "--dataset", str(shared_hotpotqa), "--sample", "5", "--models", "bot"]
        assert cli.main([*home, *arguments]) == 0
    capsys.readouterr()
    roots = [s for s in receiver.spans if not s["parent"]]
    assert len(roots) == 5
    root = roots[0]["attributes"]
    children = {
        s["name"]: s["attributes"]
        for s in receiver.spans
        if s["trace_id"] == roots[0]["trace_id"] and s["parent"]
    }
    answer, retrieval = children["answer"], children["retrieval"]
    assert answer["openinference.span.kind"] == "AGENT" and answer["langfuse.observation.type"] == "agent"
    assert answer["gen_ai.system"] == "http" and answer["output.value"] == root["output.value"]
    reply = agent_answer(root["input.value"])
    contents = [retrieval[f"retrieval.documents.{n}.document.content"] for n in range(len(reply["contexts"]))]
    assert contents == reply["contexts"] and "retrieval.documents.0.document.score" not in retrieval
    assert retrieval["rag_eval.retrieval.mode"] == "agent"
