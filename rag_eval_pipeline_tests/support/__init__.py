"""Helpers the tests share (the fixtures stay in conftest.py): where things are, the shared
sample in the original release's layout, free ports and clean stops (``processes``)."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_HOTPOTQA = REPO_ROOT.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
ARTIFACTS = REPO_ROOT / "test-artifacts"  # screenshots and pages a person may want to look at

# the session's evaluated instance (conftest.evaluated)
EVALUATED_MODELS = ("extractive-baseline", "oracle", "null")
EVALUATED_SAMPLE = 40


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


STORAGES = ("sqlite", "postgres")  # what the deployment tests run on: the default, and a team's
