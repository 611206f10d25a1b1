"""`rag-eval kb health` and the health gates, end to end: a custom knowledge base with dated,
superseded and expired documents, questions without relevance labels, one of them answered by
no document, evaluated by `rag-eval run`."""

import json

import dagster as dg
import pytest
import yaml

from rag_eval_pipeline import cli
from rag_eval_pipeline_tests.support.production import production_config, write_day
from stand_ins.anthropic_api import FakeAnthropic

DOCUMENTS = [
    {
        "id": "refund-2023",
        "title": "Refund policy 2023",
        "updated_at": "2023-01-01",
        "passage": "Refunds are paid within 21 days of the return.",
    },
    {
        "id": "refund-2025",
        "title": "Refund policy 2025",
        "updated_at": "2025-01-01",
        "supersedes": "refund-2023",
        "passage": "Refunds are paid within 14 days of the return.",
    },
    {
        "id": "shipping",
        "title": "Shipping",
        "passage": "We ship to 40 countries. Orders to Peru take 9 days.",
    },
    {"id": "history", "title": "Company history", "passage": "Acme Tools was founded in 1987 in Lyon."},
    {
        "id": "promo",
        "title": "Winter promotion",
        "valid_until": "2024-02-28",
        "passage": "The code WINTER gives 15 percent off every drill.",
    },
    {"id": "hours", "title": "Support hours", "passage": "Support answers from 8 am to 6 pm on weekdays."},
]
QUESTIONS = [
    {"id": "refund", "question": "How many days until refunds are paid?", "answer": "14 days"},
    {"id": "peru", "question": "How long do orders to Peru take?", "answer": "9 days"},
    {"id": "founded", "question": "When was Acme Tools founded?", "answer": "1987"},
    {"id": "ceo", "question": "Who is the chief executive of Acme Tools?", "answer": "Marie Curie Dupont"},
    {"id": "warranty", "question": "How long is the warranty on a cordless drill?", "answer": "5 years"},
    # no reference yet: the sufficiency judge (the tests' Messages-API server) decides
    {
        "id": "battery",
        "question": "How long does a drill battery last?",
        "answer": "",
        "reference_pending": True,
    },
]
JUDGE = "sufficiency:claude-sonnet-4-6"


def _sufficiency(request):
    """The tests' sufficiency judge: the passages suffice unless the question is about batteries."""
    from stand_ins.anthropic_api import _tag, tool_reply

    question = _tag(request["messages"][0]["content"], "question")
    if "battery" in question:
        return tool_reply(request, {"sufficient": False, "reason": "no passage mentions batteries"})
    return tool_reply(request, {"sufficient": True, "reason": "a passage states it"})


PRODUCTION = [
    {"question": "How long do orders to Peru take?"},
    {"question": "Can I pay an invoice with a credit card?"},
    {"question": "Which credit cards do you take for invoices?"},
    {"question": "Is paying invoices by credit card possible?"},
]


DAY = "2026-11-28"


def _logged(question: str, n: int) -> dict:
    """One interaction of the agent's logs (support.production's shape)."""
    return {
        "request": {"query": question},
        "reply": {"text": "Orders to Peru take 9 days."},
        "retrieved": [
            {"doc": {"id": "doc_shipping", "title": "Shipping", "content": DOCUMENTS[2]["passage"]}}
        ],
        "ts": f"{DAY}T09:{n:02d}:00Z",
        "build": "v1",
        "trace": f"trace-{n}",
    }


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("kb")
    (root / "docs").mkdir()
    (root / "docs" / "kb.jsonl").write_text(
        "".join(json.dumps({**d, "language": "en"}) + "\n" for d in DOCUMENTS)
    )
    (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    (root / "production.jsonl").write_text("".join(json.dumps(q) + "\n" for q in PRODUCTION))
    # the same questions as the agent's logs of one day: the daily production sample
    write_day(root / "logs", DAY, [_logged(q["question"], n) for n, q in enumerate(PRODUCTION)])
    production = production_config(
        root / "logs", judges=["reference"], thresholds={"faithfulness_lexical": 0.0}
    )
    (root / "rag_eval.yaml").write_text(
        "dataset:\n  kind: custom\n  questions: questions.jsonl\n  documents: docs\n  language: en\n"
        "  sample_size: null\nanswer_models:\n"
        "  - {name: baseline, provider: offline, model: extractive-baseline, top_k: 2}\n"
        f"judges: [reference, '{JUDGE}']\n"
        + yaml.safe_dump({"production": production, "statistics": {"min_cases": 4}})
    )
    args = ["--dagster-home", str(root / "home"), "--config", str(root / "rag_eval.yaml")]
    with FakeAnthropic(responder=_sufficiency) as server, pytest.MonkeyPatch.context() as env:
        env.setenv("ANTHROPIC_API_KEY", "test-key")
        env.setenv("ANTHROPIC_BASE_URL", server.url)
        assert cli.main([*args, "production", "run"]) == 0
        assert cli.main([*args, "run"]) == 0
        assert {(r.get("tool_choice") or {}).get("name") for r in server.requests} == {"record_sufficiency"}
    return root, args


def _health(project, capsys, *extra):
    root, args = project
    capsys.readouterr()
    assert cli.main([*args, "kb", "health", "--format", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow  # a whole run (CI runs it)
def test_kb_health_names_the_gap_the_old_documents_and_the_topics(project, capsys):
    record = _health(project, capsys, "--as-of", "2025-06-01")
    labels = {c["qid"]: c["label"] for c in record["cases"]}
    assert labels["ceo"] == "knowledge_gap" and labels["warranty"] == "knowledge_gap"
    battery = next(c for c in record["cases"] if c["qid"] == "battery")
    assert battery["label"] == "knowledge_gap" and "no passage mentions batteries" in battery["reason"]
    assert labels["peru"] in {"covered", "retrieval_miss"} and labels["founded"] != "knowledge_gap"
    status = {d["document"]: d["status"] for d in record["documents"]}
    assert {d for d, s in status.items() if s != "current"} == {"doc_refund-2023", "doc_promo"}
    assert record["rates"]["knowledge_gap_rate"] == pytest.approx(0.5)
    assert record["topics"] and all(t["finding"] for t in record["topics"])
    gap_topics = [t for t in record["topics"] if "ceo" in t["qids"]]
    assert gap_topics and gap_topics[0]["shares"].get("knowledge_gap", 0) > 0
    # the same data and parameters give the same topic ids
    assert [t["topic"] for t in _health(project, capsys, "--as-of", "2025-06-01")["topics"]] == [
        t["topic"] for t in record["topics"]
    ]


@pytest.mark.slow
def test_the_stored_asset_and_the_text_output(project, capsys):
    root, args = project
    record = _health(project, capsys)  # the stored kb_health of the run (as of today)
    assert record["answer_model"] == "baseline" and {"cases", "documents", "topics"} <= set(record)
    assert cli.main([*args, "kb", "health"]) == 0
    out = capsys.readouterr().out
    assert "knowledge_gap_rate 0.500" in out and "doc_promo" in out
    report = (root / "home" / "storage" / "artifacts" / "eval_report.html").read_text()
    section = report.split('<section id="knowledge-base">', 1)[1].split("</section>", 1)[0]
    assert "<h3>baseline</h3>" in section and "doc_promo" in section and "knowledge gap 50%" in section


@pytest.mark.slow
def test_gates_on_the_gap_rate_and_stale_retrieval(project, capsys):
    root, args = project
    gate = [*args, "gate", "--model", "baseline", "--min-n", "6"]  # six cases
    assert cli.main([*gate, "--max", "knowledge_gap_rate=0.1"]) == 1
    assert "| knowledge_gap_rate | all | kb_health | 0.500" in capsys.readouterr().out
    assert cli.main([*gate, "--max", "knowledge_gap_rate=0.9"]) == 0
    # the refund question retrieves the superseded policy beside the current one
    assert cli.main([*gate, "--max", "stale_retrieval_rate=0"]) == 1
    assert "stale_retrieval_rate | all | kb_health" in capsys.readouterr().out


@pytest.mark.slow
def test_production_questions_show_the_blind_spot_and_what_to_promote(project, capsys):
    root, _ = project
    record = _health(project, capsys, "--production", str(root / "production.jsonl"))
    traffic = record["traffic"]
    assert 0 < traffic["divergence"] <= 1
    proposed = {p["question"] for p in traffic["proposals"]}
    assert proposed and all("credit card" in q for q in proposed)


@pytest.mark.slow
def test_the_daily_production_sample_is_compared_and_its_blind_spots_promoted(project, capsys, tmp_path):
    root, args = project
    traffic = _health(project, capsys)["traffic"]  # the stored kb_health: no file given
    assert traffic["source"].startswith(f"the daily production samples of {DAY} (1 day(s), 4 questions")
    assert 0 < traffic["divergence"] <= 1
    proposed = {p["question"] for p in traffic["proposals"]}
    assert proposed and all("credit card" in q for q in proposed)
    with dg.DagsterInstance.from_config(str(root / "home")) as instance:  # the asset's pane says it
        event = instance.get_latest_materialization_event(dg.AssetKey("kb_health"))
    pane = event.asset_materialization.metadata
    assert pane["traffic_divergence"].value == pytest.approx(traffic["divergence"])
    assert pane["blind_spots"].value >= 1 and pane["production"].value == traffic["source"]
    out = tmp_path / "blind.jsonl"
    promote = [*args, "production", "promote", "--blind-spots", "--out", str(out)]
    assert cli.main(promote) == 0
    assert "promoted" in capsys.readouterr().out
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["question"] for r in rows} == proposed
    assert all(r["reference_pending"] and r["tags"][1].startswith("blind-spot:t-") for r in rows)
    assert cli.main(promote) == 0  # promoted again: nothing added, the list's version unchanged
    assert f"no new blind-spot question ({len(rows)} already in" in capsys.readouterr().out
    assert len(out.read_text().splitlines()) == len(rows)
    assert cli.main([*promote, "--day", DAY]) == 2
    assert capsys.readouterr().err.startswith("error: --day does not apply to --blind-spots")


@pytest.mark.slow
def test_a_bad_as_of_day_is_one_error_line(project, capsys):
    root, args = project
    assert cli.main([*args, "kb", "health", "--as-of", "soon"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --as-of") and "Traceback" not in err


def test_every_command_of_the_health_page_parses():
    """The page's commands (written `rag-eval ...`, outside the README's ordered walk-through)."""
    from rag_eval_pipeline_tests.support.docs import DOCS, commands

    found = commands((DOCS / "knowledge-base-health.md").read_text(), ("rag-eval ",))
    assert len(found) >= 5 and {"kb", "gate"} <= {words[1] for words in found}
    parser = cli.build_parser()
    for words in found:
        parser.parse_args(words[1:])
