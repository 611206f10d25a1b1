"""The "Evaluate your own agent" page's example, command for command: the example agent as a
service, its answers exported, `agents check`, and the run whose table the page shows."""

import subprocess
import sys
from pathlib import Path

import pytest

from rag_eval_pipeline_tests.support import REPO_ROOT
from rag_eval_pipeline_tests.support.agent import agent_service
from rag_eval_pipeline_tests.support.cli import rag_eval
from rag_eval_pipeline_tests.support.docs import DOCS, commands, section

pytestmark = pytest.mark.slow  # four partitions of 35 questions through the installed script

PAGE = DOCS / "agents.md"


def _section() -> str:
    return section(PAGE, "Try it with the example agent")


def _commands(section: str) -> list[list[str]]:
    return commands(section)


def test_the_readme_agent_example_runs_as_written(tmp_path):
    section = _section()
    commands = _commands(section)
    assert [c[:3] for c in commands] == [
        [".venv/bin/python", "-m", "example_agent"],
        [".venv/bin/python", "-m", "example_agent"],
        [".venv/bin/rag-eval", "--config", "examples/team_agent.yaml"],
        [".venv/bin/rag-eval", "--config", "examples/team_agent.yaml"],
    ]
    env = {"PYTHONPATH": str(REPO_ROOT)}  # what the repository root gives: example_agent importable
    with agent_service() as agent:  # the first command, on a free port
        config = tmp_path / "examples" / "team_agent.yaml"
        config.parent.mkdir()
        config.write_text(
            (REPO_ROOT / "examples" / "team_agent.yaml")
            .read_text()
            .replace("127.0.0.1:8080", agent.url.split("//")[1].removesuffix("/chat"))
        )
        export = subprocess.run(
            [sys.executable, *commands[1][1:]],
            cwd=tmp_path,
            env={**_environment(), **env},
            capture_output=True,
            text=True,
        )
        assert export.returncode == 0, export.stderr
        assert (tmp_path / "answers.jsonl").read_text().count("\n") == 35
        check = rag_eval(*commands[2][1:], cwd=tmp_path, env=env)
        assert check.returncode == 0, check.stderr
        assert "mapping:" in check.stdout and "; 3 contexts" in check.stdout
        run = rag_eval(*commands[3][1:], cwd=tmp_path, env=env)
        assert run.returncode == 0, run.stderr
    printed = [line for line in run.stdout.splitlines() if line.startswith("| ")]
    shown = [line for line in section.splitlines() if line.startswith("| ")]
    assert printed[: len(shown)] == shown and len(shown) == 5  # the page's table, row for row


def _environment() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "RAG_EVAL_CONFIG")}


def test_the_example_configuration_is_the_one_the_readme_describes():
    text = (REPO_ROOT / "examples" / "team_agent.yaml").read_text()
    for name in ("support-bot", "my-chain", "prod-export"):
        assert f"name: {name}" in text and name in _section()
    assert Path(REPO_ROOT / "example_agent" / "__main__.py").is_file()
