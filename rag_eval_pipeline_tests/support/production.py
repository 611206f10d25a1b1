"""Production traffic the tests write: logs of a RAG agent answering questions of the shared
HotpotQA sample, in a nested shape of the team's own (its query, its reply, the documents it
retrieved), some answers grounded in what it retrieved and some not."""

from __future__ import annotations

import json
from pathlib import Path

from rag_eval_pipeline_tests.support import SHARED_HOTPOTQA

# where the team's logs keep each field: JSONPaths into a row
LOG_COLUMNS = {
    "question": "request.query",
    "answer": "reply.text",
    "contexts": "retrieved[*].doc.content",
    "context_ids": "retrieved[*].doc.id",
    "context_titles": "retrieved[*].doc.title",
    "timestamp": "ts",
    "agent_version": "build",
    "user_feedback": "feedback",
    "trace_id": "trace",
}
UNSUPPORTED = "It was founded by a committee of marine biologists in Reykjavik"


def shared_questions(count: int, start: int = 0) -> list[dict]:
    with SHARED_HOTPOTQA.open() as handle:
        rows = [json.loads(line) for line in handle]
    return rows[start : start + count]


def log_row(question: dict, day: str, minute: int, grounded: bool, build: str = "v1") -> dict:
    """One interaction: the gold paragraphs and a distractor retrieved; the truth as the answer
    (grounded) or a claim none of them makes."""
    titles, sentences = question["context"]["title"], question["context"]["sentences"]
    gold = list(dict.fromkeys(question["supporting_facts"]["title"]))
    picked = gold + [t for t in titles if t not in gold][:1]
    documents = [
        {"doc": {"id": f"kb-{titles.index(t)}", "title": t, "content": "".join(sentences[titles.index(t)])}}
        for t in picked
    ]
    return {
        "request": {"query": question["question"]},
        "reply": {"text": question["answer"] if grounded else UNSUPPORTED},
        "retrieved": documents,
        "ts": f"{day}T{9 + minute // 60:02d}:{minute % 60:02d}:00Z",
        "build": build,
        "trace": f"trace-{question['id']}-{day}",
    }


def write_day(folder: Path, day: str, rows: list[dict], name: str | None = None) -> Path:
    """A day's log file (JSONL), as a team's log shipper would drop it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"{day}.jsonl")
    with path.open("a") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


def production_config(logs: Path, **overrides) -> dict:
    """A configuration file's production section over a folder of such logs."""
    return {
        "sources": [{"kind": "logs", "path": str(logs), "columns": LOG_COLUMNS}],
        "start_date": "2026-11-01",
        **overrides,
    }
