"""`rag-eval agents list|check`: the team's agents of the configuration file, and one call to
one of them before a run, shown as a field-mapping preview."""

from __future__ import annotations

import argparse
from pathlib import Path

from rag_eval_pipeline.answering.agents.provider import check_agent
from rag_eval_pipeline.cli.context import CommandError, settings_of
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.data.hotpotqa import load_questions
from rag_eval_pipeline.data.rows import RowFileError, read_rows

FALLBACK_QUESTION = "What is this about?"


def register(commands: argparse._SubParsersAction) -> None:
    agents = commands.add_parser("agents", help="the team's agents: list them, check one's response mapping")
    agent_commands = agents.add_subparsers(dest="agents_command", required=True)
    agent_commands.add_parser("list", help="the agents of the configuration file").set_defaults(
        handler=handle_list
    )
    check = agent_commands.add_parser(
        "check",
        help="call an agent once and show what each JSONPath of its mapping finds",
        description="Calls the agent once (a file: reads its first row) and prints the request, the raw "
        "response (cut), what each JSONPath extracted and what is missing. Exit 0 when a run could read "
        "a reply from it, 1 when not.",
    )
    check.add_argument("name", help="an agent of the configuration file (provider http, python or file)")
    check.add_argument("--question", help="the question to ask (default: the dataset's first question)")
    check.set_defaults(handler=handle_check)


def handle_list(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    registry = settings.answer_registry()
    agents = [registry.resolve(name) for name in registry.named]
    agents = [spec for spec in agents if spec.is_agent]
    if not agents:
        print("no agents in the configuration file (answer_models with provider http, python or file)")
    for spec in agents:
        entry = spec.agent
        where = getattr(entry, "url", None) or getattr(entry, "target", None) or getattr(entry, "path", "")
        print(
            f"{spec.partition_key}  {spec.provider}  {where}  version {entry.version or '(none: not cached)'}"
        )
    return 0


def _first_question(settings: Settings) -> str:
    """The configured dataset's first question, so a check asks what a run will ask."""
    try:
        if settings.dataset.kind == "custom" and settings.dataset.questions:
            rows, _ = read_rows(Path(settings.dataset.questions))
            return str(rows[0][1].get("question") or FALLBACK_QUESTION) if rows else FALLBACK_QUESTION
        questions = load_questions(settings.dataset.source)
        return str(questions["question"].iloc[0]) if len(questions) else FALLBACK_QUESTION
    except (OSError, RowFileError, ValueError, KeyError):
        return FALLBACK_QUESTION


def handle_check(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    registry = settings.answer_registry()
    if args.name not in registry.named:
        raise CommandError(
            f"no answer model named {args.name!r} in the configuration file "
            f"(named: {', '.join(registry.named) or 'none'})"
        )
    spec = registry.resolve(args.name)
    if not spec.is_agent:
        raise CommandError(
            f"{args.name} is a {spec.provider} model, not an agent (provider http, python or file)"
        )
    problems = registry.problems(spec)
    if problems:
        raise CommandError("; ".join(problems))
    report, readable = check_agent(spec, args.question or _first_question(settings))
    print(report)
    return 0 if readable else 1
