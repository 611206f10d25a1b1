"""`kb health`: the knowledge base's gaps, old documents and topics."""

from __future__ import annotations

from rag_eval_pipeline.cli.arguments import positive
from rag_eval_pipeline.cli.commands import Commands, Handler, add_group
from rag_eval_pipeline.cli.options import add_format


def register(commands: Commands) -> None:
    sub = add_group(commands, "kb", "the knowledge base's health: gaps, old documents, topics")
    health = sub.add_parser(
        "health",
        help="which questions the documents cannot answer, which documents are out of date",
        description="""Each case's gap label (knowledge_gap, retrieval_miss, outdated, conflict, covered) with
        its evidence, each document's status (current, superseded, expired), how often it was retrieved and
        whether it is gone from the source (a ghost), and the flagged questions' topics ranked by frequency x
        severity; with --production, the Jensen-Shannon divergence of the judgement list's topics from
        production's, its blind spots and the questions to promote. Gate on it: rag-eval gate --max
        knowledge_gap_rate=0.1.""",
    )
    health.add_argument("--model", help="the evaluated answer model (default: the only one)")
    add_format(health, ("text", "json"), help="json: cases, documents, topics")
    health.add_argument("--as-of", help="judge documents current on this day (YYYY-MM-DD; default today)")
    health.add_argument(
        "--production", metavar="FILE", help="production questions (JSONL, CSV or parquet with 'question')"
    )
    health.add_argument("--max-topics", type=positive, default=8, help="most topics (default 8)")
    health.set_defaults(handler=Handler("health", "handle_health"))
