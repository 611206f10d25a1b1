"""What a run says, said once and worth following: a retrieval warning that concerns several
models is one line naming them, and a hint never suggests what the next command refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.languages import write_project

DOCUMENTS = {
    "Refund policy.md": "Refunds are paid within 14 days of the return. Store credit is issued at once.",
    "Shipping.md": "We ship to 40 countries. Orders to Peru take 9 days by courier.",
    "Company history.md": "Acme Tools was founded in 1987 by Ada Lovelace Smith in Lyon.",
}
# Chinese questions over English documents: not one term in common, so retrieval is blind
QUESTIONS = [
    {"question": "退款需要多少天？", "answer": "14天", "relevant_titles": ["Refund policy"]},
    {"question": "寄往秘鲁的订单需要多久？", "answer": "9天", "relevant_titles": ["Shipping"]},
    {"question": "谁创立了这家公司？", "answer": "史密斯", "relevant_titles": ["Company history"]},
]


def _blind_project(folder: Path) -> Path:
    (folder / "docs").mkdir(parents=True)
    for name, text in DOCUMENTS.items():
        (folder / "docs" / name).write_text(text, encoding="utf-8")
    rows = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS)
    (folder / "questions.jsonl").write_text(rows, encoding="utf-8")
    config = folder / "rag_eval.yaml"
    config.write_text(
        "dataset: {kind: custom, questions: questions.jsonl, documents: docs, sample_size: 0}\n"
        "answer_models:\n"
        "  - {name: oracle, provider: offline, model: oracle}\n"
        "  - {name: extractive-baseline, provider: offline, model: extractive-baseline}\n"
        "judges: [reference]\n",
        encoding="utf-8",
    )
    return config


@pytest.mark.slow  # a run of two models of its own (about 12 s)
def test_a_retrieval_warning_is_said_once_naming_its_models(tmp_path, capsys):
    config = _blind_project(tmp_path)
    code, out, err = in_process(capsys, "--config", str(config), "--dagster-home", str(tmp_path / "h"), "run")
    assert code == 0, err
    lines = (out + err).splitlines()
    for start in (
        "warning: retrieval found no passage for 3 of 3",
        "warning: context_recall is 0 on every one",
    ):
        said = [line for line in lines if line.startswith(start)]
        assert len(said) == 1, (start, lines)
        assert said[0].endswith("(models: oracle, extractive-baseline)"), said[0]
    assert not [
        line for line in lines if "retrieval found no passage" in line and not line.startswith(start[:9])
    ]


def test_a_hint_never_suggests_what_the_next_command_refuses(tmp_path, capsys):
    """Over a Chinese knowledge base a semantic mode without vectors is refused with the remedy
    that works there (bm25, two_hop or a multilingual model), not with MiniLM, which the next
    command would refuse; over English documents MiniLM is the remedy."""
    config = write_project(tmp_path / "zh", ["zh"])
    home = ["--dagster-home", str(tmp_path / "h")]
    code, _, err = in_process(capsys, "--config", str(config), *home, "run", "--models", "oracle@hybrid-k4")
    assert code == 2 and len(err.splitlines()) == 1
    assert "pass --embedding-model minilm" not in err and "Use bm25 or two_hop" in err
    hybrid = ["run", "--models", "oracle@hybrid-k4"]
    code, _, err = in_process(capsys, "--config", str(config), *home, *hybrid, "--embedding-model", "minilm")
    assert code == 2 and "reads English only" in err  # what the first hint would have led to
    english = _blind_project(tmp_path / "en")
    code, _, err = in_process(capsys, "--config", str(english), *home, "run", "--models", "oracle@hybrid-k4")
    assert code == 2 and "pass --embedding-model minilm" in err
