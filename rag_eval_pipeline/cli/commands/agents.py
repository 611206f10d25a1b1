"""`agents`: the team's agents of the configuration file."""

from __future__ import annotations

from rag_eval_pipeline.cli.commands import Commands, Handler, add_group


def register(commands: Commands) -> None:
    agent_commands = add_group(
        commands, "agents", "the team's agents: list them, check one's response mapping"
    )
    agent_commands.add_parser("list", help="the agents of the configuration file").set_defaults(
        handler=Handler("agents", "handle_list")
    )
    check = agent_commands.add_parser(
        "check",
        help="call an agent once and show what each JSONPath of its mapping finds",
        description="""Calls the agent once (a file: reads its first row) and prints the request, the raw
        response (cut), what each JSONPath extracted and what is missing. Exit 0 when a run could read a reply
        from it, 1 when not.""",
    )
    check.add_argument("name", help="an agent of the configuration file (provider http, python or file)")
    check.add_argument("--question", help="the question to ask (default: the dataset's first question)")
    check.set_defaults(handler=Handler("agents", "handle_check"))
