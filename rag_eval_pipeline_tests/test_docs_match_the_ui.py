"""What docs/ui.md says the UI's tables hold is what they hold: the worst cases' columns and the
comparison's, read from the session's evaluated instance (as the asset pages show them)."""

import re

import dagster as dg

from rag_eval_pipeline_tests.support.docs import DOCS


def _named(pattern: str) -> list[str]:
    """The `backticked` names of the docs/ui.md passage ``pattern`` captures."""
    found = re.search(pattern, (DOCS / "ui.md").read_text(), re.S)
    assert found, f"docs/ui.md no longer says {pattern!r}"
    return re.findall(r"`([^`]+)`", found.group(1))


def _latest(evaluated, asset: str, partition: str | None = None):
    records = evaluated.instance.fetch_materializations(
        dg.AssetRecordsFilter(dg.AssetKey(asset), asset_partitions=[partition] if partition else None),
        limit=1,
    ).records
    return records[0].asset_materialization.metadata


def test_the_worst_case_columns_the_docs_name_are_the_tables(evaluated):
    named = _named(r"worst cases in short columns, a case a few lines tall: (.*?) \(the question")
    table = _latest(evaluated, "judge_scores", "oracle")["worst cases of oracle"].value
    assert [column.name for column in table.schema.columns] == named


def test_the_comparison_columns_the_docs_name_are_the_panels(evaluated):
    named = _named(r"has a row per model\s+with\s+the\s+columns\s+(.*?):\s+its\s+name")
    header = _latest(evaluated, "model_comparison")["comparison"].value.splitlines()[0]
    assert [cell.strip() for cell in header.strip("|").split("|")] == named


def test_the_comparison_says_the_cases_language_even_for_one(evaluated):
    assert _latest(evaluated, "model_comparison")["languages"].value == "en (40 cases)"


def test_the_summary_and_verdict_columns_the_docs_name_are_the_tables(evaluated):
    """One judge, every metric and pair on as many cases: the narrow columns docs/ui.md names."""
    named = _named(r"`summary` has the columns\s+(.*?)\s+\(the interval")
    header = _latest(evaluated, "metric_summary", "oracle")["summary"].value.splitlines()[0]
    assert [cell.strip() for cell in header.strip("|").split("|")] == named
    named = _named(r"decided pairs first\) with the columns\s+(.*?):\s+the metric")
    verdicts = _latest(evaluated, "paired_comparison")["verdicts"].value
    assert [column.name for column in verdicts.schema.columns] == named
