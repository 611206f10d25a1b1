"""Score `rag-eval kb health --format json` against the answer key of a planted set written by
someone else (the 82 / 82b layout: ``expected.json`` with ``gap_question_ids``,
``not_current_doc_ids_planted``, ``expired_question_ids``, ``control_doc_id`` and, with
production questions, ``blind_spot_topics`` and ``production_topic_of``). Prints knowledge_gap
precision and recall, the documents flagged not current against those planted (and any current
one flagged), the expired-source questions labelled outdated, and the blind spots found.

    rag-eval --config rag_eval.planted.yaml run --models oracle,extractive-baseline
    rag-eval --config rag_eval.planted.yaml kb health --model M --as-of 2026-12-07 \
        --production production_questions.jsonl --format json > health.json
    .venv/bin/python benchmarks/kb_health_external.py health.json expected.json
"""

import argparse
import json
from collections import Counter
from pathlib import Path


def _document(name: str) -> str:
    return name.removeprefix("doc_")


def _blind_spots(traffic: dict, expected: dict) -> dict:
    """Each blind spot found, named by the planted topic most of its proposed questions are on."""
    topic_of = {p: t["topic"] for p, t in expected.get("production_topic_of", {}).items()}
    planted = set(expected.get("blind_spot_topics", []))
    found = {}
    for topic in {p["topic"] for p in traffic["proposals"]}:
        on = Counter(topic_of.get(p["production_id"]) for p in traffic["proposals"] if p["topic"] == topic)
        found[topic] = on.most_common(1)[0][0]
    proposals_right = sum(topic_of.get(p["production_id"]) in planted for p in traffic["proposals"])
    return {
        "divergence": traffic["divergence"],
        "blind_spots_found": len(found),
        "planted": sorted(planted),
        "matched": sorted({t for t in found.values() if t in planted}),
        "not_planted": sorted(t for t in found.values() if t not in planted),
        "proposals_on_a_planted_blind_spot": f"{proposals_right} of {len(traffic['proposals'])}",
    }


def score(record: dict, expected: dict) -> dict:
    labels = {c["qid"]: c["label"] for c in record["cases"]}
    gaps = set(expected["gap_question_ids"])
    said = {q for q, label in labels.items() if label == "knowledge_gap"}
    flagged = {_document(d["document"]) for d in record["documents"] if d["status"] != "current"}
    planted = set(expected["not_current_doc_ids_planted"])
    result = {
        "knowledge_gap": {
            "precision": round(len(said & gaps) / len(said), 3) if said else None,
            "recall": round(len(said & gaps) / len(gaps), 3) if gaps else None,
            "false": sorted(said - gaps),
            "missed": {q: labels.get(q) for q in sorted(gaps - said)},
        },
        "not_current": {
            "flagged": len(flagged),
            "planted": len(planted),
            "right": len(flagged & planted),
            "current_flagged": sorted(flagged - planted),
            "control_current": expected.get("control_doc_id") not in flagged,
        },
        "expired_source_outdated": {q: labels.get(q) for q in expected.get("expired_question_ids", [])},
        "labels": dict(Counter(labels.values())),
    }
    if record.get("traffic"):
        result["traffic"] = _blind_spots(record["traffic"], expected)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("health", type=Path, help="`rag-eval kb health --format json` output")
    parser.add_argument("expected", type=Path, help="the set's expected.json")
    args = parser.parse_args()
    print(
        json.dumps(
            score(json.loads(args.health.read_text()), json.loads(args.expected.read_text())), indent=1
        )
    )


if __name__ == "__main__":
    main()
