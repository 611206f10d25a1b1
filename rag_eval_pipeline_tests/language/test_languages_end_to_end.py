"""A knowledge base and questions in Chinese, Spanish and Japanese, evaluated through the command
line with no language set: retrieval finds the gold passages, a right answer in a sentence is
credited and a wrong one is not, each language reports on its own, and a language the project
cannot analyse is said in one line before anything is computed."""

import contextlib
import io
import sys

import pandas as pd
import pytest

from rag_eval_pipeline import cli
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.language import segmenters
from rag_eval_pipeline_tests.support.cli import in_process
from rag_eval_pipeline_tests.support.languages import write_project


def _run(folder, monkeypatch, *extra: str) -> int:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.chdir(folder)
    return cli.main(
        ["--dagster-home", str(folder / "home"), "--config", str(folder / "rag_eval.yaml"), *extra]
    )


def _overall(home, model: str, group: str = "all") -> pd.Series:
    summary = load_asset(open_instance(str(home)), "metric_summary", model)
    rows = summary[(summary["judge_id"] == "reference") & (summary["group"] == group)]
    return rows.set_index("metric")["mean"]


@pytest.fixture(scope="module")
def chinese(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chinese")
    write_project(folder, ["zh"])
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert _run(folder, monkeypatch, "run") == 0
    return folder


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mixed")
    write_project(folder, ["zh", "es", "ja"])
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert _run(folder, monkeypatch, "run") == 0
    return folder


def test_a_chinese_knowledge_base_is_scored_right(chinese):
    home = chinese / "home"
    assert _overall(home, "oracle")["context_recall"] >= 0.8
    right, wrong = _overall(home, "right-sentences"), _overall(home, "wrong-sentences")
    assert right["correctness"] >= 0.9 and right["f1"] >= 0.3
    assert wrong["correctness"] <= 0.1
    baseline = _overall(home, "extractive-baseline")
    assert baseline["context_recall"] >= 0.8 and baseline["correctness"] > 0  # it answers, from Chinese
    cases = load_asset(open_instance(str(home)), "judgement_list")
    assert set(cases["language"]) == {"zh"} and set(cases["language_source"]) == {"detected"}


def test_a_mixed_list_reports_each_language_on_its_own(mixed, monkeypatch, capsys):
    home = mixed / "home"
    for language in ("zh", "es", "ja"):
        group = f"language={language}"
        assert _overall(home, "oracle", group)["context_recall"] >= 0.8, language
        right, wrong = _overall(home, "right-sentences", group), _overall(home, "wrong-sentences", group)
        assert right["correctness"] >= 0.9 and right["f1"] >= 0.3, language
        assert wrong["correctness"] <= 0.1, language
    passages = load_asset(open_instance(str(home)), "kb_passages")
    assert passages["language"].value_counts().to_dict() == {"zh": 10, "es": 10, "ja": 10}
    # the comparison's page and the report carry the same breakdown
    instance = open_instance(str(home))
    record = instance.get_latest_materialization_event(__import__("dagster").AssetKey("model_comparison"))
    assert "by_language" in record.asset_materialization.metadata
    report = next((home / "storage").rglob("eval_report.html")).read_text()
    assert 'id="by-language"' in report and "right-sentences" in report


def test_a_gate_and_explain_read_the_language(mixed, monkeypatch, capsys):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.chdir(mixed)
    base = ["--dagster-home", str(mixed / "home"), "--config", str(mixed / "rag_eval.yaml")]
    code, out, _ = in_process(
        capsys, *base, "gate", "--model", "right-sentences", "--min", "language:ja/correctness=0.9"
    )
    assert code == 0 and "language=ja" in out
    code, out, _ = in_process(
        capsys, *base, "gate", "--model", "wrong-sentences", "--min", "language:zh/correctness=0.5"
    )
    assert code == 1 and "language=zh" in out
    code, out, _ = in_process(capsys, *base, "explain", "zh-03", "--model", "right-sentences")
    assert code == 0 and "Chinese (zh, detected)" in out and "西湖位于杭州市" in out


def test_an_unknown_language_is_one_line_naming_the_supported(tmp_path, monkeypatch, capsys):
    write_project(tmp_path, ["es"])
    config = (
        (tmp_path / "rag_eval.yaml")
        .read_text()
        .replace("  sample_size: 0\n", "  sample_size: 0\n  language: klingon\n")
    )
    (tmp_path / "rag_eval.yaml").write_text(config)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    code, _, err = in_process(capsys, "--config", str(tmp_path / "rag_eval.yaml"), "run")
    assert code == 2 and len(err.splitlines()) == 1
    assert "dataset.language: unknown language 'klingon'" in err and "zh, ja" in err


def test_a_rows_unknown_language_names_the_file_and_line(tmp_path, monkeypatch, capsys):
    write_project(tmp_path, ["es"])
    lines = (tmp_path / "questions.jsonl").read_text().splitlines()
    lines[2] = lines[2].replace('"id"', '"language": "xx-YY", "id"')
    (tmp_path / "questions.jsonl").write_text("\n".join(lines) + "\n")
    code, _, err = in_process(
        capsys, "--config", str(tmp_path / "rag_eval.yaml"), "--dagster-home", str(tmp_path / "h"), "run"
    )
    assert code == 2 and "questions.jsonl, line 3: unknown language 'xx-YY'" in err


def test_a_language_without_its_segmenter_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    """Without jieba installed, a Chinese knowledge base is one error line saying what to
    install: nothing is indexed or scored with a whitespace split."""
    write_project(tmp_path, ["zh"])
    monkeypatch.setitem(sys.modules, "rjieba", None)  # as if it were not installed
    segmenters.jieba_words.cache_clear()
    segmenters.jieba_search_words.cache_clear()
    try:
        code, _, err = in_process(
            capsys, "--config", str(tmp_path / "rag_eval.yaml"), "--dagster-home", str(tmp_path / "h"), "run"
        )
    finally:
        segmenters.jieba_words.cache_clear()
        segmenters.jieba_search_words.cache_clear()
    assert code == 2 and "Chinese text needs rjieba (not installed): pip install rjieba" in err
    assert not (tmp_path / "h" / "storage").exists() or not any(
        (tmp_path / "h" / "storage").rglob("kb_index*")
    )


@pytest.fixture(scope="module")
def second_look(tmp_path_factory):
    """Korean, Arabic, Hindi and German together, no language set (issue 69's trial)."""
    folder = tmp_path_factory.mktemp("second-look")
    write_project(folder, ["ko", "ar", "hi", "de"])
    with pytest.MonkeyPatch.context() as monkeypatch:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            assert _run(folder, monkeypatch, "run") == 0
    return folder, printed.getvalue()


@pytest.mark.slow
def test_right_sentences_are_credited_in_korean_arabic_hindi_and_german(second_look):
    """Answers with Korean particles and copula, Arabic vowel marks and another hamza form, a
    Hindi predicate after the name, German "Meissen" and a name after a role noun: the right
    agent is told from the wrong one in each language, and the summary names each."""
    folder, printed = second_look
    home = folder / "home"
    by_language = printed[printed.index("By language") : printed.index("Paired")]
    for language in ("ko", "ar", "hi", "de"):
        group = f"language={language}"
        assert _overall(home, "oracle", group)["context_recall"] >= 0.8, language
        right, wrong = _overall(home, "right-sentences", group), _overall(home, "wrong-sentences", group)
        assert right["correctness"] >= 0.9, language
        assert wrong["correctness"] <= 0.1, language
        assert f"| right-sentences | reference | {language} |" in by_language
    assert _overall(home, "right-sentences")["correctness"] >= 0.9
    assert _overall(home, "wrong-sentences")["correctness"] <= 0.1
    cases = load_asset(open_instance(str(home)), "judgement_list")
    assert cases["language"].value_counts().to_dict() == {"ko": 6, "ar": 6, "hi": 6, "de": 6}


@pytest.mark.slow
def test_korean_without_its_morphology_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    """Without Kiwi installed, a Korean list is one error line saying what to install: no
    Korean answer is read with a whitespace split."""
    import importlib.util

    write_project(tmp_path, ["ko"])
    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name.startswith("kiwipiepy") else found(name, *a),
    )
    code, _, err = in_process(
        capsys, "--config", str(tmp_path / "rag_eval.yaml"), "--dagster-home", str(tmp_path / "h"), "run"
    )
    assert code == 2
    assert "Korean (ko) answers need their morphology, which is not installed: pip install kiwipiepy" in err
