"""Shared fixtures: the shared HotpotQA sample and temporary Dagster instances."""

import json
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_HOTPOTQA = REPO_ROOT.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"


@pytest.fixture(scope="session")
def shared_hotpotqa() -> Path:
    """The 500-question sample; missing is a failure, not a skip (CI lays shared/ beside the repo)."""
    assert SHARED_HOTPOTQA.is_file(), f"shared HotpotQA sample missing at {SHARED_HOTPOTQA}"
    return SHARED_HOTPOTQA


@pytest.fixture(scope="session")
def hub_rows(shared_hotpotqa: Path) -> list[dict]:
    """The first 12 questions in the hub's row format."""
    with shared_hotpotqa.open() as handle:
        return [json.loads(next(handle)) for _ in range(12)]


def to_original_layout(row: dict) -> dict:
    """The same question in the original HotpotQA release's layout."""
    return {
        "_id": row["id"],
        "question": row["question"],
        "answer": row["answer"],
        "type": row["type"],
        "level": row["level"],
        "supporting_facts": [
            [t, i] for t, i in zip(row["supporting_facts"]["title"], row["supporting_facts"]["sent_id"])
        ],
        "context": [[t, s] for t, s in zip(row["context"]["title"], row["context"]["sentences"])],
    }
