"""`rag-eval agents list|check`: the team's agents of the configuration file, and one call to
one of them before a run, shown as a field-mapping preview."""

from __future__ import annotations

import argparse
from pathlib import Path

from rag_eval_pipeline.answering.agents.provider import check_agent
from rag_eval_pipeline.cli.context import settings_of
from rag_eval_pipeline.cli.errors import CommandError, say
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.data.hotpotqa import load_questions
from rag_eval_pipeline.data.rows import RowFileError, read_rows

FALLBACK_QUESTION = "What is this about?"


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
            rows, _ = read_rows(Path(settings.dataset.questions), encoding=settings.dataset.encoding)
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
    say(report)  # the raw reply may echo a secret header
    return 0 if readable else 1
