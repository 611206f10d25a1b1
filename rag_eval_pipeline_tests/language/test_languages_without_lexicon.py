"""Issue 78: Polish and Hungarian, languages with no row of their own in the table, evaluated
through the command line with no language set. A right sentence with the name inflected as its
sentence needs is credited; since their lexicons (language/lexicon.py) every case is judged, none
absent (the absence of a language without a lexicon: rag_eval_pipeline_tests/language/
test_inflection.py); a wrong sentence is never credited; each case is recorded in its own
language."""

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
def test_right_sentences_are_judged_through_the_languages_lexicon(evaluated, monkeypatch, capsys):
    """Polish and Hungarian have a lexicon now (issue 78's second part): every case is judged,
    none absent; the fourth right sentence of each says more than the rule credits ("Szerintem",
    a hedge; four words beyond "w Krakowie") and scores 0, a wrong one is never credited."""
    folder, printed = evaluated
    right, wrong = _reference(folder, "right-sentences"), _reference(folder, "wrong-sentences")
    for language in ("pl", "hu"):
        row = right.loc[f"language={language}"]
        assert row["mean"] == 0.75 and row["n"] == 4 and row["n_cases"] == 4, language
        refused = wrong.loc[f"language={language}"]
        assert refused["mean"] == 0.0 and refused["n"] == 4, language
    overall = right.loc["all"]
    assert "absent" not in str(overall["note"] or "")
    assert POLISH_REASON not in printed and HUNGARIAN_REASON not in printed, printed
    # each case in its own language, detected
    cases = load_asset(open_instance(str(folder / "home")), "judgement_list")
    assert cases["language"].value_counts().to_dict() == {"pl": 4, "hu": 4}
    monkeypatch.chdir(folder)
    base = ["--dagster-home", str(folder / "home"), "--config", str(folder / "rag_eval.yaml")]
    code, out, _ = in_process(capsys, *base, "explain", "pl-04", "--model", "right-sentences")
    assert code == 0 and "Polish (pl, detected)" in out and "correctness absent" not in out
    code, out, _ = in_process(capsys, *base, "explain", "pl-01", "--model", "right-sentences")
    assert code == 0 and "correctness 1" in out and "correctness absent" not in out
