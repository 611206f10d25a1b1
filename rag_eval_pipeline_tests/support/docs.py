"""The README and the docs pages as the tests read them: the pages in the order the docs index
lists them, a section of a page, and the commands of its code blocks as a shell would pass them."""

import re
from pathlib import Path

from rag_eval_pipeline_tests.support import REPO_ROOT

README = REPO_ROOT / "README.md"
DOCS = REPO_ROOT / "docs"
PROGRAMS = (".venv/bin/rag-eval ", ".venv/bin/python ")


def pages() -> list[Path]:
    """Every docs page in the order the index (docs/README.md) lists it."""
    index = (DOCS / "README.md").read_text()
    listed = re.findall(r"\]\(([\w\-]+\.md)\)", index)
    return [DOCS / name for name in dict.fromkeys(listed)]


def reading_order() -> list[Path]:
    """The README, then every page: the order in which a newcomer meets the commands."""
    return [README, *pages()]


def section(path: Path, heading: str) -> str:
    """From ``heading`` (a ``#`` or ``##`` line's text) to the next heading of the same level."""
    text = path.read_text()
    for marks in ("## ", "# "):
        start = f"\n{marks}{heading}\n"
        if start in f"\n{text}":
            return f"\n{text}".split(start, 1)[1].split(f"\n{marks}", 1)[0]
    raise KeyError(f"no heading {heading!r} in {path}")


def commands(text: str, programs: tuple[str, ...] = PROGRAMS) -> list[list[str]]:
    """Each command of the text's code blocks that runs one of ``programs`` (anywhere on the
    line, as in a CI step), without comments and a trailing ``&``: [program, *words]."""
    found = []
    for block in text.split("```")[1::2]:
        for line in block.replace("\\\n", " ").splitlines():
            for program in programs:
                if program in line:
                    words = line.split(program, 1)[1].split("#", 1)[0].split()
                    found.append([program.strip(), *[w for w in words if w != "&"]])
    return found
