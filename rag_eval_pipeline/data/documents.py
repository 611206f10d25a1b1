"""The user's own documents as knowledge-base passages: a folder of .md / .txt files and JSONL or
parquet files of ``{title, passage}`` (optional ``id``), with optional chunking of long texts.

A malformed file is reported by name (and line) and skipped; it never stops the others.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from rag_eval_pipeline.data.knowledge_base import PASSAGE_COLUMNS, passage_id
from rag_eval_pipeline.language.analysis import analyzer, split_sentences
from rag_eval_pipeline.language.detect import resolve_languages
from rag_eval_pipeline.language.table import ENGLISH, UnknownLanguageError, language

TEXT_SUFFIXES = (".md", ".txt")
TABLE_SUFFIXES = (".jsonl", ".parquet")
DEFAULT_MAX_FILE_BYTES = 5_000_000  # one larger file would become a passage in every prompt
DEFAULT_CHUNK_WORDS = 200
DEFAULT_CHUNK_OVERLAP = 40
DOCUMENT_COLUMNS = [*PASSAGE_COLUMNS, "source_file"]


@dataclass(frozen=True)
class Chunking:
    """Split passages longer than ``size`` words into windows of ``size`` words overlapping by
    ``overlap``; chunk ids are ``<id>#<n>``, stable as long as the text is, and every chunk keeps
    its document's title (so a relevant document is found through any of its chunks)."""

    size: int = DEFAULT_CHUNK_WORDS  # 0 = no chunking
    overlap: int = DEFAULT_CHUNK_OVERLAP

    def __post_init__(self) -> None:
        if self.size < 0 or self.overlap < 0 or (self.size and self.overlap >= self.size):
            raise ValueError("chunking needs size > overlap >= 0")


@dataclass
class LoadedDocuments:
    passages: pd.DataFrame
    problems: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)  # file name -> content digest
    assumed_language: list[str] = field(default_factory=list)  # documents too short to tell


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _every_file(folder: Path) -> list[Path]:
    """Every file of the folder and its subfolders, hidden ones (a ``.git``) left out."""
    if not folder.is_dir():
        return []
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def document_files(folder: Path) -> list[Path]:
    """The documents of the folder, its subfolders included."""
    return [p for p in _every_file(folder) if p.suffix.lower() in TEXT_SUFFIXES + TABLE_SUFFIXES]


def unsupported_files(folder: Path) -> list[Path]:
    """Files of the folder that are not documents we read: listed as skipped, never ignored."""
    return [p for p in _every_file(folder) if p.suffix.lower() not in TEXT_SUFFIXES + TABLE_SUFFIXES]


def file_name(path: Path, folder: Path) -> str:
    """How a document is named in problems, versions and the sensor's tags: its path in the folder."""
    return path.relative_to(folder).as_posix()


def document_versions(folder: Path) -> dict[str, str]:
    """Each document's name and content digest: what the new-documents sensor compares."""
    return {file_name(path, folder): file_digest(path) for path in document_files(folder)}


def folder_fingerprint(versions: dict[str, str]) -> str:
    """One digest of a folder's documents (names and contents): what the knowledge base records
    it was built from, so a sensor's first tick can tell the folder it indexed, at any size."""
    joined = "\n".join(f"{name}\t{digest}" for name, digest in sorted(versions.items()))
    return hashlib.sha256(joined.encode()).hexdigest()[:16]


def read_utf8(path: Path) -> str:
    """The file's text; invalid UTF-8 is a ValueError naming its line."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise ValueError(f"line {line}: not valid UTF-8 ({err.reason})") from None


def chunk_words(text: str, chunking: Chunking, code: str = "en") -> list[str]:
    """Windows of ``chunking.size`` words overlapping by ``chunking.overlap``. A spaced
    language is cut at spaces; a language written without them (Chinese, Japanese, Thai) at its
    dictionary's word boundaries, each chunk its text as written."""
    analysis = analyzer(code)
    if not analysis.inside_words or analysis.language.index_bigrams:
        words = text.split()
        if not chunking.size or len(words) <= chunking.size:
            return [text]
        return [" ".join(words[a:b]) for a, b in _windows(len(words), chunking)]
    segments = analysis.segments(text)
    word_ends = [i + 1 for i, segment in enumerate(segments) if analysis.is_word(segment)]
    if not chunking.size or len(word_ends) <= chunking.size:
        return [text]
    starts = [0, *word_ends[:-1]]
    return [
        "".join(segments[starts[a] : word_ends[b - 1]]).strip() for a, b in _windows(len(word_ends), chunking)
    ]


def _windows(count: int, chunking: Chunking) -> list[tuple[int, int]]:
    step = chunking.size - chunking.overlap
    windows = []
    for start in range(0, count, step):
        windows.append((start, min(count, start + chunking.size)))
        if start + chunking.size >= count:
            break
    return windows


def _records(path: Path) -> list[tuple[str, dict]]:
    """(location, record) of one file; raises ValueError naming the line on bad input."""
    suffix = path.suffix.lower()
    if suffix in TEXT_SUFFIXES:
        text = read_utf8(path).strip()
        if not text:
            raise ValueError("empty document")
        return [("file", {"title": path.stem, "passage": text})]
    if suffix == ".parquet":
        frame = pd.read_parquet(path)
        return [(f"row {i + 1}", r) for i, r in enumerate(frame.to_dict(orient="records"))]
    records = []
    for line_no, line in enumerate(read_utf8(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"line {line_no}", json.loads(line)))
        except json.JSONDecodeError as err:
            raise ValueError(f"line {line_no}: invalid JSON ({err.msg})") from err
    return records


@dataclass(frozen=True)
class Document:
    """One checked ``{title, passage[, id, language]}`` record of a file, before chunking."""

    title: str
    text: str
    base_id: str
    source_file: str
    language: str | None  # set by the record; None: detected with the rest

    @property
    def detected_text(self) -> str:
        return f"{self.title}\n{self.text}"


def documents_of_records(records: list[tuple[str, object]], name: str) -> list[Document]:
    """The documents of ``{title, passage[, id, language]}`` records; a ValueError names the
    first record's location that is not one (or names a language this project cannot analyse)."""
    documents = []
    for location, record in records:
        if not isinstance(record, dict):
            raise ValueError(f"{location}: expected an object with title and passage")
        title, text = record.get("title"), record.get("passage")
        if not isinstance(title, str) or not title.strip():
            raise ValueError(f"{location}: missing or empty 'title'")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{location}: missing or empty 'passage'")
        base_id = f"doc_{record['id']}" if record.get("id") not in (None, "") else passage_id(title)
        own = record.get("language")
        if own not in (None, ""):
            try:
                own = language(str(own)).code
            except UnknownLanguageError as err:
                raise ValueError(f"{location}: {err}") from None
        documents.append(Document(title, text, base_id, name, own or None))
    return documents


def passages_of_documents(
    documents: list[Document], chunking: Chunking, declared: str | None = None
) -> tuple[list[dict], list[str]]:
    """Passage rows of the documents (long ones chunked), each in its language: its record's,
    else ``declared`` (the dataset's ``language:``), else detected; and the names of those too
    short to tell (they take the language most of the others are in)."""
    found = resolve_languages([d.detected_text for d in documents], declared, [d.language for d in documents])
    rows = []
    assumed = []
    for document, detected in zip(documents, found):
        if not detected.told:
            assumed.append(f"{document.source_file}: {document.title}")
        chunks = chunk_words(document.text, chunking, detected.code)
        for number, chunk in enumerate(chunks):
            rows.append(
                {
                    "passage_id": document.base_id if len(chunks) == 1 else f"{document.base_id}#{number}",
                    # chunks keep their document's title: relevance is judged per document
                    "title": document.title,
                    "passage": chunk,
                    "sentences": split_sentences(chunk),
                    "language": detected.code,
                    "source_file": document.source_file,
                }
            )
    return rows, assumed


def passages_of_records(
    records: list[tuple[str, object]], chunking: Chunking, name: str, declared: str | None = None
) -> list[dict]:
    """Passage rows of ``{title, passage[, id, language]}`` records (long ones chunked); a
    ValueError names the first record's location that is not one."""
    return passages_of_documents(documents_of_records(records, name), chunking, declared)[0]


def load_documents(
    folder: str | Path,
    chunking: Chunking = Chunking(),
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    declared_language: str | None = None,
) -> LoadedDocuments:
    """Every readable document of the folder, long ones chunked, each in its language (its
    record's, else ``declared_language``, else detected over the whole folder); files that are
    malformed, larger than ``max_file_bytes`` or of an unsupported type are listed in
    ``problems`` and skipped."""
    folder = Path(folder)
    documents: list[Document] = []
    supported = ", ".join(TEXT_SUFFIXES + TABLE_SUFFIXES)
    problems: list[str] = [
        f"{file_name(p, folder)}: unsupported file type '{p.suffix or p.name}' (use {supported})"
        for p in unsupported_files(folder)
    ]
    versions: dict[str, str] = {}
    for path in document_files(folder):
        name = file_name(path, folder)
        versions[name] = file_digest(path)
        size = path.stat().st_size
        if size > max_file_bytes:
            problems.append(
                f"{name}: {size / 1e6:.1f} MB is over the {max_file_bytes / 1e6:.1f} MB limit "
                "(dataset.max_file_mb); split it or raise the limit"
            )
            continue
        try:
            documents += documents_of_records(_records(path), name)
        except (ValueError, OSError, UnicodeDecodeError) as err:
            problems.append(f"{name}: {err}")
    rows, assumed = passages_of_documents(documents, chunking, declared_language)
    frame = pd.DataFrame(rows, columns=DOCUMENT_COLUMNS)
    duplicated = frame["passage_id"][frame["passage_id"].duplicated()].unique().tolist()
    if duplicated:
        problems.append(f"duplicate document ids (last one kept): {duplicated[:5]}")
        frame = frame.drop_duplicates("passage_id", keep="last")
    return LoadedDocuments(frame.reset_index(drop=True), problems, versions, assumed)


def merge_passages(base: pd.DataFrame, documents: pd.DataFrame) -> pd.DataFrame:
    """The knowledge base: base passages plus the user's documents; a document replaces a base
    passage of the same title (newer knowledge wins)."""
    base, documents = with_language(base), with_language(documents)
    if documents.empty:
        return base.reset_index(drop=True)
    kept = base[~base["title"].isin(set(documents["title"]))]
    return pd.concat([kept, documents[PASSAGE_COLUMNS]], ignore_index=True)


def with_language(passages: pd.DataFrame) -> pd.DataFrame:
    """Passages with their language column: a table stored before languages were kept held
    English only (HotpotQA's paragraphs, documents read with English analysis)."""
    return passages if "language" in passages else passages.assign(language=ENGLISH)
