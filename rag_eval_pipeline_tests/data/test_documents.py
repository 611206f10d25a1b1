import json

import pandas as pd
import pytest

from rag_eval_pipeline.data.documents import Chunking, chunk_words, load_documents, merge_passages
from rag_eval_pipeline.data.knowledge_base import passage_id


def test_folder_of_markdown_text_jsonl_and_parquet(tmp_path):
    (tmp_path / "Refund policy.md").write_text("Refunds are paid within 14 days. Ask support.")
    (tmp_path / "notes.txt").write_text("Support answers in English and French.")
    (tmp_path / "faq.jsonl").write_text(
        json.dumps({"title": "Shipping", "passage": "We ship worldwide.", "id": 7})
        + "\n"
        + json.dumps({"title": "Returns", "passage": "Returns are free."})
        + "\n"
    )
    pd.DataFrame([{"title": "Warranty", "passage": "Two years."}]).to_parquet(tmp_path / "more.parquet")
    (tmp_path / "skipped.csv").write_text("not,a,document")
    loaded = load_documents(tmp_path)
    # a file of another type is listed as skipped, never ignored silently
    assert loaded.problems == ["skipped.csv: unsupported file type '.csv' (use .md, .txt, .jsonl, .parquet)"]
    by_title = loaded.passages.set_index("title")
    assert sorted(by_title.index) == ["Refund policy", "Returns", "Shipping", "Warranty", "notes"]
    assert by_title.loc["Shipping", "passage_id"] == "doc_7"
    assert by_title.loc["Returns", "passage_id"] == passage_id("Returns")
    assert list(by_title.loc["Refund policy", "sentences"]) == [
        "Refunds are paid within 14 days.",
        "Ask support.",
    ]
    assert set(loaded.versions) == {"Refund policy.md", "notes.txt", "faq.jsonl", "more.parquet"}


def test_malformed_files_and_lines_are_named_and_skipped(tmp_path):
    """A bad file is skipped whole; a bad line of a JSONL file only that line, the file's other
    documents kept."""
    (tmp_path / "good.md").write_text("Fine text.")
    (tmp_path / "empty.txt").write_text("   ")
    (tmp_path / "broken.jsonl").write_text('{"title": "A", "passage": "x"}\n{oops\n')
    (tmp_path / "untitled.jsonl").write_text('{"passage": "no title"}\n{"title": "B", "passage": ""}\n')
    loaded = load_documents(tmp_path)
    assert loaded.passages["title"].tolist() == ["A", "good"]
    assert sorted(loaded.problems) == [
        "broken.jsonl, line 2: invalid JSON (Expecting property name enclosed in double quotes)",
        "empty.txt: empty document",
        "untitled.jsonl, line 1: missing or empty 'title'",
        "untitled.jsonl, line 2: missing or empty 'passage'",
    ]


def test_chunking_is_stable_and_overlapping(tmp_path):
    words = " ".join(f"w{i}" for i in range(10))
    assert chunk_words(words, Chunking(4, 1)) == ["w0 w1 w2 w3", "w3 w4 w5 w6", "w6 w7 w8 w9"]
    assert chunk_words(words, Chunking()) == [words]
    with pytest.raises(ValueError):
        Chunking(4, 4)
    (tmp_path / "long.md").write_text(words)
    first = load_documents(tmp_path, Chunking(4, 1)).passages
    again = load_documents(tmp_path, Chunking(4, 1)).passages
    assert (
        first["passage_id"].tolist()
        == again["passage_id"].tolist()
        == [f"{passage_id('long')}#{n}" for n in range(3)]
    )
    assert first["title"].tolist() == ["long", "long", "long"]


def test_documents_replace_base_passages_of_the_same_title():
    base = pd.DataFrame(
        [
            {"passage_id": "p_a", "title": "A", "passage": "old", "sentences": ["old"]},
            {"passage_id": "p_b", "title": "B", "passage": "b", "sentences": ["b"]},
        ]
    )
    documents = pd.DataFrame(
        [{"passage_id": "p_a", "title": "A", "passage": "new", "sentences": ["new"], "source_file": "a.md"}]
    )
    merged = merge_passages(base, documents)
    assert merged.set_index("title")["passage"].to_dict() == {"B": "b", "A": "new"}
    assert merge_passages(base, documents.iloc[0:0]).equals(base.assign(language="en"))


def test_huge_unsupported_and_undecodable_files_are_named_and_skipped(tmp_path):
    from rag_eval_pipeline.answering.chat import MAX_PASSAGE_CHARS, format_passages
    from rag_eval_pipeline.data.documents import Chunking, load_documents
    from rag_eval_pipeline.retrieval.base import SearchHit

    (tmp_path / "huge.txt").write_text("word " * 300_000)  # 1.5 MB
    (tmp_path / "notes.pdf").write_bytes(b"%PDF-1.4")
    (tmp_path / "latin1.txt").write_bytes("ok\nstill ok\ncaf\xe9\n".encode("latin-1"))
    (tmp_path / "long.md").write_text(" ".join(f"w{i}" for i in range(500)))
    loaded = load_documents(tmp_path, Chunking(), max_file_bytes=1_000_000)
    assert sorted(loaded.problems) == [
        "huge.txt: 1.5 MB is over the 1.0 MB limit (dataset.max_file_mb); split it or raise the limit",
        "latin1.txt: not UTF-8 text from line 3 (it looks like cp1250): re-save it as UTF-8, or set "
        "dataset.encoding: cp1250 in the configuration file",
        "notes.pdf: unsupported file type '.pdf' (use .md, .txt, .jsonl, .parquet)",
    ]
    # long documents are chunked by default: 200 words, 40 overlapping, stable ids, same title
    chunks = loaded.passages[loaded.passages["title"] == "long"]
    assert chunks["passage_id"].tolist() == [
        f"{chunks['passage_id'].iloc[0].split('#')[0]}#{n}" for n in range(3)
    ]
    assert [len(p.split()) for p in chunks["passage"]] == [200, 200, 180]
    # and whatever a passage holds, one prompt carries at most MAX_PASSAGE_CHARS of it
    prompt = format_passages([SearchHit("p", "huge", "x" * 50_000, 1.0)])
    assert len(prompt) < MAX_PASSAGE_CHARS + 100 and prompt.endswith("[...cut]")
