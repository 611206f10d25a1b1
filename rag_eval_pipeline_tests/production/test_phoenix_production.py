"""A real Phoenix as a production source: traces exported to it (the project's own case traces,
one per question: a root span with the question and answer, a retriever span with the passages)
are read back through its REST API as production interactions and scored by an LLM judge on the
tests' Messages API; a project that does not exist is named and the rest is scored."""

import datetime as dt
import json
import re

import pandas as pd
import pytest
import yaml

from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.phoenix import phoenix_root_spans
from stand_ins.anthropic_api import FakeAnthropic

pytestmark = pytest.mark.slow  # a real Phoenix

CASES = 12


def test_traces_in_phoenix_are_scored_as_production_traffic(
    phoenix, shared_hotpotqa, tmp_path, capsys, monkeypatch
):
    project = "support-bot"
    tracing = {"enabled": True, "preset": "phoenix", "endpoint": f"{phoenix}/v1/traces", "project": project}
    config = tmp_path / "rag_eval.yaml"
    config.write_text(yaml.safe_dump({"tracing": tracing}))
    args = ["--dagster-home", str(tmp_path / "agent-home"), "--config", str(config)]
    # the "agent": an extractive model answering from its own retrieval, traced to Phoenix
    code, _, err = in_process(
        capsys,
        *args,
        "run",
        "--dataset",
        str(shared_hotpotqa),
        "--sample",
        str(CASES),
        "--models",
        "extractive-baseline",
    )
    assert code == 0, err
    roots = phoenix_root_spans(phoenix, project, CASES)
    assert len(roots) == CASES

    # the day Phoenix stamped the agent's traces (the clock's can be the next, past midnight)
    today = min(dt.datetime.fromisoformat(root["start_time"]) for root in roots).astimezone(dt.timezone.utc)
    today = today.date().isoformat()
    production = {
        "sources": [
            {"kind": "phoenix", "url": phoenix, "project": project},
            {"kind": "phoenix", "url": phoenix, "project": "no-such-project"},
        ],
        "judges": ["claude-sonnet-4-6"],
        "thresholds": {"faithfulness": 0.5, "context_relevance": 0.5},
        "start_date": "2026-11-01",
    }
    config.write_text(yaml.safe_dump({"statistics": {"min_cases": 5}, "production": production}))
    args = ["--dagster-home", str(tmp_path / "eval-home"), "--config", str(config)]
    with FakeAnthropic() as claude:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        code, out, err = in_process(capsys, *args, "production", "run", "--day", today)
        asked = list(claude.requests)
    assert code in (0, 1), err
    assert f"skipped: Phoenix {phoenix} project no-such-project: not found" in out
    assert f"{today}: {CASES} interactions sampled" in out
    # one grounding call per trace, never shown a truth; the contexts are the ones served
    assert len(asked) == CASES and {r["tool_choice"]["name"] for r in asked} == {"record_grounding"}
    served = {}
    for root in roots:
        served[root["attributes"]["input.value"]] = root["attributes"]["output.value"]
    for request in asked:
        text = request["messages"][0]["content"]
        question = re.search(r"<question>(.*?)</question>", text, re.S)[1]
        assert f"<answer>{served[question]}</answer>" in text
        assert "<ground_truth>" not in text and "[1] " in text  # the retrieved passages, numbered
    assert re.search(
        rf"\| claude-sonnet-4-6 \| faithfulness \| all \| [01]\.\d{{3}} \[.*\] \| {CASES} \|", out
    )

    sample = pd.read_parquet(next((tmp_path / "eval-home").rglob(f"production_sample/{today}.parquet")))
    answers = pd.read_parquet(
        next((tmp_path / "agent-home").rglob("candidate_answers/extractive-baseline.parquet"))
    )
    retrieved = dict(zip(answers["question"], answers["retrieved_passages"]))
    for row in sample.itertuples():
        assert list(row.contexts) == list(retrieved[row.question])  # in the retriever's order
        assert len(row.trace_id) == 32 and row.source == f"phoenix:{phoenix}/{project}"
    assert json.loads(sample["metadata"].iloc[0]) == {}  # the case traces carry no user metadata
