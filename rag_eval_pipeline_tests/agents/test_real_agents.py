"""Agents that answer the way real ones do, through `rag-eval run`: right answers in sentences
are credited and wrong ones refused (on a labelled set the tests build); failed calls count
apart from declines and fail the gate; every documented subset of a reply is read; a callable
that never returns ends at its deadline; the knowledge base's titles are listed and a
judgement list that names a missing one is refused before any work."""

import json
from pathlib import Path

import pytest
import yaml

from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline_tests.agents import sentence_agent
from rag_eval_pipeline_tests.support import REPO_ROOT, SHARED_HOTPOTQA
from rag_eval_pipeline_tests.support.agent import HTTP_BODY, HTTP_RESPONSE, agent_service
from rag_eval_pipeline_tests.support.answer_forms import labelled_answers
from rag_eval_pipeline_tests.support.cli import in_process, rag_eval
from rag_eval_pipeline_tests.support.processes import free_port

pytestmark = pytest.mark.slow  # whole runs of real agents: CI runs them
SAMPLE = 24
SUBSETS = ("answer_only", "with_contexts", "with_titles", "with_ids")


def _config(folder: Path, models: list[dict], sample: int = SAMPLE, **extra) -> Path:
    config = folder / "rag_eval.yaml"
    settings = {"dataset": {"source": str(SHARED_HOTPOTQA), "sample_size": sample}, "answer_models": models}
    config.write_text(yaml.safe_dump({**settings, **extra}, sort_keys=False))
    return config


@pytest.fixture(scope="module")
def labelled_sample(tmp_path_factory):
    """One labelled answer per question of the sample, right and wrong in turn, in every form."""
    folder = tmp_path_factory.mktemp("sentences")
    rows = [json.loads(line) for line in SHARED_HOTPOTQA.read_text().splitlines()[:SAMPLE]]
    forms = labelled_answers(SHARED_HOTPOTQA, questions=SAMPLE, seed=11)
    chosen = {}
    for number, row in enumerate(rows):
        mine = [a for a in forms if a.qid == row["id"] and a.truth == row["answer"]]
        wanted = [a for a in mine if a.right == (number % 2 == 0)] or mine
        if wanted:
            chosen[row["question"]] = wanted[number % len(wanted)]
    path = folder / "forms.json"
    path.write_text(json.dumps({q: a.answer for q, a in chosen.items()}))
    return folder, path, chosen


def test_sentence_answers_are_credited_and_wrong_ones_refused_over_http_and_python(
    labelled_sample, monkeypatch
):
    folder, forms, chosen = labelled_sample
    monkeypatch.setenv("EXAMPLE_AGENT_DATA", str(SHARED_HOTPOTQA))
    monkeypatch.setenv("SENTENCE_AGENT_FORMS", str(forms))
    port = free_port()
    server = sentence_agent.serve(port)
    try:
        http = {
            "name": "forms-http",
            "provider": "http",
            "url": f"http://127.0.0.1:{port}/",
            "body": {"input": {"text": "{question}"}},
            "response": {
                "answer": "$.output.message.content",
                "contexts": "$.trace.retrieval.hits[*].page.text",
                "context_titles": "$.trace.retrieval.hits[*].page.name",
            },
        }
        python = {
            "name": "forms-py",
            "provider": "python",
            "target": "rag_eval_pipeline_tests.agents.sentence_agent:with_titles",
        }
        config = _config(folder, [http, python])
        result = rag_eval(
            "--config",
            str(config),
            "--dagster-home",
            str(folder / "home"),
            "run",
            cwd=folder,
            env={"PYTHONPATH": str(REPO_ROOT)},
        )
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    instance = open_instance(str(folder / "home"))
    questions = {c["question"]: c for c in load_asset(instance, "judgement_list").to_dict("records")}
    for model in ("forms-http", "forms-py"):
        scores = load_asset(instance, "judge_scores", model)
        scores = scores[scores["judge_id"] == "reference"].set_index("qid")
        checked = 0
        for question, labelled in chosen.items():
            correctness = scores.loc[questions[question]["qid"], "correctness"]
            assert (correctness == 1.0) == labelled.right, (
                model,
                labelled.form,
                labelled.answer,
                correctness,
            )
            checked += 1
        assert checked == SAMPLE and sum(a.right for a in chosen.values()) >= SAMPLE // 3


def test_failures_are_counted_apart_from_declines_and_fail_the_gate(tmp_path, monkeypatch):
    monkeypatch.setenv("EXAMPLE_AGENT_DATA", str(SHARED_HOTPOTQA))
    with agent_service() as agent:
        rows = [json.loads(line) for line in SHARED_HOTPOTQA.read_text().splitlines()[:12]]
        agent.fail({f"eval-{r['id']}": ["500", "500", "500"] for r in rows[:5]})  # 5 of 12 fail every attempt
        bot = {
            "name": "bot",
            "provider": "http",
            "url": agent.url,
            "body": HTTP_BODY,
            "response": HTTP_RESPONSE,
            "max_retries": 2,
        }
        config = _config(tmp_path, [bot], sample=12)
        home = ["--config", str(config), "--dagster-home", str(tmp_path / "home")]
        result = rag_eval(*home, "run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "warning: 5 of 12 answer calls of bot failed" in result.stdout
    assert 'HTTP 500: {"error": "internal error"} (5)' in result.stdout  # the reason, with its count
    summary = load_asset(open_instance(str(tmp_path / "home")), "metric_summary", "bot")
    overall = summary[(summary["group"] == "all") & (summary["judge_id"] == "reference")].set_index("metric")
    assert overall.loc["error_rate", "mean"] == pytest.approx(5 / 12) and overall.loc["error_rate", "n"] == 12
    assert overall.loc["answer_rate", "n"] == 7  # over the cases that got a reply, not 12
    gate = rag_eval(*home, "gate", "--model", "bot", "--min", "f1=0", "--min-n", "1")
    assert (
        gate.returncode == 1 and "error_rate" in gate.stdout and "of the answer calls failed" in gate.stdout
    )
    allowed = rag_eval(
        *home, "gate", "--model", "bot", "--min", "f1=0", "--min-n", "1", "--max-error-rate", "0.5"
    )
    assert allowed.returncode == 0, allowed.stdout


def test_every_documented_subset_of_a_reply_is_read_and_a_hung_callable_ends_at_its_deadline(
    labelled_sample, tmp_path, monkeypatch
):
    _, forms, chosen = labelled_sample
    hung = next(iter(chosen))
    answers = {**json.loads(forms.read_text()), hung: sentence_agent.HANG}
    (tmp_path / "forms.json").write_text(json.dumps(answers))
    monkeypatch.setenv("EXAMPLE_AGENT_DATA", str(SHARED_HOTPOTQA))
    monkeypatch.setenv("SENTENCE_AGENT_FORMS", str(tmp_path / "forms.json"))
    target = "rag_eval_pipeline_tests.agents.sentence_agent:{}"
    models = [
        {"name": s.replace("_", "-"), "provider": "python", "target": target.format(s)} for s in SUBSETS
    ]
    models.append(
        {
            "name": "hangs",
            "provider": "python",
            "target": target.format("hangs"),
            "timeout_s": 3,
            "max_retries": 0,
        }
    )
    config = _config(tmp_path, models, sample=6)
    result = rag_eval(
        "--config",
        str(config),
        "--dagster-home",
        str(tmp_path / "home"),
        "run",
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO_ROOT)},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    instance = open_instance(str(tmp_path / "home"))
    matched = {}
    for subset in SUBSETS:
        answers_table = load_asset(instance, "candidate_answers", subset.replace("_", "-"))
        assert (answers_table["status"] == "ok").all(), answers_table[["status", "error"]]
        matched[subset] = {how for hows in answers_table["context_match"] for how in hows}
        summary = load_asset(instance, "metric_summary", subset.replace("_", "-"))
        relevance = summary[(summary["group"] == "all") & (summary["metric"] == "context_relevance")]
        if subset == "answer_only":  # no contexts: absent, not 0
            assert relevance.empty or relevance["n"].iloc[0] == 0
        else:
            assert relevance["n"].iloc[0] == 6
    assert matched["answer_only"] == set()
    assert (
        matched["with_ids"] <= {"id", "text", "within_passage", "contains_passage", "unmatched"}
        and "id" in matched["with_ids"]
    )
    assert "title" in matched["with_titles"] and matched["with_contexts"] <= {
        "text",
        "within_passage",
        "contains_passage",
        "unmatched",
    }
    hanging = load_asset(instance, "candidate_answers", "hangs").set_index("question")
    assert hanging.loc[hung, "status"] == "failed" and "no answer within 3 s" in hanging.loc[hung, "error"]
    assert (hanging.drop(index=hung)["status"] == "ok").all()


def test_titles_are_listed_and_a_missing_relevant_title_is_refused_before_any_work(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "handbook.md").write_text("# Office hours\nThe office opens at nine.\n")
    (docs / "refunds.md").write_text("# Refund policy\nRefunds take ten days.\n")
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        json.dumps(
            {"question": "When does the office open?", "answer": "nine", "relevant_titles": ["handbook"]}
        )
        + "\n"
        + json.dumps(
            {
                "question": "How long do refunds take?",
                "answer": "ten days",
                "relevant_titles": ["Refund rules"],
            }
        )
        + "\n"
    )
    config = tmp_path / "rag_eval.yaml"
    config.write_text(
        yaml.safe_dump({"dataset": {"kind": "custom", "questions": str(questions), "documents": str(docs)}})
    )
    args = ["--config", str(config), "--dagster-home", str(tmp_path / "home")]
    code, out, err = in_process(capsys, *args, "titles", "--filter", "ref")
    assert (
        code == 0 and out.splitlines()[0].startswith("refunds\t") and "(1 of 1 titles matching 'ref'" in out
    )
    code, out, err = in_process(capsys, *args, "run")
    assert code == 2 and "line 2: relevant title 'Refund rules' is not in the knowledge base" in err
    assert "`rag-eval titles` lists the knowledge base's titles" in err
    assert not (tmp_path / "home" / "storage" / "kb_index").exists()  # refused before the index was built
