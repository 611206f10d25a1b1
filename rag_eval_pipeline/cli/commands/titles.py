"""`titles`: the knowledge base's titles, nothing built."""

from __future__ import annotations

from rag_eval_pipeline.cli.arguments import positive
from rag_eval_pipeline.cli.commands import Commands, Handler
from rag_eval_pipeline.cli.options import add_dataset


def register(commands: Commands) -> None:
    titles = commands.add_parser(
        "titles",
        help="the knowledge base's titles (to write relevant_titles by hand)",
        description="""Lists the titles of the passages a run would index (the configured dataset's paragraphs
        and your documents), with each passage's id and first words; nothing is built.""",
    )
    titles.add_argument("--filter", help="only titles containing this text (case-insensitive)")
    add_dataset(titles, "as for run: bundled, hub, or a HotpotQA file")
    titles.add_argument("-n", type=positive, default=50, help="at most this many (default 50)")
    titles.set_defaults(handler=Handler("titles"))
