import json

import pandas as pd
import pytest

from rag_eval_pipeline.data.hotpotqa import (
    QUESTION_COLUMNS,
    DatasetUnavailableError,
    MalformedRowError,
    load_hotpotqa_from_hub,
    read_hotpotqa_file,
    sample_questions,
)
from rag_eval_pipeline_tests.support import to_original_layout


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_both_layouts_and_all_formats_give_the_same_table(tmp_path, hub_rows):
    _write_jsonl(tmp_path / "hub.jsonl", hub_rows)
    (tmp_path / "original.json").write_text(json.dumps([to_original_layout(r) for r in hub_rows], indent=1))
    pd.DataFrame(hub_rows).to_parquet(tmp_path / "hub.parquet")

    from_jsonl = read_hotpotqa_file(tmp_path / "hub.jsonl")
    from_original = read_hotpotqa_file(tmp_path / "original.json")
    from_parquet = read_hotpotqa_file(tmp_path / "hub.parquet")

    assert list(from_jsonl.columns) == QUESTION_COLUMNS
    assert len(from_jsonl) == 12
    pd.testing.assert_frame_equal(from_jsonl, from_original)
    pd.testing.assert_frame_equal(from_jsonl, from_parquet)
    first = from_jsonl.iloc[0]
    assert first["qid"] == "5a8c7595554299585d9e36b6"
    assert first["supporting_titles"] == [
        "Kiss and Tell (1945 film)",
        "Shirley Temple",
        "Shirley Temple",
    ]
    assert first["supporting_sent_ids"] == [0, 0, 1]
    assert len(first["context_titles"]) == 10
    assert first["context_sentences"][1][1].startswith(" As an adult")  # leading space kept


def test_whole_shared_file_loads(shared_hotpotqa):
    questions = read_hotpotqa_file(shared_hotpotqa)
    assert len(questions) == 500
    assert questions["type"].value_counts().to_dict() == {"bridge": 431, "comparison": 69}


def test_malformed_jsonl_row_names_file_and_line(tmp_path, hub_rows):
    broken = dict(hub_rows[2])
    del broken["answer"]
    path = tmp_path / "broken.jsonl"
    _write_jsonl(path, [hub_rows[0], hub_rows[1], broken])
    with pytest.raises(MalformedRowError) as err:
        read_hotpotqa_file(path)
    assert err.value.location == "line 3"
    assert str(path) in str(err.value) and "'answer'" in str(err.value)


def test_a_line_that_is_not_utf8_is_named_and_the_questions_are_arrow_columns(tmp_path, hub_rows):
    """The file is read line by line, so a bad byte is named by its line; what is read is held in
    Arrow columns (a question's ten paragraphs are not ten lists of Python strings)."""
    path = tmp_path / "latin1.jsonl"
    path.write_bytes((json.dumps(hub_rows[0]) + "\n").encode() + b'{"id": "caf\xe9"}\n')
    with pytest.raises(MalformedRowError, match=r"latin1\.jsonl, line 2: not UTF-8 text \(it looks like"):
        read_hotpotqa_file(path)
    _write_jsonl(path, hub_rows)
    questions = read_hotpotqa_file(path)
    assert all(isinstance(dtype, pd.ArrowDtype) for dtype in questions.dtypes)
    assert str(questions.dtypes["context_sentences"]) == "list<item: list<item: string>>[pyarrow]"


def test_invalid_json_line_names_the_line(tmp_path, hub_rows):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(hub_rows[0]) + "\n\n{not json\n")
    with pytest.raises(MalformedRowError, match=r"bad\.jsonl, line 3: invalid JSON"):
        read_hotpotqa_file(path)


def test_malformed_item_in_json_list_names_its_line(tmp_path, hub_rows):
    items = [to_original_layout(r) for r in hub_rows[:3]]
    items[1]["context"] = [["only a title"]]
    path = tmp_path / "original.json"
    text = "[\n" + ",\n".join(json.dumps(i) for i in items) + "\n]\n"
    path.write_text(text)
    with pytest.raises(MalformedRowError) as err:
        read_hotpotqa_file(path)
    assert err.value.location == "line 3"
    assert "context" in err.value.reason


def test_duplicate_question_id_is_an_error(tmp_path, hub_rows):
    path = tmp_path / "dup.jsonl"
    _write_jsonl(path, [hub_rows[0], hub_rows[1], hub_rows[0]])
    with pytest.raises(MalformedRowError, match=r"line 3: duplicate question id \S+ \(first at line 1\)"):
        read_hotpotqa_file(path)


def test_supporting_fact_with_non_integer_sentence_id(tmp_path, hub_rows):
    row = json.loads(json.dumps(hub_rows[0]))
    row["supporting_facts"]["sent_id"][0] = "zero"
    path = tmp_path / "x.jsonl"
    _write_jsonl(path, [row])
    with pytest.raises(MalformedRowError, match="line 1: .*integer sentence id"):
        read_hotpotqa_file(path)


def test_sampling_is_deterministic(shared_hotpotqa):
    questions = read_hotpotqa_file(shared_hotpotqa)
    first = sample_questions(questions, 35, "first")
    assert first["qid"].tolist() == questions["qid"].head(35).tolist()
    random_a = sample_questions(questions, 35, "random", seed=7)
    random_b = sample_questions(questions, 35, "random", seed=7)
    random_c = sample_questions(questions, 35, "random", seed=8)
    assert random_a["qid"].tolist() == random_b["qid"].tolist()
    assert random_a["qid"].tolist() != random_c["qid"].tolist()
    assert len(sample_questions(questions, None)) == 500
    assert len(sample_questions(questions, 0)) == 500  # 0 is all, as the configuration says
    with pytest.raises(ValueError):
        sample_questions(questions, -1)


def test_unreachable_hub_says_how_to_use_a_local_file(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache: nothing to fall back on
    with pytest.raises(DatasetUnavailableError) as err:
        load_hotpotqa_from_hub()
    assert "--dataset PATH" in str(err.value)
    assert "ops.hotpotqa_raw.config.source" in str(err.value)
