"""Every file a user brings is read the same way: UTF-8 with a byte-order mark accepted (JSONL,
CSV, a HotpotQA JSON list, the YAML configuration, text documents), every string in NFC however
the file spelled it (a \\u escape of a decomposed syllable included), and a segmenter never given
more than it accepts."""

import json
import unicodedata

import pandas as pd

from rag_eval_pipeline.config import load_settings
from rag_eval_pipeline.data.documents import load_documents
from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.judgement_file import is_judgement_list, read_judgement_file
from rag_eval_pipeline.language.segmenters import SUDACHI_MAX_CHARS, bounded_pieces, sudachi_words
from rag_eval_pipeline_tests.support import to_original_layout

BOM = b"\xef\xbb\xbf"
SEOUL_NFD = unicodedata.normalize("NFD", "서울")
PASSAGES = pd.DataFrame({"passage_id": ["doc_1"], "title": ["서울"], "passage": ["서울은 수도이다."]})


def test_a_bom_is_accepted_and_text_read_in_nfc_in_every_row_file(tmp_path):
    row = {"question": f"{SEOUL_NFD}은 어디입니까?", "answer": SEOUL_NFD, "relevant_titles": [SEOUL_NFD]}
    escaped = tmp_path / "escaped.jsonl"  # ASCII only: the NFD is in \u escapes
    escaped.write_bytes(BOM + (json.dumps(row) + "\n").encode())
    csv = tmp_path / "cases.csv"
    csv.write_bytes(
        BOM + f"question,answer,relevant_titles\n{row['question']},{SEOUL_NFD},{SEOUL_NFD}\n".encode()
    )
    for path in (escaped, csv):
        assert is_judgement_list(path), path
        cases = read_judgement_file(path, PASSAGES, declared_language="ko")
        assert cases["answer"].tolist() == ["서울"] and cases["gold_titles"].tolist() == [["서울"]], path
        assert cases["question"].tolist() == ["서울은 어디입니까?"], path


def test_a_bom_is_accepted_in_a_hotpotqa_file_and_the_configuration(tmp_path, hub_rows):
    listed = tmp_path / "original.json"
    listed.write_bytes(BOM + json.dumps([to_original_layout(r) for r in hub_rows[:2]]).encode())
    lines = tmp_path / "hub.jsonl"
    lines.write_bytes(BOM + "".join(json.dumps(r) + "\n" for r in hub_rows[:2]).encode())
    assert read_hotpotqa_file(listed)["qid"].tolist() == read_hotpotqa_file(lines)["qid"].tolist()
    decomposed = dict(hub_rows[0], question=f"{SEOUL_NFD}?")
    decomposed["context"] = dict(
        decomposed["context"], sentences=[[SEOUL_NFD], *decomposed["context"]["sentences"][1:]]
    )
    lines.write_text(json.dumps(decomposed) + "\n")  # escaped: the NFD is in \u escapes
    read = read_hotpotqa_file(lines).iloc[0]
    assert read["question"] == "서울?" and list(read["context_sentences"][0]) == ["서울"]
    config = tmp_path / "rag_eval.yaml"
    config.write_bytes(BOM + b"dataset: {sample_size: 3}\n")
    assert load_settings(config).dataset.sample_size == 3


def test_documents_with_a_bom_and_decomposed_names_read_composed(tmp_path):
    (tmp_path / f"{SEOUL_NFD}.md").write_bytes(BOM + f"{SEOUL_NFD}은 대한민국의 수도이다.".encode())
    loaded = load_documents(tmp_path)
    assert loaded.passages["title"].tolist() == ["서울"]
    assert loaded.passages["passage"].tolist() == ["서울은 대한민국의 수도이다."]
    assert list(loaded.versions) == ["서울.md"] and loaded.problems == []


def test_a_segmenter_with_a_limit_gets_its_text_in_pieces():
    text = "東京は日本の首都である。" * 6_000 + "あ" * 30_000  # 66,000 characters: 198 KB
    pieces = bounded_pieces(text, SUDACHI_MAX_CHARS)
    assert "".join(pieces) == text and max(map(len, pieces)) <= SUDACHI_MAX_CHARS
    assert pieces[0].endswith("。")  # cut at a sentence's end where there is one
    assert "".join(sudachi_words(text)) == text  # Sudachi alone refuses over 49,149 bytes
