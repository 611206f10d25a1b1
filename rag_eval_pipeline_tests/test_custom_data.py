"""Your own knowledge base and questions, from one configuration file, end to end: markdown
documents, a JSONL judgement list with and without relevance labels, tags, a custom Python
metric and a custom LLM rubric scored against the tests' Messages-API server."""

import json

import pandas as pd
import pytest

from rag_eval_pipeline import cli
from rag_eval_pipeline.config import load_settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from stand_ins.anthropic_api import FakeAnthropic

DOCUMENTS = {
    "Refund policy.md": "Refunds are paid within 14 days of the return. Store credit is issued at once.",
    "Shipping.md": "We ship to 40 countries. Orders to Peru take 9 days by courier.",
    "Company history.md": "Acme Tools was founded in 1987 by Ada Lovelace Smith in Lyon.",
    "Support hours.txt": "Support answers from 8 am to 6 pm, Monday to Friday.",
}
QUESTIONS = [
    {
        "id": "refund",
        "question": "How many days until refunds are paid?",
        "answer": "14 days",
        "relevant_titles": ["Refund policy"],
        "tags": ["billing"],
    },
    {
        "id": "peru",
        "question": "How long do orders to Peru take?",
        "answer": "9 days",
        "relevant_titles": ["Shipping"],
        "tags": ["logistics"],
    },
    {
        "id": "founder",
        "question": "Who founded Acme Tools?",
        "answer": "Ada Lovelace Smith",
        "relevant_titles": ["Company history"],
        "tags": ["company", "billing"],
    },
]


def _project(tmp_path, labelled: bool) -> str:
    (tmp_path / "docs").mkdir()
    for name, text in DOCUMENTS.items():
        (tmp_path / "docs" / name).write_text(text)
    rows = [q if labelled else {k: v for k, v in q.items() if k != "relevant_titles"} for q in QUESTIONS]
    (tmp_path / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = """
dataset:
  kind: custom
  questions: questions.jsonl
  documents: docs
  sample_size: null
answer_models:
  - {name: oracle, provider: offline, model: oracle}
  - {name: baseline-k2, provider: offline, model: extractive-baseline, top_k: 2}
judges: [reference, claude-sonnet-4-6]
custom_metrics:
  - {name: answer_is_short, kind: python, callable: "rag_eval_pipeline_tests.custom_metrics:answer_is_short"}
  - name: style_consistency
    kind: rubric
    instructions: Is the answer as short and plain as the ground truth?
    allowed_scores: [0, 0.5, 1]
    model: claude-sonnet-4-6
"""
    (tmp_path / "rag_eval.yaml").write_text(config)
    return str(tmp_path / "rag_eval.yaml")


def _rubric(request):
    """The simulated judge for the rubric: shorter answers score higher."""
    from stand_ins.anthropic_api import _tag, tool_reply

    text = request["messages"][0]["content"]
    words = len(_tag(text, "answer").split())
    return tool_reply(request, {"score": 1.0 if words <= 4 else 0.0, "rationale": f"{words} words."})


@pytest.fixture(params=[True, False], ids=["labelled", "unlabelled"])
def evaluated(request, tmp_path, monkeypatch):
    labelled = request.param
    config = _project(tmp_path, labelled)
    with FakeAnthropic() as server:
        simulated = server.responder

        def responder(body):
            if (body.get("tool_choice") or {}).get("name") == "record_score":
                return _rubric(body)
            return simulated(body)

        server.responder = responder
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.delenv("DAGSTER_HOME", raising=False)
        home = tmp_path / "home"
        assert cli.main(["--dagster-home", str(home), "--config", config, "run"]) == 0
        yield labelled, config, home


def _summary(config, home, model):
    instance = open_instance(str(home))
    defs = build_definitions(settings=load_settings(config))
    return load_asset(instance, "metric_summary", model), instance, defs


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_custom_data_end_to_end(evaluated):
    labelled, config, home = evaluated
    summary, instance, defs = _summary(config, home, "oracle")
    overall = summary[summary["group"] == "all"].set_index(["judge_id", "metric"])
    assert overall.loc[("reference", "correctness"), "mean"] == 1.0
    assert (
        overall.loc[("answer_is_short", "answer_is_short"), "mean"] == 1.0
    )  # every oracle answer <= 5 words
    assert overall.loc[("style_consistency", "style_consistency"), "mean"] == 1.0
    assert overall.loc[("style_consistency", "style_consistency"), "n"] == 3
    relevance = overall.loc[("reference", "context_relevance")]
    if labelled:
        assert relevance["n"] == 3 and relevance["mean"] > 0
    else:
        assert relevance["n"] == 0 and pd.isna(relevance["mean"])  # absent, not 0
        validation = load_asset(instance, "judge_validation").set_index(["judge_id", "axis", "answer_model"])
        unmeasured = validation.loc[("claude-sonnet-4-6", "context_relevance", "all models")]
        assert unmeasured["n"] == 0 and pd.isna(unmeasured["accuracy"])  # no agreement to measure: absent
        assert unmeasured["kappa_note"] == "undefined: no case scored by both judges"
    assert overall.loc[("claude-sonnet-4-6", "context_relevance"), "n"] == 3  # the LLM judge carries it
    groups = set(summary["group"])
    assert {"tag=billing", "tag=logistics", "tag=company"} <= groups
    billing = summary[
        (summary["group"] == "tag=billing")
        & (summary["metric"] == "correctness")
        & (summary["judge_id"] == "reference")
    ]
    assert billing["n"].item() == 2  # a question with two tags counts in both
    passages = load_asset(instance, "kb_passages")
    assert sorted(passages["title"]) == sorted(n.rsplit(".", 1)[0] for n in DOCUMENTS)
    baseline = load_asset(instance, "candidate_answers", "baseline-k2")
    assert (baseline["top_k"] == 2).all() and baseline["retrieved_ids"].map(len).le(2).all()


def test_invalid_custom_files_fail_with_named_errors(tmp_path, monkeypatch, capsys):
    config = _project(tmp_path, labelled=True)
    (tmp_path / "questions.jsonl").write_text(
        '{"question": "Q?", "answer": "A", "relevant_ids": ["ghost"]}\n{"question": "", "answer": "B"}\n'
    )
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")  # the file's LLM judge passes the preflight
    code = cli.main(
        ["--dagster-home", str(tmp_path / "home"), "--config", config, "run", "--models", "oracle"]
    )
    err = capsys.readouterr().err
    assert code == 2  # bad input, not a broken run
    questions = tmp_path / "questions.jsonl"
    assert err.splitlines() == [
        f"error: {questions}, line 1: relevant id 'ghost' is not in the knowledge base",
        f"error: {questions}, line 2: empty question",
    ]
