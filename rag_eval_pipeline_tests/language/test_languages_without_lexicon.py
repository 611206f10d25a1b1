"""Issue 78: Polish and Hungarian, languages with no lexicon of their own, evaluated through the
command line with no language set. A right sentence with the name inflected as its sentence needs
is credited; one with words the offline rule cannot read (a hedge, a negation may hide there) is
absent, never 0, and the run says why once, naming the LLM judges; the summary's note, and
`explain` for the case, say it too; a wrong sentence is never credited; each case is recorded in
its own language."""

import contextlib
import io

import pandas as pd
import pytest

from rag_eval_pipeline import cli
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.languages_without_lexicon import write_project

POLISH_REASON = "correctness absent where a Polish answer says more than the reference"
HUNGARIAN_REASON = "correctness absent where a Hungarian answer says more than the reference"


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
def test_right_sentences_are_credited_or_absent_with_the_reason_said_once(evaluated, monkeypatch, capsys):
    folder, printed = evaluated
    right, wrong = _reference(folder, "right-sentences"), _reference(folder, "wrong-sentences")
    # 3 of 4 right sentences a language credited, the fourth absent: n counts the judged ones
    for language in ("pl", "hu"):
        row = right.loc[f"language={language}"]
        assert row["mean"] == 1.0 and row["n"] == 3 and row["n_cases"] == 4, language
        refused = wrong.loc[f"language={language}"]
        assert refused["mean"] == 0.0 and refused["n"] == 4, language
    overall = right.loc["all"]
    assert "absent on 2 of 8 cases" in overall["note"]
    assert POLISH_REASON in overall["note"] and HUNGARIAN_REASON in overall["note"]
    # said once in the run's output, with the LLM judges named as the remedy
    assert printed.count(POLISH_REASON) == 1 and printed.count(HUNGARIAN_REASON) == 1, printed
    line = next(line for line in printed.splitlines() if POLISH_REASON in line)
    assert line.startswith("note: ") and "claude-sonnet-4-6" in line
    assert "openai:" in line and "local:" in line
    # each case in its own language, detected
    cases = load_asset(open_instance(str(folder / "home")), "judgement_list")
    assert cases["language"].value_counts().to_dict() == {"pl": 4, "hu": 4}
    # explain says which checks were not made on the absent case
    monkeypatch.chdir(folder)
    base = ["--dagster-home", str(folder / "home"), "--config", str(folder / "rag_eval.yaml")]
    code, out, _ = in_process(capsys, *base, "explain", "pl-04", "--model", "right-sentences")
    assert code == 0 and "Polish (pl, detected)" in out
    assert "note: correctness absent: negation, hedges, options and contrasts not read in Polish" in out
    code, out, _ = in_process(capsys, *base, "explain", "pl-01", "--model", "right-sentences")
    assert code == 0 and "correctness 1" in out and "correctness absent" not in out
