"""Load HotpotQA (distractor setting) from the hub or a local file into one normalized table.

Two layouts carry the same content: the Hugging Face row format (``id``, ``context`` as
``{"title": [...], "sentences": [[...]]}``) and the original release (``_id``, ``context`` as
``[[title, [sentences]], ...]``). Both become the same columns, listed in ``QUESTION_COLUMNS``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rag_eval_pipeline.common.text import (
    SNIFFED_BYTES,
    UTF8_BOM,
    FileEncodingError,
    guessed_encoding,
)

QUESTION_SCHEMA = pa.schema(
    [
        ("qid", pa.string()),
        ("question", pa.string()),
        ("answer", pa.string()),
        ("type", pa.string()),
        ("level", pa.string()),
        ("context_titles", pa.list_(pa.string())),
        ("context_sentences", pa.list_(pa.list_(pa.string()))),
        ("supporting_titles", pa.list_(pa.string())),
        ("supporting_sent_ids", pa.list_(pa.int64())),
    ]
)
QUESTION_COLUMNS = QUESTION_SCHEMA.names
ROWS_PER_BATCH = 2_000  # questions read, and turned into Arrow, at a time

HUB_DATASET = "hotpotqa/hotpot_qa"
HUB_CONFIG = "distractor"
HUB_SPLIT = "validation"


class MalformedRowError(ValueError):
    """A row of a dataset file that cannot be read; names the file and the line (or row)."""

    def __init__(self, path: str | Path, location: str, reason: str) -> None:
        self.path = str(path)
        self.location = location
        self.reason = reason
        super().__init__(f"{self.path}, {location}: {reason}")


BUNDLED = "bundled"  # the 500-question sample shipped in the package: works with no network
HUB = "hub"
BUNDLED_FILE = Path(__file__).resolve().parent / "samples" / "hotpotqa_dev_distractor_500.jsonl"


class EmptyDatasetError(ValueError):
    """A dataset file without a single question: refused before anything is written."""


class DatasetUnavailableError(RuntimeError):
    """The Hugging Face hub could not be reached; the message says how to use a local file."""


def normalize_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """One question in either layout -> a dict of ``QUESTION_COLUMNS``; raises ValueError on bad rows."""
    if not isinstance(row, Mapping):
        raise ValueError(f"expected a JSON object, got {type(row).__name__}")
    qid = row.get("id", row.get("_id"))
    if not isinstance(qid, str) or not qid:
        raise ValueError("missing question id ('id' or '_id')")
    for field in ("question", "answer"):
        if not isinstance(row.get(field), str):
            raise ValueError(f"question {qid}: missing or non-text field '{field}'")
    titles, sentences = _context(row.get("context"), qid)
    fact_titles, fact_sent_ids = _supporting_facts(row.get("supporting_facts"), qid)
    return {
        "qid": qid,
        "question": row["question"],
        "answer": row["answer"],
        "type": str(row.get("type") or "unknown"),
        "level": str(row.get("level") or "unknown"),
        "context_titles": titles,
        "context_sentences": sentences,
        "supporting_titles": fact_titles,
        "supporting_sent_ids": fact_sent_ids,
    }


def _context(context: Any, qid: str) -> tuple[list[str], list[list[str]]]:
    if isinstance(context, Mapping):  # hub layout
        titles, sentences = context.get("title"), context.get("sentences")
        if not isinstance(titles, list) or not isinstance(sentences, list):
            raise ValueError(f"question {qid}: 'context' needs 'title' and 'sentences' lists")
        if len(titles) != len(sentences):
            raise ValueError(f"question {qid}: {len(titles)} context titles but {len(sentences)} paragraphs")
        pairs = list(zip(titles, sentences))
    elif isinstance(context, list):  # original layout
        if not all(isinstance(p, list) and len(p) == 2 for p in context):
            raise ValueError(f"question {qid}: 'context' entries must be [title, [sentences]]")
        pairs = [(p[0], p[1]) for p in context]
    else:
        raise ValueError(f"question {qid}: missing 'context'")
    for title, sents in pairs:
        if not isinstance(title, str) or not isinstance(sents, list):
            raise ValueError(f"question {qid}: a context paragraph lacks a title or sentence list")
        if not all(isinstance(s, str) for s in sents):
            raise ValueError(f"question {qid}: paragraph '{title}' has a non-text sentence")
    return [t for t, _ in pairs], [list(s) for _, s in pairs]


def _supporting_facts(facts: Any, qid: str) -> tuple[list[str], list[int]]:
    if isinstance(facts, Mapping):
        titles, sent_ids = facts.get("title"), facts.get("sent_id")
        if not isinstance(titles, list) or not isinstance(sent_ids, list) or len(titles) != len(sent_ids):
            raise ValueError(f"question {qid}: 'supporting_facts' needs equal 'title' and 'sent_id' lists")
        pairs = list(zip(titles, sent_ids))
    elif isinstance(facts, list):
        if not all(isinstance(f, list) and len(f) == 2 for f in facts):
            raise ValueError(f"question {qid}: 'supporting_facts' entries must be [title, sent_id]")
        pairs = [(f[0], f[1]) for f in facts]
    elif facts is None:
        pairs = []
    else:
        raise ValueError(f"question {qid}: unreadable 'supporting_facts'")
    if not all(isinstance(t, str) and isinstance(i, int) and not isinstance(i, bool) for t, i in pairs):
        raise ValueError(f"question {qid}: supporting facts must be (title, integer sentence id)")
    return [t for t, _ in pairs], [int(i) for _, i in pairs]


def _not_utf8(path: Path) -> str:
    """Why a HotpotQA file cannot be read, naming the encoding it looks like."""
    with path.open("rb") as file:
        head = file.read(SNIFFED_BYTES)
    return FileEncodingError(path, guessed_encoding(head), settable=False).reason


def _records_with_location(path: Path) -> Iterator[tuple[str, Any]]:
    """Yield (location, parsed record) for JSON list, JSONL or parquet files: JSONL line by line
    and parquet a batch of rows at a time, so a large file is never held whole as text."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        yield from _parquet_records(path)
        return
    if suffix == ".jsonl" or (suffix != ".json" and _first_character(path) != "["):
        yield from _jsonl_records(path)
        return
    data = path.read_bytes()  # the original release: one JSON list
    try:
        text = data.decode("utf-8-sig")  # a BOM accepted
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise MalformedRowError(path, f"line {line}", _not_utf8(path)) from None
    del data
    yield from _json_list_items(path, text)


def _first_character(path: Path) -> str:
    """The file's first character that is not white space ('' for an empty file)."""
    with path.open("rb") as file:
        while chunk := file.read(4096):
            stripped = chunk.removeprefix(UTF8_BOM).lstrip()
            if stripped:
                return stripped[:1].decode("latin-1")
    return ""


def _jsonl_records(path: Path) -> Iterator[tuple[str, Any]]:
    with path.open("rb") as file:
        for line_no, raw in enumerate(file, start=1):
            try:
                line = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")  # a BOM accepted
            except UnicodeDecodeError:
                raise MalformedRowError(path, f"line {line_no}", _not_utf8(path)) from None
            if not line.strip():
                continue
            try:
                yield f"line {line_no}", json.loads(line)
            except json.JSONDecodeError as err:
                raise MalformedRowError(path, f"line {line_no}", f"invalid JSON ({err.msg})") from err


def _parquet_records(path: Path) -> Iterator[tuple[str, Any]]:
    index = 0
    try:
        batches = pq.ParquetFile(path).iter_batches(batch_size=ROWS_PER_BATCH)
        while (batch := next(batches, None)) is not None:
            for record in batch.to_pylist():
                index += 1
                yield f"row {index}", record
    except (OSError, pa.ArrowException) as err:  # truncated, or not parquet at all
        raise MalformedRowError(path, "the file", f"not a readable parquet file ({err})") from err


def _json_list_items(path: Path, text: str) -> Iterator[tuple[str, Any]]:
    """Decode a top-level JSON list item by item so that an error can name the item's line."""
    decoder = json.JSONDecoder()
    pos = _skip_ws(text, 0)
    if pos >= len(text) or text[pos] != "[":
        raise MalformedRowError(path, "line 1", "expected a JSON list of questions")
    pos = _skip_ws(text, pos + 1)
    if pos < len(text) and text[pos] == "]":
        return
    while True:
        line = text.count("\n", 0, pos) + 1
        try:
            item, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as err:
            raise MalformedRowError(path, f"line {err.lineno}", f"invalid JSON ({err.msg})") from err
        yield f"line {line}", item
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == "]":
            return
        line = text.count("\n", 0, pos) + 1
        raise MalformedRowError(path, f"line {line}", "expected ',' or ']' between questions")


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _nfc_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Every string of the batch in NFC, by Arrow's kernel (a Python pass over each question's
    sixty sentences would cost seconds a hundred thousand questions)."""
    return pa.RecordBatch.from_arrays([_nfc_array(column) for column in batch.columns], schema=batch.schema)


def _nfc_array(array: pa.Array) -> pa.Array:
    if pa.types.is_string(array.type):
        return pc.utf8_normalize(array, form="NFC")
    if pa.types.is_list(array.type):  # built here from rows: its offsets start at 0, never null
        return pa.ListArray.from_arrays(array.offsets, _nfc_array(array.values), type=array.type)
    return array


def question_table(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Normalized rows -> the question table, its columns Arrow-backed: a question's ten
    paragraphs are held as Arrow strings, not as Python objects (about a fifth of the memory),
    and the rows are taken ``ROWS_PER_BATCH`` at a time, so no second copy of them is made."""
    batches, batch = [], []
    for row in rows:
        batch.append(row)
        if len(batch) == ROWS_PER_BATCH:
            batches.append(_nfc_batch(pa.RecordBatch.from_pylist(batch, schema=QUESTION_SCHEMA)))
            batch = []
    if batch:
        batches.append(_nfc_batch(pa.RecordBatch.from_pylist(batch, schema=QUESTION_SCHEMA)))
    return pa.Table.from_batches(batches, schema=QUESTION_SCHEMA).to_pandas(types_mapper=pd.ArrowDtype)


def read_hotpotqa_file(path: str | Path) -> pd.DataFrame:
    """Read a local HotpotQA file (JSON list, JSONL or parquet, either layout) into the question table."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"HotpotQA file not found: {path}")
    questions = question_table(_checked_rows(path))
    if questions.empty:
        raise EmptyDatasetError(f"no questions in {path}")
    return questions


def _checked_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The file's questions normalized; a bad or repeated one stops the read, named by its line."""
    seen: dict[str, str] = {}
    for location, record in _records_with_location(path):
        try:
            row = normalize_row(record)
        except ValueError as err:
            raise MalformedRowError(path, location, str(err)) from err
        if row["qid"] in seen:
            raise MalformedRowError(
                path, location, f"duplicate question id {row['qid']} (first at {seen[row['qid']]})"
            )
        seen[row["qid"]] = location
        yield row


def load_hotpotqa_from_hub(
    dataset: str = HUB_DATASET, config: str = HUB_CONFIG, split: str = HUB_SPLIT
) -> pd.DataFrame:
    """Load the split from the Hugging Face hub; unreachable hub -> DatasetUnavailableError."""
    try:
        import datasets

        rows = datasets.load_dataset(dataset, config, split=split)
    except Exception as err:  # network, auth and cache errors all mean "not available here"
        raise DatasetUnavailableError(
            f"Could not load {dataset} ({config}, {split}) from the Hugging Face hub: {err}.\n"
            "Use the bundled 500-question sample (`--dataset bundled`, the default) or a local file: "
            "`rag-eval run --dataset PATH` or, in the Dagster launchpad, "
            "ops.hotpotqa_raw.config.source: PATH. PATH may be the original HotpotQA JSON "
            "(hotpot_dev_distractor_v1.json) or JSONL/parquet in the hub's row format."
        ) from err
    return question_table(normalize_row(row) for row in rows)


def load_questions(source: str) -> pd.DataFrame:
    """The question table of a source: ``bundled`` (the default, shipped in the package),
    ``hub`` (the full split from the Hugging Face hub), or a local file's path."""
    if source == HUB:
        return load_hotpotqa_from_hub()
    return read_hotpotqa_file(BUNDLED_FILE if source == BUNDLED else source)


def sample_questions(
    questions: pd.DataFrame,
    sample_size: int | None,
    selection: Literal["first", "random"] = "first",
    seed: int = 0,
) -> pd.DataFrame:
    """A deterministic sample: the first N questions, or N drawn with a fixed seed (kept in file
    order). None or 0: every question."""
    if selection not in ("first", "random"):
        raise ValueError(f"selection must be 'first' or 'random', not {selection!r}")
    if not sample_size or sample_size >= len(questions):
        return questions.reset_index(drop=True)
    if sample_size < 1:
        raise ValueError(f"sample size must be at least 1, got {sample_size}")
    if selection == "first":
        return questions.head(sample_size).reset_index(drop=True)
    picked = questions.sample(n=sample_size, random_state=seed).sort_index()
    return picked.reset_index(drop=True)
