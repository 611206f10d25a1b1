"""`rag-eval titles`: the titles of the passages a run would index, so a team can write a
judgement list's relevant_titles by hand (a title the documents do not hold is refused before
any work)."""

from __future__ import annotations

import argparse

from rag_eval_pipeline.cli.context import settings_of
from rag_eval_pipeline.cli.errors import CommandError
from rag_eval_pipeline.data.hotpotqa import DatasetUnavailableError
from rag_eval_pipeline.instance.preflight import knowledge_base_passages

FIRST_WORDS = 12


def handle(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    try:
        passages = knowledge_base_passages(settings, args.dataset)
    except (DatasetUnavailableError, FileNotFoundError, ValueError) as err:
        raise CommandError(str(err)) from None
    titles = passages.drop_duplicates("title")
    if args.filter:
        titles = titles[titles["title"].str.contains(args.filter, case=False, regex=False)]
    for row in titles.head(args.n).itertuples():
        words = " ".join(str(row.passage).split()[:FIRST_WORDS])
        print(f"{row.title}\t{row.passage_id}\t{words} ...")
    shown = min(args.n, len(titles))
    what = f" matching {args.filter!r}" if args.filter else ""
    print(f"({shown} of {len(titles)} titles{what}; {passages['title'].nunique()} in the knowledge base)")
    return 0
