"""The production page's example, command for command: the example agent's traffic
written, `production run` printing the day the page shows row for row (and exiting 1 on it),
`promote` and the regression run over what it wrote."""

import subprocess
import sys

import pytest

from rag_eval_pipeline_tests.support import REPO_ROOT
from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.docs import DOCS, commands, section


def _section() -> str:
    return section(DOCS / "production.md", "Production sampling")


def _commands(text: str) -> list[list[str]]:
    return commands(text)


@pytest.mark.slow  # the example agent's three days through the CLI, as the production page walks them
def test_the_readme_production_example_runs_as_written(tmp_path, capsys):
    section = _section()
    commands = _commands(section)
    assert [c[:5] for c in commands] == [
        [".venv/bin/python", "-m", "example_agent", "traffic", "traffic/"],
        [".venv/bin/rag-eval", "--config", "examples/production.yaml", "production", "run"],
        [".venv/bin/rag-eval", "--config", "examples/production.yaml", "production", "promote"],
        [".venv/bin/rag-eval", "--config", "examples/production.yaml", "run", "--dataset"],
    ]
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "production.yaml").write_text(
        (REPO_ROOT / "examples" / "production.yaml").read_text()
    )
    written = subprocess.run(
        [sys.executable, *commands[0][1:]],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert written.returncode == 0, written.stderr
    home = ["--dagster-home", str(tmp_path / "home")]
    config = ["--config", str(tmp_path / "examples" / "production.yaml")]

    code, out, err = in_process(capsys, *home, *config, *commands[1][3:])
    assert code == 1 and "error: 2026-11-28 failed a production threshold" in err
    assert "2026-11-27: 50 interactions sampled" in out and "1 of 3 days passed" in out
    shown = [line for line in section.split("```\n2026-11-28", 1)[1].split("```")[0].splitlines() if line]
    day = out.split("\n2026-11-28: ", 1)[1].splitlines()
    assert ["2026-11-28: " + day[0], *day[1 : len(shown)]] == ["2026-11-28" + shown[0], *shown[1:]]

    code, out, err = in_process(
        capsys,
        *home,
        *config,
        *[w.replace("regressions.jsonl", str(tmp_path / "regressions.jsonl")) for w in commands[2][3:]],
    )
    assert code == 0 and "promoted 5 cases of 2026-11-28" in out, err
    assert out.count("| v4 |") == 5  # the canary build's unfaithful answers, worst first
    code, out, err = in_process(
        capsys,
        *home,
        *config,
        *[w.replace("regressions.jsonl", str(tmp_path / "regressions.jsonl")) for w in commands[3][3:]],
    )
    assert code == 0, err
    assert "note: 5 of 5 cases have no reference answer yet" in out
    assert "| extractive-baseline | reference | 5 | 0 | – |" in out  # correctness absent, not 0
