"""`generate`: a judgement list written from the team's documents."""

from __future__ import annotations

from rag_eval_pipeline.cli.arguments import positive, share
from rag_eval_pipeline.cli.commands import Commands, Handler
from rag_eval_pipeline.cli.options import add_verbose
from rag_eval_pipeline.generation.spec import DEFAULT_CASES, DEFAULT_GENERATOR, DEFAULT_MAX_DOCUMENT_SHARE


def register(commands: Commands) -> None:
    generate = commands.add_parser(
        "generate",
        help="write a judgement list from your documents, every case checked",
        description="""Plans cases over the documents (single, multi-hop over two linked passages, comparison,
        unanswerable; spread over the documents), has --model write each, and has --judge check each:
        answerable from its sources, not without them, not from one of two passages, not a near-duplicate, a
        short answer. Writes the kept cases to --out, the rejected ones to <out>.rejected.jsonl with their
        reasons, and <out>.manifest.json.""",
    )
    generate.add_argument("--documents", required=True, metavar="DIR", help="the folder of documents")
    # unset options take rag_eval.yaml's generation section, else its defaults (shown)
    generate.add_argument("--n", type=positive, help=f"candidate cases to write (default {DEFAULT_CASES})")
    generate.add_argument(
        "--model",
        help=f"the generator: an LLM name (default {DEFAULT_GENERATOR}; local:smollm2, openai:<model>)",
    )
    generate.add_argument("--judge", help="the validating judge (default: the generator)")
    generate.add_argument(
        "--types",
        help="comma-separated: single, multi_hop, comparison, unanswerable (default: all, equal shares)",
    )
    generate.add_argument("--seed", type=int, help="the same seed plans the same cases (default 0)")
    generate.add_argument(
        "--max-document-share",
        type=share,
        help=f"of the cases, at most per document (default {DEFAULT_MAX_DOCUMENT_SHARE})",
    )
    generate.add_argument("--out", required=True, help="the judgement list to write (JSONL)")
    add_verbose(generate)
    generate.set_defaults(handler=Handler("generate"))
