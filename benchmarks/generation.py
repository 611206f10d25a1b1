"""Benchmark: `rag-eval generate --n 100` on the shared sample's passages against the tests'
Messages-API server (its generator writes good cases and each kind of bad one, in set shares),
Claude Sonnet writing, Haiku checking. Prints what was asked, kept and rejected by reason, the
calls each model got and their cost, and the judge calls the free checks spared (a case rejected
for its form or as a duplicate costs no validation call) against checking every case.

    python benchmarks/generation.py [--n 100] [--questions 100]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from rag_eval_pipeline import cli  # noqa: E402
from stand_ins.anthropic_api import FakeAnthropic  # noqa: E402
from stand_ins.generation import GeneratingModel  # noqa: E402

DEFAULT_DATASET = REPO.parent / "shared" / "data" / "hotpotqa" / "dev_distractor_500.jsonl"
# judge calls a case of each type takes when it survives every check (from its sources, without
# context, each passage alone for two; the knowledge base's retrieval for an unanswerable one)
VALIDATION_CALLS = {"single": 2, "multi_hop": 4, "comparison": 4, "unanswerable": 1}
FREE = ("reference answer too long", "near-duplicate", "no reference answer", "an unanswerable question with")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--questions", type=int, default=100, help="whose paragraphs are the documents")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        documents = Path(folder) / "docs"
        documents.mkdir()
        seen = set()
        with DEFAULT_DATASET.open() as rows, (documents / "wiki.jsonl").open("w") as out:
            for line in list(rows)[: args.questions]:
                row = json.loads(line)
                for title, sentences in zip(row["context"]["title"], row["context"]["sentences"]):
                    if title not in seen:
                        seen.add(title)
                        out.write(json.dumps({"title": title, "passage": "".join(sentences)}) + "\n")
        target = Path(folder) / "questions.jsonl"
        with FakeAnthropic(responder=GeneratingModel()) as server:
            os.environ.update(ANTHROPIC_API_KEY="bench-key", ANTHROPIC_BASE_URL=server.url)
            started = time.perf_counter()
            code = cli.main(
                ["--dagster-home", str(Path(folder) / "home"), "generate", "--documents", str(documents)]
                + ["--n", str(args.n), "--model", "claude-sonnet-4-6", "--judge", "claude-haiku-4-5"]
                + ["--out", str(target)]
            )
            seconds = time.perf_counter() - started
            calls = Counter(r["model"] for r in server.requests)
        assert code == 0
        manifest = json.loads(target.with_name("questions.manifest.json").read_text())
        rejected = [
            json.loads(line) for line in target.with_name("questions.rejected.jsonl").read_text().splitlines()
        ]
    spared = sum(VALIDATION_CALLS[r["type"]] for r in rejected if r["reason"].startswith(FREE))
    share = spared / (calls["claude-haiku-4-5"] + spared)
    print(f"\n{len(seen)} passages; {args.n} cases asked in {seconds:.1f} s")
    print("| type | asked | kept | rejected by reason |\n|---|---|---|---|")
    for row in manifest["survival"]:
        print(f"| {row['type']} | {row['asked']} | {row['kept']} | {row['by_reason']} |")
    print(
        f"calls: {calls['claude-sonnet-4-6']} to the generator, {calls['claude-haiku-4-5']} to the judge; "
        f"cost ${manifest['cost_usd']:.4f} (the stand-in's token counts at the list prices); the free "
        f"checks spared {spared} judge calls ({share:.0%} of checking every case); at most "
        f"{manifest['largest_document_share']:.0%} of the kept cases from one document "
        f"({manifest['documents_used']} documents)"
    )


if __name__ == "__main__":
    main()
