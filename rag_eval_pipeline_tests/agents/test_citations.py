"""Citations from a team's agent, through `rag-eval run`: the tests' HTTP agent (its own
retrieval, citations of right and wrong passages by id in its nested reply), the same agent as a
Python callable (1-based indices) and a file of its answers (inline ``[n]`` markers). The
reference citation metrics equal those computed by hand from the agent's own replies and
HotpotQA's gold titles; an agent that cites nothing has them absent, never 0."""

import json
import math
import urllib.request

import pandas as pd
import pytest
import yaml

from rag_eval_pipeline.answering.agents.contexts import cited_titles
from rag_eval_pipeline.answering.agents.mapping import inline_citations
from rag_eval_pipeline.answering.base import ReturnedContext
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.metrics.reference import citation_precision, citation_recall
from rag_eval_pipeline_tests.support import REPO_ROOT, SHARED_HOTPOTQA
from rag_eval_pipeline_tests.support.agent import HTTP_BODY, HTTP_RESPONSE, agent_service
from rag_eval_pipeline_tests.support.cli import rag_eval

SAMPLE = 20
CITATION_METRICS = ("citation_precision", "citation_recall")


def test_citation_markers_and_references_resolve_to_passages():
    assert inline_citations("Paris [1]. It is old [2, 3][4]; see [x] and [12]") == (1, 2, 3, 4, 12)
    assert inline_citations("no markers here") == ()
    given = (ReturnedContext("a", "p1", "Alpha"), ReturnedContext("b", None, "Beta"))
    from rag_eval_pipeline.answering.agents.contexts import Match, MatchedContext

    matched = [MatchedContext("p1", "Alpha", "a", Match.ID), MatchedContext("p2", "Beta", "b", Match.TITLE)]
    # an index, an id, a title, a digit string, one out of range, one unknown
    assert cited_titles((2, "p1", "Beta", "1", 9, "nowhere"), given, matched, None) == [
        "Beta",
        "Alpha",
        "Beta",
        "Alpha",
        "",
        "",
    ]
    assert cited_titles(None, given, matched, None) is None


def test_citation_precision_and_recall_by_hand():
    gold = ["Alpha", "Beta"]
    assert citation_precision(["Alpha", "Gamma"], gold) == 0.5
    assert citation_recall(["Alpha", "Gamma"], gold) == 0.5
    assert citation_precision(["Alpha", "Alpha", ""], gold) == 0.5  # one distinct gold, one unknown
    assert citation_recall(["Alpha", "Beta", "Gamma"], gold) == 1.0
    assert citation_precision([], gold) is None and citation_recall([], gold) is None  # cites nothing
    assert citation_precision(None, gold) is None
    assert citation_precision(["Alpha"], []) is None  # no gold: not measured


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _by_hand(cited: list[str], gold: set[str]) -> tuple[float, float]:
    """Precision and recall of the cited titles against the gold ones, written out again."""
    if not cited or not gold:
        return math.nan, math.nan
    distinct = set(cited)
    return len(distinct & gold) / len(distinct), len(distinct & gold) / len(gold)


@pytest.mark.slow  # three agents evaluated through `rag-eval run`
def test_citations_from_every_provider_are_scored_against_gold(tmp_path, monkeypatch):
    rows = [json.loads(line) for line in SHARED_HOTPOTQA.read_text().splitlines()[:SAMPLE]]
    gold = {row["id"]: set(row["supporting_facts"]["title"]) for row in rows}
    monkeypatch.setenv("EXAMPLE_AGENT_DATA", str(SHARED_HOTPOTQA))
    from example_agent.agent import answer

    with agent_service() as agent:
        replies = {row["id"]: _post(agent.url, {"query": row["question"]})["data"] for row in rows}
        # the served answers, exported with inline markers: "<answer> [2][1]"
        served = tmp_path / "served.jsonl"
        with served.open("w") as out:
            for row in rows:
                reply = answer(row["question"])
                marked = reply["answer"] + "".join(f" [{n}]" for n in reply["citations"])
                contexts = [
                    {"content": t, "source": s} for t, s in zip(reply["contexts"], reply["context_titles"])
                ]
                out.write(json.dumps({"id": row["id"], "response": marked, "retrieved": contexts}) + "\n")
        http = {"name": "cites-http", "provider": "http", "url": agent.url, "body": HTTP_BODY}
        http["response"] = {**HTTP_RESPONSE, "citations": "$.data.reply.cites[*].doc_id"}
        silent = {"name": "silent-http", "provider": "http", "url": agent.url, "body": HTTP_BODY}
        silent["response"] = HTTP_RESPONSE  # citations not mapped: the agent cites nothing we read
        python = {"name": "cites-py", "provider": "python", "target": "example_agent:answer"}
        file = {
            "name": "cites-file",
            "provider": "file",
            "path": str(served),
            "columns": {
                "qid": "id",
                "question": None,
                "answer": "response",
                "contexts": "retrieved[*].content",
                "context_titles": "retrieved[*].source",
                "citations": "inline",
            },
        }
        config = tmp_path / "rag_eval.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "dataset": {"source": str(SHARED_HOTPOTQA), "sample_size": SAMPLE},
                    "answer_models": [http, silent, python, file],
                },
                sort_keys=False,
            )
        )
        result = rag_eval(
            "--config", str(config), "--dagster-home", str(tmp_path / "home"), "run",
            cwd=tmp_path, env={"PYTHONPATH": str(REPO_ROOT), "EXAMPLE_AGENT_DATA": str(SHARED_HOTPOTQA)},
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    instance = open_instance(str(tmp_path / "home"))
    titles_of = {
        qid: {d["doc"]["id"]: d["doc"]["title"] for d in reply["retrieval"]["documents"]}
        for qid, reply in replies.items()
    }
    expected = {
        qid: [titles_of[qid][c["doc_id"]] for c in reply["reply"]["cites"]] for qid, reply in replies.items()
    }
    assert any(_by_hand(c, gold[q])[0] == 1.0 for q, c in expected.items())  # right citations
    assert any(0 <= _by_hand(c, gold[q])[0] < 1.0 for q, c in expected.items())  # and wrong ones
    for model in ("cites-http", "cites-py", "cites-file"):
        answers = load_asset(instance, "candidate_answers", model).set_index("qid")
        scores = load_asset(instance, "judge_scores", model)
        scores = scores[scores["judge_id"] == "reference"].set_index("qid")
        for qid, cited in expected.items():
            assert list(answers.loc[qid, "cited_titles"]) == cited, (model, qid)
            precision, recall = _by_hand(cited, gold[qid])
            for metric, value in zip(CITATION_METRICS, (precision, recall)):
                stored = scores.loc[qid, metric]
                assert (math.isnan(value) and pd.isna(stored)) or stored == pytest.approx(value), (
                    model,
                    metric,
                )
        summary = load_asset(instance, "metric_summary", model)
        assert "citation_precision" in set(summary["metric"])
    silent_scores = load_asset(instance, "judge_scores", "silent-http")
    assert silent_scores[list(CITATION_METRICS)].isna().all().all()  # absent, not 0
    assert load_asset(instance, "candidate_answers", "silent-http")["cited_titles"].isna().all()
    summary = load_asset(instance, "metric_summary", "silent-http")
    unmeasured = summary[summary["metric"].isin(CITATION_METRICS)]
    assert len(unmeasured) and (unmeasured["n"] == 0).all() and unmeasured["mean"].isna().all()  # said
    assert "citation_precision" in result.stdout  # the comparison shows it for the citing agents
    qid = next(q for q, c in expected.items() if c and c[0] in gold[q])
    home = ["--config", str(config), "--dagster-home", str(tmp_path / "home")]
    shown = rag_eval(*home, "explain", qid, "--model", "cites-http")
    assert shown.returncode == 0, shown.stderr
    assert (
        f"cites: {replies[qid]['reply']['cites'][0]['doc_id']} -> {expected[qid][0]} [GOLD]" in shown.stdout
    )
