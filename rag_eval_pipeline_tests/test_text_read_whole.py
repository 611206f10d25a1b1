"""Text read whole, through the command line: Korean file names and answers written decomposed
(NFD, as macOS writes names) read as their composed form; UTF-8 byte-order marks accepted; a
docs.jsonl line without a passage skipped with one warning while its file's other documents are
indexed; a 100 KB Japanese document and a 2 MB line without whitespace chunked to the chunk size;
Turkish told as Turkish; and a questions or document file in CP949, Shift-JIS or UTF-16 refused
in one line naming the file and the encoding it is in."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pandas as pd
import pytest

from rag_eval_pipeline.data.documents import DEFAULT_CHUNK_WORDS, MAX_WORD_CHARS
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.language.analysis import analyzer
from rag_eval_pipeline_tests.support.cli import in_process, rag_eval

BOM = b"\xef\xbb\xbf"


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


# (title, document, question, answer)
KOREAN = [
    (
        "한양도성",
        "한양도성은 조선의 수도 한양을 둘러싼 성곽이다. 1396년에 태조가 쌓기 시작했으며 "
        "둘레는 약 18.6킬로미터이다.",
        "조선의 수도는 어디였습니까?",
        "한양",
    ),
    (
        "광화문",
        "광화문은 경복궁의 남쪽 정문이다. 1395년에 처음 세워졌고 한국 전쟁 때 불에 탔다가 "
        "2010년에 복원되었다.",
        "경복궁의 남쪽 정문은 무엇입니까?",
        "광화문",
    ),
]
TURKISH = [
    (
        "Boğaziçi Köprüsü",
        "Boğaziçi Köprüsü, İstanbul'da Avrupa ve Asya yakalarını birbirine bağlayan asma köprüdür. "
        "Köprü 30 Ekim 1973 tarihinde hizmete açıldı ve uzunluğu 1560 metredir.",
        "Boğaziçi Köprüsü hangi yıl açıldı?",
        "1973",
    ),
    (
        "Ankara",
        "Ankara, Türkiye'nin başkenti ve İstanbul'dan sonra en kalabalık ikinci şehridir. Şehir 13 "
        "Ekim 1923 tarihinde başkent ilan edildi.",
        "Ankara hangi tarihte başkent ilan edildi?",
        "13 Ekim 1923",
    ),
]
JAPANESE_100KB = (
    "東京スカイツリーは東京都墨田区にある電波塔で、2012年に開業した。高さは634メートルである。" * 800
)
UNBROKEN_2MB = "서울은대한민국의수도이다" * 60_000  # 720,000 Hangul syllables, 2.16 MB, not one space


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()


def write_mixed_project(folder: Path) -> Path:
    """Korean documents named and written in NFD with questions and answers in NFD; a Turkish
    docs.jsonl with a BOM and an empty passage on its second line; a 100 KB Japanese document and
    a 2 MB line; a questions file with a BOM; answer files (no contexts), the same answers in NFD
    and NFC, and wrong ones."""
    docs = folder / "docs"
    docs.mkdir(parents=True)
    for title, text, _, _ in KOREAN:
        (docs / f"{nfd(title)}.txt").write_text(nfd(text), encoding="utf-8")
    lines = [{"title": title, "passage": text} for title, text, _, _ in TURKISH]
    lines.insert(1, {"title": "Boş", "passage": ""})
    (docs / "türkçe.jsonl").write_bytes(BOM + _jsonl(lines))
    (docs / "東京.txt").write_text(JAPANESE_100KB, encoding="utf-8")
    (docs / "blob.txt").write_text(UNBROKEN_2MB, encoding="utf-8")
    cases = [(f"ko-{n}", *case) for n, case in enumerate(KOREAN)] + [
        (f"tr-{n}", *case) for n, case in enumerate(TURKISH)
    ]
    questions = [
        # relevant_titles composed, as a team types them; the documents' file names are not
        {"id": key, "question": nfd(question), "answer": nfd(answer), "relevant_titles": [title]}
        for key, title, _, question, answer in cases
    ]
    (folder / "questions.jsonl").write_bytes(BOM + _jsonl(questions))
    for form in ("NFD", "NFC"):
        answers = [{"qid": key, "answer": unicodedata.normalize(form, a)} for key, _, _, _, a in cases]
        (folder / f"{form.lower()}.jsonl").write_bytes(_jsonl(answers))
    (folder / "wrong.jsonl").write_bytes(_jsonl([{"qid": key, "answer": "1900"} for key, *_ in cases]))
    config = folder / "rag_eval.yaml"
    config.write_text(
        """
dataset:
  kind: custom
  questions: questions.jsonl
  documents: docs
  sample_size: 0
answer_models:
  - {name: nfd-answers, provider: file, path: nfd.jsonl}
  - {name: nfc-answers, provider: file, path: nfc.jsonl}
  - {name: wrong-answers, provider: file, path: wrong.jsonl}
judges: [reference]
""",
        encoding="utf-8",
    )
    return config


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("read-whole")
    config = write_mixed_project(folder)
    done = rag_eval("--config", str(config), "--dagster-home", str(folder / "home"), "run", cwd=folder)
    assert done.returncode == 0, done.stderr + done.stdout
    return folder, done.stdout + done.stderr


def _scores(home: Path, model: str) -> pd.DataFrame:
    scores = load_asset(open_instance(str(home)), "judge_scores", model)
    return scores.set_index("qid")[["exact_match", "f1", "correctness"]].sort_index()


def test_decomposed_names_and_answers_score_as_composed(mixed_run):
    folder, _ = mixed_run
    home = folder / "home"
    passages = load_asset(open_instance(str(home)), "kb_passages")
    assert {"한양도성", "광화문"} <= set(passages["title"])  # NFC titles, matching the list's
    cases = load_asset(open_instance(str(home)), "judgement_list")
    assert cases.set_index("qid").loc["ko-0", "gold_titles"].tolist() == ["한양도성"]
    assert cases.set_index("qid").loc["ko-0", "answer"] == "한양"  # composed
    decomposed, composed = _scores(home, "nfd-answers"), _scores(home, "nfc-answers")
    pd.testing.assert_frame_equal(decomposed, composed)
    assert (composed == 1.0).all().all(), composed


def test_an_empty_passage_line_is_one_warning_and_its_file_is_indexed(mixed_run):
    folder, output = mixed_run
    passages = load_asset(open_instance(str(folder / "home")), "kb_passages")
    assert {"Boğaziçi Köprüsü", "Ankara"} <= set(passages["title"]) and "Boş" not in set(passages["title"])
    warned = [line for line in output.splitlines() if "türkçe.jsonl" in line]
    assert warned == ["warning: skipped: türkçe.jsonl, line 2: missing or empty 'passage'"]
    assert "not in the knowledge base" not in output


def test_long_and_unbroken_documents_are_chunked_to_the_chunk_size(mixed_run):
    folder, _ = mixed_run
    passages = load_asset(open_instance(str(folder / "home")), "kb_passages")
    japanese = passages[passages["title"] == "東京"]
    assert len(japanese) > 1 and set(japanese["language"]) == {"ja"}
    words = analyzer("ja")
    assert max(sum(map(words.is_word, words.segments(p))) for p in japanese["passage"]) <= DEFAULT_CHUNK_WORDS
    unbroken = passages[passages["title"] == "blob"]
    assert len(unbroken) > 1
    assert unbroken["passage"].str.len().max() <= DEFAULT_CHUNK_WORDS * MAX_WORD_CHARS
    assert "".join(unbroken["passage"].iloc[0].split()) == unbroken["passage"].iloc[0]  # cut, not spaced


def test_turkish_is_told_as_turkish(mixed_run, capsys):
    folder, _ = mixed_run
    home = folder / "home"
    cases = load_asset(open_instance(str(home)), "judgement_list").set_index("qid")
    assert cases.loc[["tr-0", "tr-1"], "language"].tolist() == ["tr", "tr"]
    assert set(cases.loc[["tr-0", "tr-1"], "language_source"]) == {"detected"}
    passages = load_asset(open_instance(str(home)), "kb_passages")
    assert set(passages.loc[passages["title"] == "Ankara", "language"]) == {"tr"}
    code, out, _ = in_process(
        capsys, "--config", str(folder / "rag_eval.yaml"), "--dagster-home", str(home), "explain", "tr-0",
        "--model", "nfc-answers",
    )  # fmt: skip
    assert code == 0 and "Turkish (tr, detected)" in out and "Spanish" not in out


KOREAN_QUESTIONS = [
    {"question": question, "answer": answer, "relevant_titles": [title]}
    for title, _, question, answer in KOREAN
]
JAPANESE_QUESTIONS = [
    {"question": "東京スカイツリーは何年に開業しましたか？", "answer": "2012年", "relevant_titles": ["東京"]}
]


def _refusal_project(folder: Path, questions: bytes, document: tuple[str, str, str]) -> Path:
    """A project of one document (name, text, the encoding it is written in) and a questions file."""
    (folder / "docs").mkdir()
    name, text, encoding = document
    (folder / "docs" / name).write_bytes(text.encode(encoding))
    (folder / "questions.jsonl").write_bytes(questions)
    config = folder / "rag_eval.yaml"
    config.write_text(
        "dataset: {kind: custom, questions: questions.jsonl, documents: docs, sample_size: 0}\n"
        "answer_models:\n  - {name: oracle, provider: offline, model: oracle}\njudges: [reference]\n",
        encoding="utf-8",
    )
    return config


KOREAN_DOCUMENT = "\n".join(text for _, text, _, _ in KOREAN)
JAPANESE_DOCUMENT = JAPANESE_100KB[:2_000]


KO_QUESTIONS, JA_QUESTIONS = _jsonl(KOREAN_QUESTIONS), _jsonl(JAPANESE_QUESTIONS)
KO_DOCUMENT, JA_DOCUMENT = ("한양도성.txt", KOREAN_DOCUMENT), ("東京.txt", JAPANESE_DOCUMENT)
QUESTIONS_FILE = "questions.jsonl"


@pytest.mark.parametrize(
    ("questions", "document", "bad_file", "found"),
    [
        (KO_QUESTIONS.decode().encode("cp949"), (*KO_DOCUMENT, "utf-8"), QUESTIONS_FILE, "cp949"),
        (JA_QUESTIONS.decode().encode("shift_jis"), (*JA_DOCUMENT, "utf-8"), QUESTIONS_FILE, "cp932"),
        (KO_QUESTIONS.decode().encode("utf-16"), (*KO_DOCUMENT, "utf-8"), QUESTIONS_FILE, "utf_16"),
        (KO_QUESTIONS, (*KO_DOCUMENT, "cp949"), KO_DOCUMENT[0], "cp949"),
        (KO_QUESTIONS, (*KO_DOCUMENT, "utf-16"), KO_DOCUMENT[0], "utf_16"),
        (JA_QUESTIONS, (*JA_DOCUMENT, "shift_jis"), JA_DOCUMENT[0], "cp932"),
    ],
    ids=["questions-cp949", "questions-sjis", "questions-utf16", "doc-cp949", "doc-utf16", "doc-sjis"],
)
def test_a_file_in_another_encoding_is_one_error_line(tmp_path, capsys, questions, document, bad_file, found):
    config = _refusal_project(tmp_path, questions, document)
    code, _, err = in_process(capsys, "--config", str(config), "--dagster-home", str(tmp_path / "h"), "run")
    assert code == 2
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: ") and bad_file in err and f"it looks like {found}" in err
    assert "re-save it as UTF-8, or set dataset.encoding" in err
    assert not (tmp_path / "h" / "storage").exists() or not any((tmp_path / "h" / "storage").rglob("kb_*"))


def test_an_encoding_key_reads_a_file_in_that_encoding(tmp_path, capsys):
    questions = KO_QUESTIONS.decode().encode("cp949")
    config = _refusal_project(tmp_path, questions, (*KO_DOCUMENT, "cp949"))
    config.write_text(config.read_text().replace("sample_size: 0", "sample_size: 0, encoding: cp949"))
    code, out, err = in_process(capsys, "--config", str(config), "titles")
    assert code == 0, err
    assert "한양도성\t" in out and "성곽이다" in out
    config.write_text(config.read_text().replace("cp949", "klingon-8"))
    code, _, err = in_process(capsys, "--config", str(config), "titles")
    assert code == 2 and "unknown encoding 'klingon-8'" in err and len(err.splitlines()) == 1


def test_an_agent_without_contexts_gets_no_retrieval_diagnosis(mixed_run, capsys):
    """A wrong answer of an agent that returns no contexts cannot be told a retrieval miss from a
    reasoning error: its diagnosis is absent, and `explain` says why."""
    folder, _ = mixed_run
    home = folder / "home"
    scores = load_asset(open_instance(str(home)), "judge_scores", "wrong-answers")
    assert (scores["correctness"] == 0).all() and scores["diagnosis"].isna().all()
    assert set(load_asset(open_instance(str(home)), "judge_scores", "nfc-answers")["diagnosis"]) == {"ok"}
    code, out, _ = in_process(
        capsys, "--config", str(folder / "rag_eval.yaml"), "--dagster-home", str(home), "explain", "ko-0",
        "--model", "wrong-answers",
    )  # fmt: skip
    assert code == 0 and "reasoning_error" not in out
    assert "no diagnosis: the agent returns no contexts" in out
