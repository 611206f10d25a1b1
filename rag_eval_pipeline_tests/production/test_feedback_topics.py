"""Users' feedback per topic: the day's interactions grouped as knowledge-base health groups
questions, each topic with its feedback rate, mean and thumbs-down rate, ranked by thumbs-down;
through the pure function and through `rag-eval production feedback --format json`."""

import json

import pandas as pd
import pytest
import yaml

from rag_eval_pipeline.production.feedback import feedback_by_topic
from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.production import LOG_COLUMNS, write_day

DAY = "2026-11-28"
BILLING = [
    "Why was my invoice charged twice on my credit card?",
    "How do I get a refund for a duplicate invoice charge?",
    "My credit card invoice shows a wrong charge, refund please",
    "When is the invoice charge taken from my credit card?",
    "Can I get a refund of the invoice charge on my card?",
    "Why is my invoice charge higher than the price?",
]
SHIPPING = [
    "When will my parcel delivery arrive by courier?",
    "How do I track the courier delivery of my parcel?",
    "My parcel delivery by courier is late, where is it?",
    "Can the courier leave my parcel delivery at the door?",
    "How long does parcel delivery by courier take abroad?",
    "Which courier handles the delivery of my parcel?",
]
# billing: 4 thumbs-down and 1 up of 5 given; shipping: 1 down and 3 up of 4 given
FEEDBACK = [False, False, False, False, True, None, True, True, True, False, None, None]


def _frame() -> pd.DataFrame:
    questions = BILLING + SHIPPING
    return pd.DataFrame(
        {
            "interaction_id": [f"i{n}" for n in range(len(questions))],
            "question": questions,
            "feedback": [None if f is None else float(f) for f in FEEDBACK],
        }
    )


def _billing_first(table) -> None:
    top = table[0] if isinstance(table, list) else table.iloc[0].to_dict()
    assert set(top["representatives"]) <= set(BILLING) and len(top["representatives"]) == 3
    assert (top["size"], top["with_feedback"], top["negative"]) == (6, 5, 4)
    assert top["thumbs_down_rate"] == pytest.approx(0.8) and top["user_feedback"] == pytest.approx(0.2)
    assert top["ci_low"] < 0.8 < top["ci_high"] and top["feedback_rate"] == pytest.approx(5 / 6)
    other = table[1] if isinstance(table, list) else table.iloc[1].to_dict()
    assert (other["size"], other["with_feedback"], other["negative"]) == (6, 4, 1)
    assert set(other["representatives"]) <= set(SHIPPING)


def test_the_topic_users_dislike_most_ranks_first_with_its_counts():
    table = feedback_by_topic(_frame(), negative_below=0.5)
    assert len(table) == 2
    _billing_first(table)
    again = feedback_by_topic(_frame().sample(frac=1, random_state=3), negative_below=0.5)
    assert again["topic"].tolist() == table["topic"].tolist()  # stable ids, whatever the order read


def test_no_question_no_topic():
    empty = pd.DataFrame({"interaction_id": [], "question": [], "feedback": []})
    assert feedback_by_topic(empty, 0.5).empty


def test_the_cli_shows_feedback_per_topic(tmp_path, capsys):
    rows = [
        {
            "request": {"query": q},
            "reply": {"text": "an answer"},
            "retrieved": [{"doc": {"id": "kb-1", "title": "t", "content": "c"}}],
            "ts": f"{DAY}T10:{n:02d}:00Z",
            "build": "v1",
            "trace": f"trace-{n}",
            **({} if FEEDBACK[n] is None else {"feedback": FEEDBACK[n]}),
        }
        for n, q in enumerate(BILLING + SHIPPING)
    ]
    write_day(tmp_path / "logs", DAY, rows)
    production = {
        "sources": [{"kind": "logs", "path": "logs", "columns": LOG_COLUMNS}],
        "start_date": "2026-11-01",
        "feedback": {"sources": [{"kind": "field"}]},
    }
    config = tmp_path / "rag_eval.yaml"
    config.write_text(yaml.safe_dump({"production": production}))
    args = ["--dagster-home", str(tmp_path / "home"), "--config", str(config)]
    code, out, err = in_process(capsys, *args, "production", "feedback", "--day", DAY, "--format", "json")
    assert code == 0, err
    read = json.loads(out)
    assert (read["interactions"], read["with_feedback"], read["negative"]) == (12, 9, 5)
    _billing_first(read["by_topic"])
    code, out, err = in_process(capsys, *args, "production", "feedback", "--day", DAY)
    assert "feedback per topic" in out and "invoice" in out
