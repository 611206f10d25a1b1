"""Issue 78: Polish and Hungarian, languages with no row of their own in the table, and Amharic, a
script no detector here reads, evaluated through the command line with no language set. A right
sentence with the name inflected as its sentence needs is credited; since their lexicons
(language/lexicon.py) every Polish and Hungarian case is judged, none absent; a wrong sentence
is never credited; each case is recorded in its own language. Where the rule cannot read a
sentence (Amharic, "unknown"), its correctness is absent with the reason wherever a number is
shown: the run's output, the summary, the UI's pages, the report in Chromium and `explain`."""

import contextlib
import io

import dagster as dg
import pandas as pd
import pytest

from rag_eval_pipeline import cli
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.language.inflection import reading
from rag_eval_pipeline.metrics import reference as m
from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.languages_without_lexicon import UNKNOWN_SCRIPT, write_project
from rag_eval_pipeline_tests.support.report_page import open_report
from rag_eval_pipeline_tests.support.ui import browser_context

POLISH_REASON = "correctness absent where an answer in Polish says more than the reference"
HUNGARIAN_REASON = "correctness absent where an answer in Hungarian says more than the reference"


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("no-lexicon")
    write_project(folder)
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as monkeypatch, contextlib.redirect_stdout(printed):
        monkeypatch.delenv("DAGSTER_HOME", raising=False)
        monkeypatch.chdir(folder)
        base = ["--dagster-home", str(folder / "home"), "--config", str(folder / "rag_eval.yaml")]
        code = cli.main([*base, "run"])
    assert code == 0, printed.getvalue()
    return folder, printed.getvalue()


def _reference(folder, model: str) -> pd.DataFrame:
    summary = load_asset(open_instance(str(folder / "home")), "metric_summary", model)
    rows = summary[(summary["judge_id"] == "reference") & (summary["metric"] == "correctness")]
    return rows.set_index("group")


@pytest.mark.slow
def test_right_sentences_are_judged_through_the_languages_lexicon(evaluated, monkeypatch, capsys):
    """Polish and Hungarian have a lexicon now (issue 78's second part): every case is judged,
    none absent; the fourth right sentence of each hedges ("Szerintem", "chyba") and scores 0, a
    wrong one is never credited."""
    folder, printed = evaluated
    right, wrong = _reference(folder, "right-sentences"), _reference(folder, "wrong-sentences")
    for language in ("pl", "hu"):
        row = right.loc[f"language={language}"]
        assert row["mean"] == 0.75 and row["n"] == 4 and row["n_cases"] == 4, language
        refused = wrong.loc[f"language={language}"]
        assert refused["mean"] == 0.0 and refused["n"] == 4, language
    overall = str(right.loc["all"]["note"] or "")
    assert POLISH_REASON not in overall and HUNGARIAN_REASON not in overall
    assert POLISH_REASON not in printed and HUNGARIAN_REASON not in printed, printed
    # each case in its own language, detected
    cases = load_asset(open_instance(str(folder / "home")), "judgement_list")
    assert cases["language"].value_counts().to_dict() == {"pl": 4, "hu": 4, "unknown": 3}
    monkeypatch.chdir(folder)
    base = ["--dagster-home", str(folder / "home"), "--config", str(folder / "rag_eval.yaml")]
    code, out, _ = in_process(capsys, *base, "explain", "pl-04", "--model", "right-sentences")
    assert code == 0 and "Polish (pl, detected)" in out and "correctness absent" not in out
    code, out, _ = in_process(capsys, *base, "explain", "pl-01", "--model", "right-sentences")
    assert code == 0 and "correctness 1" in out and "correctness absent" not in out


UNKNOWN_REASON = reading("unknown").absence_reason  # names the language and the LLM judges


def _absent_cases() -> list[str]:
    """The Amharic cases whose right sentence the rule leaves absent, as the rule itself says
    (whatever its reach when this runs): the surfaces below must show exactly these."""
    return [
        f"am-{number:02d}"
        for number, case in enumerate(UNKNOWN_SCRIPT, start=1)
        if m.correctness(case.right, case.answer, question=case.question, language="unknown",
                         passages=[case.document]) is None
    ]  # fmt: skip


def _metadata(folder, asset: str, partition: str | None = None) -> dict:
    with open_instance(str(folder / "home")) as instance:
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=dg.AssetKey(asset), asset_partitions=[partition] if partition else None
            ),
            limit=1,
        ).records
    return {k: getattr(v, "value", v) for k, v in records[0].asset_materialization.metadata.items()}


def _said(text: str) -> str:
    return text.replace("\\", "")  # Markdown's escapes, as the page shows the text


@pytest.mark.slow  # shares the run above; one browser
def test_correctness_the_rule_cannot_read_is_absent_with_its_reason_wherever_it_is_shown(
    evaluated, monkeypatch, capsys
):
    folder, printed = evaluated
    absent = _absent_cases()
    assert absent, "the fixture needs a right Amharic sentence the rule cannot read"
    total, scored = 11, 11 - len(absent)
    counts = f"{scored} of {total} cases scored; {len(absent)} absent: {UNKNOWN_REASON}"
    for remedy in ("claude-", "openai:", "local:"):
        assert remedy in UNKNOWN_REASON

    # the run's output: the reason once, and over how many cases the printed mean is
    assert printed.count(f"note: {UNKNOWN_REASON}") == 1, printed
    assert f"{scored} of {total} scored" in printed
    assert f"{3 - len(absent)} of 3 scored" in printed  # by language: over the Amharic cases

    # the summary: the mean over the scored cases only, the note with the counts and the reason
    right, wrong = _reference(folder, "right-sentences"), _reference(folder, "wrong-sentences")
    overall = right.loc["all"]
    assert overall["n"] == scored and counts in overall["note"]
    amharic = right.loc["language=unknown"]
    assert amharic["n"] == 3 - len(absent) and amharic["mean"] != 0.0  # NaN when all are absent
    assert wrong.loc["language=unknown"]["mean"] == 0.0 and wrong.loc["all"]["n"] == total

    # the UI: the summary's page, the comparison's (scored column, why, the pairs left unpaired)
    summary = _metadata(folder, "metric_summary", "right-sentences")
    assert summary["reference/correctness_absent"] == counts
    comparison = _metadata(folder, "model_comparison")
    assert f"{scored} of {total} scored" in comparison["comparison"]
    assert f"right-sentences (reference): {counts}" in _said(comparison["correctness_absent"])
    unpaired = (
        f"right-sentences vs wrong-sentences (reference): paired on {scored} of {total} cases both "
        f"were judged on; {len(absent)} absent for right-sentences: {UNKNOWN_REASON}"
    )
    assert unpaired in _said(comparison["unpaired"])
    assert unpaired in _said(_metadata(folder, "paired_comparison")["unpaired"])

    # explain: the case's note says why, and no 0 is given for it
    monkeypatch.chdir(folder)
    base = ["--dagster-home", str(folder / "home"), "--config", str(folder / "rag_eval.yaml")]
    code, out, _ = in_process(capsys, *base, "explain", absent[0], "--model", "right-sentences")
    assert code == 0 and "note: correctness absent: " in out and "correctness 0" not in out, out

    # the report in Chromium: the mean's cell and its hover, the line under the means, the
    # forest's line, and each absent case's row ("–", its reason on hover), never 0
    report = folder / "home" / "storage" / "artifacts" / "eval_report.html"
    with contextlib.ExitStack() as stack:
        page = browser_context(stack).new_page()
        errors = open_report(page, report.as_uri())
        cell = page.locator("#means td", has_text=f"({scored} of {total} scored)")
        assert cell.count() == 1 and cell.get_attribute("title") == counts
        under = page.inner_text("#correctness-absent")
        assert f"right-sentences (reference): {scored} of {total} cases scored, {len(absent)} absent" in under
        assert UNKNOWN_REASON in under
        assert "paired on" in page.inner_text("#answers .answers:not([hidden]) .unpaired")
        assert f"on {len(absent)} case rows" in page.inner_text("#cases-absent")
        for qid in absent:
            page.fill("#case-filter", qid)
            row = page.locator(
                "#cases tbody tr[data-row]", has=page.locator("td", has_text="right-sentences")
            )
            row.first.wait_for()
            correctness = row.first.locator("td").nth(4)
            assert correctness.inner_text() == "–"
            assert "correctness absent: " in correctness.get_attribute("title")
        assert not errors, errors
