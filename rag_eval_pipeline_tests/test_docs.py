"""The README reads in ten minutes and every docs page is reachable from it: each page linked
from the README, each relative link and anchor of the README and the pages pointing at something
that exists (the commands of both run in test_cli.py)."""

import re
from pathlib import Path

from rag_eval_pipeline_tests.support import REPO_ROOT
from rag_eval_pipeline_tests.support.docs import DOCS, README, pages

README_MOST_LINES = 400
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings (outside code blocks)."""
    anchors, in_code = set(), False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def test_the_readme_is_short_and_links_every_docs_page():
    text = README.read_text()
    assert len(text.splitlines()) <= README_MOST_LINES
    linked = {Path(target.split("#")[0]).name for target in LINK.findall(text) if target.startswith("docs/")}
    on_disk = {path.name for path in DOCS.glob("*.md")}
    assert on_disk - linked == set(), f"docs pages the README does not link: {sorted(on_disk - linked)}"
    assert {path.name for path in pages()} == on_disk - {"README.md"}  # the index lists them all


def test_every_relative_link_and_anchor_exists():
    broken = []
    for source in [README, *DOCS.glob("*.md"), REPO_ROOT / "benchmarks" / "README.md"]:
        for target in LINK.findall(source.read_text()):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            resolved = (source.parent / file).resolve() if file else source
            if not resolved.exists():
                broken.append(f"{source.name}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{source.name}: {target} (no such heading)")
    assert broken == []


def test_every_ui_screenshot_of_the_docs_is_taken_by_a_browser_test():
    """docs/screenshots.sh regenerates them from the current UI: each docs/ui-*.png is the name
    a UI test's ``screenshot(page, ...)`` writes (an f-string's fields match any text)."""
    calls = re.compile(r'screenshot\(\s*page,\s*f?"([^"]+)"')
    names = [
        re.compile(re.sub(r"\\\{[^}]*\\\}", ".+", re.escape(name)) + "$")
        for test in (REPO_ROOT / "rag_eval_pipeline_tests" / "ui").glob("test_*.py")
        for name in calls.findall(test.read_text())
    ]
    untaken = [p.name for p in DOCS.glob("ui-*.png") if not any(n.match(p.stem) for n in names)]
    assert untaken == [], f"screenshots no browser test takes (docs/screenshots.sh cannot renew): {untaken}"
