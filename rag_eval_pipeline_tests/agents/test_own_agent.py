"""The team's own agent under test: the example agent (its own retrieval, a nested JSON reply)
as a real HTTP service, as a Python callable (sync and async) and as a file of its answers,
through `rag-eval` as a user runs it. The contexts the agent returned are the ones stored and
judged; a fault costs only its case; a version is a cache; a mapping is checked before a run."""

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from example_agent import answer as agent_answer
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.metrics import reference
from rag_eval_pipeline_tests.support import REPO_ROOT, SHARED_HOTPOTQA
from rag_eval_pipeline_tests.support.agent import HTTP_BODY, HTTP_RESPONSE, agent_service
from rag_eval_pipeline_tests.support.cli import in_process, rag_eval

SAMPLE = 12
REFERENCE_METRICS = [
    "exact_match",
    "f1",
    "correctness",
    "context_relevance",
    "context_precision",
    "context_recall",
]


@pytest.fixture(scope="module")
def agent(monkeypatch_module):
    monkeypatch_module.setenv("EXAMPLE_AGENT_DATA", str(SHARED_HOTPOTQA))  # the Python callable's data
    with agent_service(hang_s=6) as service:
        yield service


def _http(name: str, agent, **fields) -> dict:
    return {
        "name": name,
        "provider": "http",
        "url": agent.url,
        "body": HTTP_BODY,
        "version": "v1",
        "response": HTTP_RESPONSE,
        **fields,
    }


def _write_config(folder: Path, models: list[dict], sample: int = SAMPLE, **extra) -> Path:
    config = folder / "rag_eval.yaml"
    settings = {
        "dataset": {"source": str(SHARED_HOTPOTQA), "sample_size": sample},
        "answer_models": models,
        **extra,
    }
    config.write_text(yaml.safe_dump(settings, sort_keys=False))
    return config


def _cli(capsys, config: Path, home: Path, *args: str) -> tuple[int, str, str]:
    return in_process(capsys, "--config", str(config), "--dagster-home", str(home), *args)


def _questions(n: int = SAMPLE) -> list[dict]:
    rows = [json.loads(line) for line in SHARED_HOTPOTQA.read_text().splitlines()[:n]]
    return [{"qid": r["id"], "question": r["question"]} for r in rows]


def _export(path: Path) -> None:
    """The answers the agent served, as a team exports them from its logs: its own column names,
    the contexts nested, a column no mapping reads."""
    with path.open("w") as out:
        for case in _questions():
            reply = agent_answer(case["question"])
            retrieved = [
                {"content": text, "source": title}
                for text, title in zip(reply["contexts"], reply["context_titles"])
            ]
            row = {"id": case["qid"], "user_query": case["question"], "response": reply["answer"]}
            out.write(json.dumps({**row, "retrieved": retrieved, "latency_ms": 12}) + "\n")


@pytest.fixture(scope="module")
def evaluated(agent, tmp_path_factory):
    """One run of every way to plug the agent in, over the same 12 questions."""
    folder = tmp_path_factory.mktemp("own-agent")
    _export(folder / "answers.jsonl")
    models = [
        _http("bot-http", agent),
        _http(
            "bot-text",
            agent,
            response={"answer": HTTP_RESPONSE["answer"], "contexts": HTTP_RESPONSE["contexts"]},
        ),
        _http("bot-blind", agent, response={"answer": HTTP_RESPONSE["answer"], "contexts": None}),
        {"name": "bot-python", "provider": "python", "target": "example_agent:answer", "version": "v1"},
        {"name": "bot-async", "provider": "python", "target": "example_agent:answer_async", "version": "v1"},
        {
            "name": "bot-file",
            "provider": "file",
            "path": str(folder / "answers.jsonl"),
            "columns": {
                "qid": "id",
                "question": "user_query",
                "answer": "response",
                "contexts": "retrieved[*].content",
                "context_titles": "retrieved[*].source",
            },
        },
    ]
    config = _write_config(folder, models)
    home = folder / "home"
    # the installed script in its own process, as a user runs it: the agent's module importable
    # from the environment, as the team's own package would be
    result = rag_eval(
        "--config",
        str(config),
        "--dagster-home",
        str(home),
        "run",
        cwd=folder,
        env={"PYTHONPATH": str(REPO_ROOT)},
    )
    assert result.returncode == 0, result.stderr
    instance = open_instance(str(home))
    return {"out": result.stdout, "instance": instance, "config": config, "home": home}


def _load(evaluated, asset: str, partition: str | None = None) -> pd.DataFrame:
    return load_asset(evaluated["instance"], asset, partition)


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_the_agents_own_contexts_are_stored_and_judged(evaluated):
    """What the agent returned, case by case, is what candidate_answers holds, and the reference
    retrieval metrics are those of its contexts (recomputed here from its reply)."""
    cases = _load(evaluated, "judgement_list").set_index("qid")
    answers = _load(evaluated, "candidate_answers", "bot-http").set_index("qid")
    scores = _load(evaluated, "judge_scores", "bot-http").set_index("qid")
    assert len(answers) == SAMPLE
    for qid, row in answers.iterrows():
        reply = agent_answer(row["question"])
        assert list(row["retrieved_passages"]) == reply["contexts"]
        assert row["answer"] == reply["answer"]
        gold, titles = list(cases.loc[qid, "gold_titles"]), reply["context_titles"]
        facts = [(f["title"], int(f["sent_id"])) for f in cases.loc[qid, "gold_facts"]]
        assert scores.loc[qid, "context_relevance"] == reference.context_relevance(titles, gold)
        assert scores.loc[qid, "context_recall"] == reference.context_recall(titles, facts)
        assert scores.loc[qid, "context_precision"] == reference.context_precision(titles, gold)
    # titles came back, and every one of them names a passage of the knowledge base or none
    hows = set(answers["context_match"].explode())
    assert hows <= {"title", "unmatched"} and "title" in hows
    assert (answers["retrieval_mode"] == "agent").all() and answers["top_k"].isna().all()


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_http_python_async_and_a_file_give_identical_scores(evaluated):
    def reference_scores(model: str) -> pd.DataFrame:
        scores = _load(evaluated, "judge_scores", model)
        return scores[scores["judge_id"] == "reference"].set_index("qid").sort_index()[REFERENCE_METRICS]

    http = reference_scores("bot-http")
    assert http["context_relevance"].notna().all() and http["f1"].gt(0).any()
    for model in ("bot-text", "bot-python", "bot-async", "bot-file"):
        pd.testing.assert_frame_equal(reference_scores(model), http, check_names=False, obj=model)
    # texts alone are matched to the same passages the titles named
    text = _load(evaluated, "candidate_answers", "bot-text")
    assert set(text["context_match"].explode()) <= {"text", "unmatched"}
    assert "| bot-file | reference | 12 | 0 |" in evaluated["out"]
    assert "bot-file: columns of" in evaluated["out"] and "no mapping reads: latency_ms" in evaluated["out"]


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_an_agent_that_returns_no_contexts_has_no_retrieval_metrics_rather_than_zero(evaluated):
    scores = _load(evaluated, "judge_scores", "bot-blind")
    for metric in ("context_relevance", "context_precision", "context_recall", "faithfulness_lexical"):
        assert scores[metric].isna().all(), metric
    assert scores["correctness"].notna().all()
    summary = _load(evaluated, "metric_summary", "bot-blind")
    overall = summary[(summary["group"] == "all") & (summary["metric"] == "context_relevance")]
    assert int(overall["n"].iloc[0]) == 0 and pd.isna(overall["mean"].iloc[0])
    answers = _load(evaluated, "candidate_answers", "bot-blind")
    assert not answers["contexts_known"].any()


@pytest.mark.slow  # five runs through the command line
def test_a_version_is_a_cache_and_a_new_version_asks_again(agent, tmp_path, capsys):
    config = _write_config(tmp_path, [_http("cached-bot", agent, version="2026-12-01")], sample=4)
    home = tmp_path / "home"
    sessions = [f"eval-{q['qid']}" for q in _questions(4)]

    def asked() -> int:
        return sum(agent.requests(s) for s in sessions)

    before = asked()
    assert _cli(capsys, config, home, "run", "--models", "cached-bot")[0] == 0
    assert asked() - before == 4
    assert _cli(capsys, config, home, "run", "--models", "cached-bot")[0] == 0
    assert asked() - before == 4  # the same version: every answer from the cache
    assert _cli(capsys, config, home, "run", "--models", "cached-bot", "--refresh")[0] == 0
    assert asked() - before == 8  # --refresh asks anyway
    config = _write_config(tmp_path, [_http("cached-bot", agent, version="2026-12-02")], sample=4)
    code, out, _ = _cli(capsys, config, home, "run", "--models", "cached-bot")
    assert code == 0 and asked() - before == 12  # a new build is asked again
    # without a version: said once, and every run asks
    config = _write_config(tmp_path, [_http("cached-bot", agent, version=None)], sample=4)
    code, out, _ = _cli(capsys, config, home, "run", "--models", "cached-bot")
    assert code == 0 and "note: agent cached-bot has no version: its answers are not cached" in out
    assert asked() - before == 16


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_faults_of_an_http_agent_cost_only_their_case(agent, tmp_path, capsys):
    """429 with Retry-After (retried, answered), 500 twice, a hang past the timeout twice, HTML
    instead of JSON, a JSON reply without the answer: each case recorded as what happened, the
    others answered and judged."""
    questions = _questions(10)
    session = {
        name: f"eval-{questions[i]['qid']}"
        for i, name in enumerate(["rate", "error", "hang", "html", "empty"])
    }
    agent.fail(
        {
            session["rate"]: ["429"],
            session["error"]: ["500", "500"],
            session["hang"]: ["hang", "hang"],
            session["html"]: ["html"],
            session["empty"]: ["no_answer"],
        }
    )
    config = _write_config(
        tmp_path, [_http("faulty-bot", agent, version="f1", timeout_s=2, max_retries=1)], sample=10
    )
    asked_before = agent.requests(session["rate"])
    home = tmp_path / "home"
    code, out, err = _cli(capsys, config, home, "run", "--models", "faulty-bot")
    assert code == 0, err
    answers = load_asset(open_instance(str(home)), "candidate_answers", "faulty-bot").set_index("qid")
    by = {name: answers.loc[s.removeprefix("eval-")] for name, s in session.items()}
    assert (
        by["rate"]["status"] == "ok" and agent.requests(session["rate"]) - asked_before == 2
    )  # waited, asked again
    assert by["error"]["error"] == 'AgentCallError: HTTP 500: {"error": "internal error"} (after 2 attempts)'
    assert by["hang"]["error"] == "AgentCallError: no response within 2 s (after 2 attempts)"
    assert by["html"]["error"].startswith(
        "AgentCallError: the response is not JSON (text/html): <html><body>"
    )
    assert by["empty"]["error"] == (
        "UnreadableReplyError: response mapping: answer path $.data.reply.text found nothing in the response"
    )
    assert (answers["status"] == "ok").sum() == 6
    scores = load_asset(open_instance(str(home)), "judge_scores", "faulty-bot")
    assert (scores["status"] == "answer_failed").sum() == 4 and scores["correctness"].notna().sum() == 6
    assert "| faulty-bot | reference | 10 | 4 |" in out
    # an unreadable reply is not cached: the re-run asks that case again, and only the failed ones
    before = agent.requests()
    assert _cli(capsys, config, home, "run", "--models", "faulty-bot")[0] == 0
    assert agent.requests() - before == 4


def test_an_agent_that_refuses_the_token_stops_at_its_first_calls(tmp_path, capsys):
    with agent_service() as locked:
        locked.fail({"*": ["401"] * 100})
        config = _write_config(tmp_path, [_http("locked-bot", locked, concurrency=2)], sample=10)
        code, _, err = _cli(capsys, config, tmp_path / "home", "run", "--models", "locked-bot")
        assert code == 1
        assert "locked-bot failed: agent locked-bot: HTTP 401 from" in err
        assert locked.requests() <= 2  # the calls already in flight, no more


def test_agents_check_shows_what_each_path_finds(agent, tmp_path, capsys):
    _export(tmp_path / "answers.jsonl")
    models = [
        _http("bot", agent),
        _http("typo-bot", agent, response={**HTTP_RESPONSE, "answer": "$.data.reply.txt"}),
        {"name": "py-bot", "provider": "python", "target": "example_agent:answer"},
        {
            "name": "file-bot",
            "provider": "file",
            "path": str(tmp_path / "answers.jsonl"),
            "columns": {"qid": "id", "answer": "response", "contexts": "retrieved[*].content"},
        },
        {"name": "oracle-entry", "provider": "offline", "model": "oracle"},
    ]
    config = _write_config(tmp_path, models)
    home = tmp_path / "home"
    question = "Who portrayed Corliss Archer in the film Kiss and Tell?"
    code, out, _ = _cli(capsys, config, home, "agents", "check", "bot", "--question", question)
    assert code == 0
    assert f"request: POST {agent.url}" in out and '"session": "eval-check"' in out
    assert "response: HTTP 200 (application/json)" in out
    assert "  answer          $.data.reply.text  ->  'Kiss and Tell is a 1945" in out
    assert "  context_titles  $.data.retrieval.documents[*].doc.title  ->  ['" in out
    assert "reply: answer 'Kiss and Tell is a 1945" in out and "; 3 contexts" in out
    code, out, _ = _cli(capsys, config, home, "agents", "check", "typo-bot", "--question", question)
    assert code == 1
    assert "answer          $.data.reply.txt  ->  (nothing found)" in out
    assert "MISSING: response mapping: answer path $.data.reply.txt found nothing in the response" in out
    code, out, _ = _cli(capsys, config, home, "agents", "check", "py-bot")  # the dataset's first question
    assert code == 0 and "call: example_agent:answer('What government position" in out and "returned:" in out
    code, out, _ = _cli(capsys, config, home, "agents", "check", "file-bot")
    assert code == 0 and "12 rows" in out and "columns no mapping reads: latency_ms, user_query" in out
    code, _, err = _cli(capsys, config, home, "agents", "check", "oracle-entry")
    assert (
        code == 2
        and err.strip()
        == "error: oracle-entry is a offline model, not an agent (provider http, python or file)"
    )
    code, out, _ = _cli(capsys, config, home, "agents", "list")
    assert (
        code == 0
        and f"bot  http  {agent.url}  version v1" in out
        and "py-bot  python  example_agent:answer" in out
    )


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        (
            {"name": "a", "provider": "http", "url": "http://127.0.0.1:9/chat", "timeout": 3},
            "answer_models.0.timeout: unknown key (did you mean 'timeout_s'?)",
        ),
        (
            {"name": "a", "provider": "http", "url": "htp:/nowhere"},
            "answer_models.0.url: url 'htp:/nowhere' is not an http(s) URL with a host",
        ),
        (
            {
                "name": "a",
                "provider": "http",
                "url": "http://127.0.0.1:9/chat",
                "response": {"answer": "$.data[?("},
            },
            "answer_models.0.response.answer: JSONPath '$.data[?(' does not compile",
        ),
        (
            {"name": "a", "provider": "python", "target": "no_such_module.rag:answer"},
            "agent a: target no_such_module.rag:answer: cannot import no_such_module.rag (ModuleNotFound",
        ),
        (
            {
                "name": "a",
                "provider": "http",
                "url": "http://127.0.0.1:9/chat",
                "headers_env": {"Authorization": "BOT_TOKEN_UNSET"},
            },
            "agent a needs BOT_TOKEN_UNSET (for its Authorization header): export it",
        ),
        (
            {"name": "a", "provider": "file", "path": "missing-answers.jsonl"},
            "answers file of a not found: missing-answers.jsonl",
        ),
    ],
    ids=["unknown-field", "url", "jsonpath", "target", "header-variable", "file"],
)
def test_a_bad_agent_entry_is_one_line_before_any_work(tmp_path, capsys, monkeypatch, entry, said):
    monkeypatch.delenv("BOT_TOKEN_UNSET", raising=False)
    monkeypatch.chdir(tmp_path)
    config = _write_config(tmp_path, [entry])
    home = tmp_path / "home"
    code, _, err = _cli(capsys, config, home, "run", "--models", "a")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: ") and said in err, err
    assert not (home / "storage" / "artifacts").exists()  # nothing ran


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_repeats_measure_the_agents_own_variability(tmp_path, capsys, monkeypatch_module):
    """Asked three times, the flaky agent answers, abstains, answers: every case varies, and
    each question is still one case for the intervals and the paired tests."""
    monkeypatch_module.setenv("EXAMPLE_AGENT_DATA", str(SHARED_HOTPOTQA))
    monkeypatch_module.setenv("FLAKY_AGENT_STATE", str(tmp_path / "flaky-calls.json"))
    models = [
        {
            "name": "flaky",
            "provider": "python",
            "target": "rag_eval_pipeline_tests.agents.flaky_agent:answer",
            "repeats": 3,
        }
    ]
    config = _write_config(tmp_path, models, sample=10)
    home = tmp_path / "home"
    code, out, err = _cli(capsys, config, home, "run", "--models", "flaky,oracle")
    assert code == 0, err
    instance = open_instance(str(home))
    answers = load_asset(instance, "candidate_answers", "flaky")
    assert len(answers) == 30 and sorted(answers["repeat"].unique()) == [0, 1, 2]
    summary = load_asset(instance, "metric_summary", "flaky")
    overall = summary[(summary["group"] == "all") & (summary["judge_id"] == "reference")].set_index("metric")
    # a question the steady agent already declines varies in nothing; every other one varies
    answering = [
        not reference.DEFAULT_ABSTENTION.matches(agent_answer(q["question"])["answer"])
        for q in _questions(10)
    ]
    assert overall.loc["answer_variability", "mean"] == pytest.approx(sum(answering) / 10)
    assert overall.loc["answer_variability", "n"] == 10 and sum(answering) >= 8
    assert overall.loc["answer_rate", "mean"] == pytest.approx(sum(answering) * 2 / 3 / 10)
    assert overall.loc["answer_rate", "n"] == 10 and overall.loc["error_rate", "mean"] == 0.0
    assert "| flaky | oracle | reference | 10 |" in out  # paired on the 10 questions, not 30 answers
