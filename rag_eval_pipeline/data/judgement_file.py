"""A judgement list of the user's own questions: JSONL, CSV or parquet with ``question``,
``answer`` and optionally ``id``, ``language`` (ISO 639-1; detected when absent),
``relevant_ids`` or ``relevant_titles``, ``tags``,
``answerable``, ``reference_pending`` (the answer is still to be written: an empty answer is then
no mistake) and ``documents`` (passages that come with the case, ``[{id, title, passage}]``: they
join the knowledge base, as a HotpotQA question's paragraphs do).

Every problem is reported with its file and line (or row), all at once, so one pass fixes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rag_eval_pipeline.data.documents import DOCUMENT_COLUMNS, Chunking, merge_passages, passages_of_records
from rag_eval_pipeline.data.knowledge_base import (
    JUDGEMENT_COLUMNS,
    LANGUAGE_ASSUMED,
    LANGUAGE_DETECTED,
    LANGUAGE_SET,
    PASSAGE_COLUMNS,
    REFERENCE_PENDING,
)
from rag_eval_pipeline.data.rows import RowFileError, cell_list, empty_cell, first_row_columns, read_rows
from rag_eval_pipeline.data.visual_labels import VISUAL_LABEL_COLUMNS, visual_labels
from rag_eval_pipeline.language.detect import resolve_languages
from rag_eval_pipeline.language.table import UnknownLanguageError, language
from rag_eval_pipeline.metrics.freshness import judgement_list_version
from rag_eval_pipeline.metrics.reference import DEFAULT_ABSTENTION, AbstentionPolicy

# gold_images, gold_boxes: the case's image labels (data/visual_labels.py)
CUSTOM_JUDGEMENT_COLUMNS = [*JUDGEMENT_COLUMNS, "tags", REFERENCE_PENDING, *VISUAL_LABEL_COLUMNS]
INLINE_DOCUMENTS = "documents"


class JudgementFileError(RowFileError):
    """Every problem of a judgement file, each naming the file and the line or row."""


def _flag(
    value: Any, location: str, problems: list[str], name: str = "answerable", absent: bool = True
) -> bool:
    """A true/false column (JSON, parquet or CSV text); ``absent`` when the cell is empty."""
    if empty_cell(value):
        return absent
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    problems.append(f"{location}: {name} must be true or false, got {value!r}")
    return absent


UNANSWERABLE_TRUTH = "unknown"


def _row_languages(
    rows: list[tuple[str, dict[str, Any]]], declared: str | None, problems: list[str]
) -> list[tuple[str, str]]:
    """Each row's language and how it was found: the row's own ``language``, else ``declared``
    (the dataset's), else detected from its question and answer."""
    own: list[str | None] = []
    for location, row in rows:
        value = row.get("language")
        if empty_cell(value):
            own.append(None)
            continue
        try:
            own.append(language(str(value)).code)
        except UnknownLanguageError as err:
            problems.append(f"{location}: {err}")
            own.append(None)
    texts = [f"{row.get('question') or ''}\n{row.get('answer') or ''}" for _, row in rows]
    found = resolve_languages(texts, declared, own)
    return [
        (d.code, LANGUAGE_SET if (o or declared) else LANGUAGE_DETECTED if d.told else LANGUAGE_ASSUMED)
        for d, o in zip(found, own)
    ]


def read_judgement_file(
    path: str | Path,
    passages: pd.DataFrame,
    abstention: AbstentionPolicy = DEFAULT_ABSTENTION,
    declared_language: str | None = None,
    image_sizes: Mapping[str, tuple[int, int]] | None = None,
    encoding: str | None = None,
) -> pd.DataFrame:
    """The judgement list, checked against the knowledge base ``passages`` (passage_id, title,
    and the user's own ids as ``doc_<id>``). Without relevance labels the gold columns are
    empty, so the reference retrieval metrics are absent rather than 0. A question the documents
    cannot answer is ``answerable: false`` (or has an abstention such as "unknown" as its
    answer): declining to answer it is right. Each case's language is its row's ``language``,
    else ``declared_language``, else detected from its question and answer. ``gold_images``
    and ``gold_boxes`` are checked against ``image_sizes`` (the image catalog's). The file is
    UTF-8 (a BOM accepted) unless ``encoding`` says otherwise; every string is read in NFC."""
    path = Path(path)
    rows, problems = _rows_with_question_and_answer(path, encoding)
    by_id, titles = _titles_by_id(passages), set(passages["title"])
    seen: dict[str, str] = {}
    records = []
    languages = _row_languages(rows, declared_language, problems)
    for number, ((location, row), (code, source)) in enumerate(zip(rows, languages), start=1):
        qid = str(row.get("id") or "").strip() or f"q{number:04d}"
        question, answer, answerable, pending = _question_and_answer(
            row, location, code, abstention, problems
        )
        if qid in seen:
            problems.append(f"{location}: duplicate id '{qid}' (first at {seen[qid]})")
        seen.setdefault(qid, location)
        gold = _gold_titles(row, location, by_id, titles, problems)
        tags = cell_list(row.get("tags"))
        records.append(
            {
                "qid": qid,
                "question": question,
                "answer": answer,
                "type": tags[0] if tags else "custom",
                "level": "custom",
                "gold_titles": gold,
                # a relevant passage stands for all of its sentences (sent_id -1)
                "gold_facts": [{"title": t, "sent_id": -1} for t in gold],
                "tags": tags,
                "answerable": answerable,
                "language": code,
                "language_source": source,
                REFERENCE_PENDING: pending,
                **visual_labels(row, location, image_sizes, problems),
            }
        )
    if problems:
        raise JudgementFileError(path, problems)
    return pd.DataFrame(records, columns=CUSTOM_JUDGEMENT_COLUMNS)


def _rows_with_question_and_answer(
    path: Path, encoding: str | None
) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """The file's rows and the problems of those that could not be read; a file that is not
    there, holds no row, or has no ``question`` or ``answer`` column: its error, at once."""
    if not path.is_file():
        raise JudgementFileError(path, ["file not found"])
    try:
        rows, problems = read_rows(path, "an object with question and answer", encoding)
    except RowFileError as err:
        raise JudgementFileError(path, err.bare_problems) from None
    if not rows:
        raise JudgementFileError(path, problems or ["no questions"])
    columns = set().union(*(r.keys() for _, r in rows))
    missing = {"question", "answer"} - columns
    if missing:
        found = ", ".join(sorted(columns))
        raise JudgementFileError(
            path, [*problems, f"missing column(s): {', '.join(sorted(missing))} (found: {found})"]
        )
    return rows, problems


def _titles_by_id(passages: pd.DataFrame) -> dict[str, str]:
    """Each passage's title by its id, and by the user's own id (``doc_<id>``, each of its chunks)."""
    by_id = {}
    for pid, title in zip(passages["passage_id"], passages["title"]):
        by_id[pid] = title
        if pid.startswith("doc_"):
            by_id[pid[4:].split("#")[0]] = title  # the user's own id, also for each of its chunks
    return by_id


def _question_and_answer(
    row: Mapping[str, Any], location: str, code: str, abstention: AbstentionPolicy, problems: list[str]
) -> tuple[str, str, bool, bool]:
    """The row's question and reference answer, whether the documents answer it and whether its
    answer is still to be written; an empty question, or an empty answer that is neither, is a
    problem."""
    question, answer = str(row.get("question") or "").strip(), str(row.get("answer") or "").strip()
    answerable = _flag(row.get("answerable"), location, problems)
    pending = not answer and _flag(row.get(REFERENCE_PENDING), location, problems, REFERENCE_PENDING, False)
    if answerable and answer and abstention.matches(answer, code):
        answerable = False  # an "unknown" truth: the documents do not answer it
    if not question:
        problems.append(f"{location}: empty question")
    if not answer and answerable and not pending:
        problems.append(
            f"{location}: empty answer (or answerable: false for a question the documents cannot "
            f"answer, or {REFERENCE_PENDING}: true while it is still to be written)"
        )
    return question, answer if answer or pending else UNANSWERABLE_TRUTH, answerable, pending


def _gold_titles(
    row: Mapping[str, Any], location: str, by_id: Mapping[str, str], titles: set[str], problems: list[str]
) -> list[str]:
    """The titles the row's ``relevant_ids`` and ``relevant_titles`` name, once each; one the
    knowledge base does not hold is a problem."""
    gold: list[str] = []
    for relevant in cell_list(row.get("relevant_ids")):
        if relevant not in by_id:
            problems.append(f"{location}: relevant id '{relevant}' is not in the knowledge base")
        else:
            gold.append(by_id[relevant])
    for title in cell_list(row.get("relevant_titles")):
        if title not in titles:
            problems.append(f"{location}: relevant title '{title}' is not in the knowledge base")
        else:
            gold.append(title)
    return list(dict.fromkeys(gold))


def judgement_file_documents(
    path: str | Path,
    chunking: Chunking | None = None,
    declared_language: str | None = None,
    encoding: str | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """The passages the file's cases carry (``documents``), as knowledge-base rows, and the
    problems of those that are not ``{title, passage[, id]}`` (file and line named). A file
    without the column carries none."""
    path = Path(path)
    if not path.is_file():
        return pd.DataFrame(columns=DOCUMENT_COLUMNS), []
    try:
        rows, _ = read_rows(path, "an object with question and answer", encoding)
    except RowFileError:
        return pd.DataFrame(columns=DOCUMENT_COLUMNS), []  # said by read_judgement_file
    passages: list[dict] = []
    problems: list[str] = []
    for location, row in rows:
        documents = row.get(INLINE_DOCUMENTS)
        if empty_cell(documents):
            continue
        if hasattr(documents, "tolist"):
            documents = documents.tolist()
        if not isinstance(documents, list):
            problems.append(f"{path}, {location}: documents must be a list of {{title, passage}}")
            continue
        try:
            passages += passages_of_records(
                [(f"{location}, document {n}", d) for n, d in enumerate(documents, start=1)],
                chunking or Chunking(),
                path.name,
                declared_language,
            )
        except ValueError as err:
            problems.append(f"{path}, {err}")
    frame = pd.DataFrame(passages, columns=DOCUMENT_COLUMNS)
    return frame.drop_duplicates("passage_id", keep="first").reset_index(drop=True), problems


def is_judgement_list(path: str | Path, encoding: str | None = None) -> bool:
    """Whether a dataset file is a judgement list of this project's own format (rows with
    ``question`` and ``answer`` and no HotpotQA ``context``), rather than HotpotQA's."""
    path = Path(path)
    if not path.is_file() or path.suffix.lower() not in (".jsonl", ".csv", ".parquet"):
        return False
    try:
        columns = first_row_columns(path, encoding)
    except (RowFileError, ValueError, OSError):  # UnicodeDecodeError is a ValueError
        return False
    return {"question", "answer"} <= columns and "context" not in columns


def rows_version(rows: Sequence[Mapping[str, Any]]) -> str:
    """The version a judgement list's rows (this format) read as: the judgement_list asset's
    content hash, what ``rag-eval gate --judgement-list`` pins."""
    cases = pd.DataFrame(
        {
            "qid": [str(r["id"]) for r in rows],
            "question": [r["question"] for r in rows],
            "answer": [r["answer"] for r in rows],
            "answerable": [r.get("answerable", True) for r in rows],
        }
    )
    return judgement_list_version(cases) if len(rows) else "empty"


def custom_knowledge_base(
    questions: str | Path,
    documents: pd.DataFrame,
    chunking: Chunking | None = None,
    declared_language: str | None = None,
    encoding: str | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """The knowledge base of a custom dataset: the passages the judgement list's cases carry and
    the user's ``documents`` (a document replacing a carried passage of the same title), with
    the problems of the carried ones. What the asset builds and the preflight checks against."""
    carried, problems = judgement_file_documents(questions, chunking, declared_language, encoding)
    return merge_passages(carried[PASSAGE_COLUMNS], documents).reset_index(drop=True), problems
