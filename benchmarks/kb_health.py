"""Benchmark: precision and recall of each knowledge-base health label on a planted set.

Each slice is 30 HotpotQA questions whose 10 paragraphs make the knowledge base. Planted, by
question (the rest untouched): 10 gaps (their supporting paragraphs removed, and every
paragraph still saying the answer, so no document answers them), 5 superseded (the answer's
paragraph replaced by a newer version that ``supersedes`` it; the agent retrieved the old one
and answered from it), 3 expired (the answer's paragraph ``valid_until`` a past day, no other
version), 3 conflicts (a copy of the answer's paragraph with the answer edited to another value,
both current), and of the other 9, 4 whose retrieval missed every supporting paragraph
(retrieval_miss) and 5 retrieved with them (covered). The agent answers the reference. Every
label's precision and recall over all slices, and the documents flagged not current against
the 8 planted per slice; the time per slice (the knowledge view and the conflict scan).

    .venv/bin/python benchmarks/kb_health.py [--slices 10] [--offset 0]
"""

import argparse
import json
import random
import re
import time
from collections import Counter
from pathlib import Path

import pandas as pd

from rag_eval_pipeline.data.knowledge_base import passage_id
from rag_eval_pipeline.health.assess import HealthSettings, assess
from rag_eval_pipeline.health.labels import CaseInput
from rag_eval_pipeline.health.paraphrase import cross_encoder_reader, gap_signal

REPO = Path(__file__).resolve().parents[1]
DATASET = Path("/work/shared/data/hotpotqa/dev_distractor_500.jsonl")
if not DATASET.is_file():  # a checkout beside shared/, as CI lays it out
    DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
LABELS = ("knowledge_gap", "outdated", "conflict", "retrieval_miss", "covered")


def _answer_title(question: dict, passages: dict[str, str]) -> str | None:
    """The supporting paragraph that states the answer (None: a yes/no or unstated answer)."""
    answer = question["answer"].lower()
    for title in dict.fromkeys(question["supporting_facts"]["title"]):
        if title in passages and answer in passages[title].lower():
            return title
    return None


def _edited(text: str, answer: str) -> str:
    """The paragraph with its answer edited to another value: a number moved by 3, a name's last
    word changed."""
    pattern = re.compile(re.escape(answer), re.IGNORECASE)
    if answer.isdigit():
        return pattern.sub(str(int(answer) + 3), text)
    words = answer.split()
    return pattern.sub(" ".join([*words[:-1], "Zebulon"]), text)


def planted_slice(questions: list[dict], seed: int):
    passages = {}
    for q in questions:
        for title, sentences in zip(q["context"]["title"], q["context"]["sentences"]):
            passages[title] = "".join(sentences)
    rng = random.Random(seed)
    holders = {i: _answer_title(q, passages) for i, q in enumerate(questions)}
    order = list(range(len(questions)))
    rng.shuffle(order)
    gaps = order[:10]
    removed: set[str] = set()
    for i in gaps:
        removed |= set(questions[i]["supporting_facts"]["title"])
        answer = questions[i]["answer"].lower()
        if answer not in ("yes", "no"):
            removed |= {t for t, p in passages.items() if answer in p.lower()}
    used: set[str] = set()
    dated = []
    for i in order[10:]:
        title = holders[i]
        if title is not None and title not in removed and title not in used and len(dated) < 11:
            dated.append(i)
            used.add(title)
    superseded, expired, conflicts = dated[:5], dated[5:8], dated[8:11]
    rest = [i for i in order[10:] if i not in dated]
    misses, covered = rest[:4], rest[4:]
    rows = {
        t: {"passage_id": passage_id(t), "title": t, "passage": p, "language": "en"}
        for t, p in passages.items()
        if t not in removed
    }
    truth, retrieved, stale_docs = {}, {}, set()
    for i in superseded:
        old = rows[holders[i]]
        new = dict(
            old,
            passage_id=old["passage_id"] + "_v2",
            title=old["title"] + " (2025)",
            updated_at="2025-01-01",
            supersedes=old["passage_id"],
        )
        rows[new["title"]] = new
        truth[i], retrieved[i] = "outdated", [old["passage_id"]]
        stale_docs.add(old["passage_id"])
    for i in expired:
        rows[holders[i]] = dict(rows[holders[i]], valid_until="2020-01-01")
        truth[i], retrieved[i] = "outdated", [rows[holders[i]]["passage_id"]]
        stale_docs.add(rows[holders[i]]["passage_id"])
    for i in conflicts:
        doc = rows[holders[i]]
        copy = dict(
            doc,
            passage_id=doc["passage_id"] + "_copy",
            title=doc["title"],
            passage=_edited(doc["passage"], questions[i]["answer"]),
        )
        rows[doc["title"] + " copy"] = copy
        truth[i], retrieved[i] = "conflict", [doc["passage_id"]]
    gold = {
        i: [passage_id(t) for t in dict.fromkeys(questions[i]["supporting_facts"]["title"])]
        for i in range(30)
    }
    distractors = {
        i: [
            passage_id(t)
            for t in questions[i]["context"]["title"]
            if t not in questions[i]["supporting_facts"]["title"]
        ][:4]
        for i in range(30)
    }
    for i in gaps:
        truth[i], retrieved[i] = "knowledge_gap", distractors[i]
    for i in misses:
        truth[i], retrieved[i] = "retrieval_miss", distractors[i]
    for i in covered:
        truth[i], retrieved[i] = "covered", gold[i]
    frame = pd.DataFrame(list(rows.values()))
    for column in ("updated_at", "valid_until", "supersedes"):
        frame[column] = frame.get(column)
    cases = [
        CaseInput(
            questions[i]["id"],
            questions[i]["question"],
            questions[i]["answer"],
            questions[i]["answer"],
            False,
            tuple(retrieved[i]),
        )
        for i in truth
    ]
    return frame, cases, {questions[i]["id"]: label for i, label in truth.items()}, stale_docs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slices", type=int, default=10)
    parser.add_argument("--offset", type=int, default=0, help="first slice (30 questions each)")
    parser.add_argument(
        "--lexical", action="store_true", help="the lexical rule alone (no cross-encoder reading paraphrase)"
    )
    args = parser.parse_args()
    paraphrase = None if args.lexical else cross_encoder_reader(None)
    print(f"knowledge_gap read by: {gap_signal(paraphrase, ['en'])}")
    rows = [json.loads(line) for line in DATASET.open()]
    counts: Counter = Counter()
    sure: Counter = Counter()  # gaps said sure, by what the case truly is
    flagged = planted = flagged_right = 0
    seconds = []
    for n in range(args.offset, args.offset + args.slices):
        frame, cases, truth, stale = planted_slice(rows[30 * n : 30 * n + 30], seed=n)
        start = time.perf_counter()
        settings = HealthSettings(as_of="2025-06-01", with_topics=False)
        health = assess(frame, cases, settings=settings, paraphrase=paraphrase)
        seconds.append(time.perf_counter() - start)
        said = health.cases[["qid", "label", "confidence"]].itertuples(index=False)
        for qid, label, confidence in said:
            counts[(truth[qid], label)] += 1
            sure[truth[qid]] += label == "knowledge_gap" and confidence == "sure"
        found = set(health.documents.loc[health.documents["status"] != "current", "document"])
        flagged, planted, flagged_right = (
            flagged + len(found),
            planted + len(stale),
            flagged_right + len(found & stale),
        )
    print(f"{args.slices} slices of 30 questions (from slice {args.offset}), {sum(counts.values())} cases")
    print("| label | planted | labelled | precision | recall |\n|---|---|---|---|---|")
    for label in LABELS:
        tp = counts[(label, label)]
        said = sum(v for (t, said_label), v in counts.items() if said_label == label)
        real = sum(v for (t, said_label), v in counts.items() if t == label)
        print(f"| {label} | {real} | {said} | {tp / said if said else float('nan'):.2f} | {tp / real:.2f} |")
    gaps_sure, gaps = sure["knowledge_gap"], sum(v for (t, _), v in counts.items() if t == "knowledge_gap")
    said_sure = sum(sure.values())
    print(
        f"\nknowledge_gap said sure: {said_sure}, precision "
        f"{gaps_sure / said_sure if said_sure else float('nan'):.2f}, recall {gaps_sure / gaps:.2f}"
    )
    print(f"\ndocuments not current: {flagged} flagged, {planted} planted, {flagged_right} right")
    confused = {f"{t} -> {said}": v for (t, said), v in sorted(counts.items()) if t != said}
    print(f"confusions: {confused}")
    print(f"seconds per slice: median {sorted(seconds)[len(seconds) // 2]:.2f}")


if __name__ == "__main__":
    main()
