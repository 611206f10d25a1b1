"""The user's own documents as knowledge-base passages: a folder of .md / .txt files and JSONL or
parquet files of ``{title, passage}`` (optional ``id``), with optional chunking of long texts.
Each document carries its time (``updated_at``, ``valid_until``, ``supersedes``: the record's
fields, a ``.md`` file's front matter, else the file's modification time for ``updated_at``).

A malformed file is reported by name and skipped, a malformed line of a JSONL file by file and
line; neither stops the others. Files are UTF-8 (a byte-order mark accepted) unless the dataset's
``encoding:`` says otherwise, and every text, title and file name is read in NFC.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from rag_eval_pipeline.common.text import FileEncodingError, nfc, nfc_values, read_text
from rag_eval_pipeline.data.images import (
    ImageCatalog,
    image_captions,
    image_catalog,
    is_image_file,
)
from rag_eval_pipeline.data.knowledge_base import PASSAGE_COLUMNS, passage_id
from rag_eval_pipeline.language.analysis import analyzer, split_sentences
from rag_eval_pipeline.language.detect import resolve_languages
from rag_eval_pipeline.language.table import ENGLISH, UnknownLanguageError, language

TEXT_SUFFIXES = (".md", ".txt")
TABLE_SUFFIXES = (".jsonl", ".parquet")
DEFAULT_MAX_FILE_BYTES = 5_000_000  # one larger file would become a passage in every prompt
DEFAULT_CHUNK_WORDS = 200
DEFAULT_CHUNK_OVERLAP = 40
# a run of text without a break longer than this (longer than the words of any language, German
# compounds included: a line with no spaces, base64, a long URL) counts as a word every this many
# characters and is cut there, so no chunk is longer than its size in words of at most this many
MAX_WORD_CHARS = 50
# a document's time, as written (ISO dates); what health/documents.py reads into a status
TIME_FIELDS = ("updated_at", "valid_until", "supersedes")
DOCUMENT_COLUMNS = [*PASSAGE_COLUMNS, "source_file", *TIME_FIELDS]
FRONT_MATTER = "---"


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
    problems: list[str] = field(default_factory=list)  # files and lines skipped, each named
    unreadable: list[str] = field(default_factory=list)  # files in another encoding: no run reads them
    versions: dict[str, str] = field(default_factory=dict)  # file name -> content digest
    assumed_language: list[str] = field(default_factory=list)  # documents too short to tell
    images: ImageCatalog = field(default_factory=ImageCatalog)  # the folder's images (data/images.py)


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
    """The documents of the folder, its subfolders included (images and their captions are
    read by ``data/images.py``)."""
    return [
        p
        for p in _every_file(folder)
        if p.suffix.lower() in TEXT_SUFFIXES + TABLE_SUFFIXES and not is_image_file(p)
    ]


def unsupported_files(folder: Path) -> list[Path]:
    """Files of the folder that are not documents we read: listed as skipped, never ignored."""
    return [
        p
        for p in _every_file(folder)
        if p.suffix.lower() not in TEXT_SUFFIXES + TABLE_SUFFIXES and not is_image_file(p)
    ]


def file_name(path: Path, folder: Path) -> str:
    """How a document is named in problems, versions and the sensor's tags: its path in the
    folder, in NFC (macOS writes names decomposed; a title is the same title either way)."""
    return nfc(path.relative_to(folder).as_posix())


def unreadable_files(folder: str | Path, encoding: str | None = None) -> list[str]:
    """One line for each text document of the folder that is not text in ``encoding`` (UTF-8
    unless set), naming the file, the encoding it looks like and the remedy: what a run refuses
    before any work, rather than index the documents without it."""
    folder = Path(folder)
    found = []
    for path in document_files(folder):
        if path.suffix.lower() == ".parquet":
            continue  # typed columns: no encoding to guess
        try:
            read_text(path, encoding)
        except FileEncodingError as err:
            found.append(str(err))
        except OSError:
            continue  # said when the documents are read
    return found


def document_versions(folder: Path) -> dict[str, str]:
    """Each document's (and image's) name and content digest: what the new-documents sensor
    compares."""
    files = [*document_files(folder), *(p for p in _every_file(folder) if is_image_file(p))]
    return {file_name(path, folder): file_digest(path) for path in files}


def _cut_long(runs: list[str]) -> list[tuple[str, bool]]:
    """Each run, a run longer than ``MAX_WORD_CHARS`` cut into runs of that many characters;
    with each, whether it continues the run before it (joined without a space)."""
    cut: list[tuple[str, bool]] = []
    for run in runs:
        if len(run) <= MAX_WORD_CHARS:
            cut.append((run, False))
            continue
        cut += [(run[i : i + MAX_WORD_CHARS], i > 0) for i in range(0, len(run), MAX_WORD_CHARS)]
    return cut


def _joined(words: list[tuple[str, bool]]) -> str:
    """Words joined by single spaces, the pieces of one cut run without."""
    return "".join(word if joined or n == 0 else f" {word}" for n, (word, joined) in enumerate(words))


def folder_fingerprint(versions: dict[str, str]) -> str:
    """One digest of a folder's documents (names and contents): what the knowledge base records
    it was built from, so a sensor's first tick can tell the folder it indexed, at any size."""
    joined = "\n".join(f"{name}\t{digest}" for name, digest in sorted(versions.items()))
    return hashlib.sha256(joined.encode()).hexdigest()[:16]


def chunk_words(text: str, chunking: Chunking, code: str = "en") -> list[str]:
    """Windows of ``chunking.size`` words overlapping by ``chunking.overlap``. A spaced
    language is cut at spaces; a language written without them (Chinese, Japanese, Thai) at its
    dictionary's word boundaries, each chunk its text as written. A run with no break longer
    than ``MAX_WORD_CHARS`` counts a word every that many characters, cut there, so no chunk
    is longer than ``size`` words of at most that many characters."""
    if not chunking.size:
        return [text]
    analysis = analyzer(code)
    if not analysis.inside_words or analysis.language.index_bigrams:
        words = _cut_long(text.split())
        if len(words) <= chunking.size:
            return [text]
        return [_joined(words[a:b]) for a, b in _windows(len(words), chunking)]
    segments = [segment for segment, _ in _cut_long(analysis.segments(text))]
    word_ends = [i + 1 for i, segment in enumerate(segments) if analysis.is_word(segment)]
    if len(word_ends) <= chunking.size:
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


def _records(path: Path, encoding: str | None = None) -> tuple[list[tuple[str, object]], list[str]]:
    """(location, record) of one file, every string in NFC, and the lines that are not JSON
    (each named, the others kept); a file that is not text is a ValueError."""
    suffix = path.suffix.lower()
    if suffix in TEXT_SUFFIXES:
        fields, text = front_matter(read_text(path, encoding).strip()) if suffix == ".md" else ({}, "")
        text = text if suffix == ".md" else read_text(path, encoding).strip()
        if not text:
            raise ValueError("empty document")
        return [("file", {"title": nfc(path.stem), **fields, "passage": text})], []
    if suffix == ".parquet":
        frame = pd.read_parquet(path)
        return [(f"row {i + 1}", nfc_values(r)) for i, r in enumerate(frame.to_dict(orient="records"))], []
    records: list[tuple[str, object]] = []
    problems = []
    for line_no, line in enumerate(read_text(path, encoding).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"line {line_no}", nfc_values(json.loads(line))))
        except json.JSONDecodeError as err:
            problems.append(f"line {line_no}: invalid JSON ({err.msg})")
    return records, problems


def front_matter(text: str) -> tuple[dict, str]:
    """A Markdown document's YAML front matter (between ``---`` lines at its top) and the text
    after it; a document without one is all text. Malformed front matter is a ValueError."""
    import yaml

    lines = text.splitlines()
    if not lines or lines[0].strip() != FRONT_MATTER:
        return {}, text
    for end, line in enumerate(lines[1:], start=1):
        if line.strip() == FRONT_MATTER:
            try:
                fields = yaml.safe_load("\n".join(lines[1:end])) or {}
            except yaml.YAMLError as err:
                raise ValueError(f"front matter is not YAML ({err.__class__.__name__})") from None
            if not isinstance(fields, dict):
                raise ValueError("front matter is not a mapping of fields")
            known = (*TIME_FIELDS, "title", "id", "language")
            kept = {k: nfc_values(v) for k, v in fields.items() if k in known}
            return kept, "\n".join(lines[end + 1 :]).strip()
    return {}, text


def _time_field(record: dict, key: str) -> str | None:
    """A time field as text (YAML reads a bare date as a date; an id may be a number)."""
    value = record.get(key)
    if value in (None, ""):
        return None
    if isinstance(value, list):  # supersedes: several documents
        return ";".join(str(v) for v in value if v not in (None, "")) or None
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


@dataclass(frozen=True)
class Document:
    """One checked ``{title, passage[, id, language]}`` record of a file, before chunking."""

    title: str
    text: str
    base_id: str
    source_file: str
    language: str | None  # set by the record; None: detected with the rest
    updated_at: str | None = None  # ISO date or time; the file's time when the record says none
    valid_until: str | None = None
    supersedes: str | None = None  # ids or titles of the documents this one replaces, ';'-joined

    @property
    def detected_text(self) -> str:
        return f"{self.title}\n{self.text}"


def _record_problem(record: object) -> str | None:
    """Why a record is not a ``{title, passage}`` document (None when it is one)."""
    if not isinstance(record, dict):
        return "expected an object with title and passage"
    for key in ("title", "passage"):
        value = record.get(key)
        if not isinstance(value, str) or not value.strip():
            return f"missing or empty '{key}'"
    return None


def documents_of_records(
    records: list[tuple[str, object]], name: str, file_time: str | None = None
) -> tuple[list[Document], list[str]]:
    """The documents of ``{title, passage[, id, language, updated_at, valid_until, supersedes]}``
    records (``updated_at`` the file's time ``file_time`` when unsaid), and a problem naming the
    location of each record that is not one (or names a language this project cannot analyse):
    that record is skipped, the others are kept."""
    documents = []
    problems = []
    for location, record in records:
        problem = _record_problem(record)
        if problem is not None:
            problems.append(f"{location}: {problem}")
            continue
        assert isinstance(record, dict)
        title, text = record["title"], record["passage"]
        base_id = f"doc_{record['id']}" if record.get("id") not in (None, "") else passage_id(title)
        own = record.get("language")
        if own not in (None, ""):
            try:
                own = language(str(own)).code
            except UnknownLanguageError as err:
                problems.append(f"{location}: {err}")
                continue
        times = {key: _time_field(record, key) for key in TIME_FIELDS}
        times["updated_at"] = times["updated_at"] or file_time
        documents.append(Document(title, text, base_id, name, own or None, **times))
    return documents, problems


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
                    **{key: getattr(document, key) for key in TIME_FIELDS},
                }
            )
    return rows, assumed


def passages_of_records(
    records: list[tuple[str, object]], chunking: Chunking, name: str, declared: str | None = None
) -> list[dict]:
    """Passage rows of ``{title, passage[, id, language]}`` records (long ones chunked); a
    ValueError names the first record's location that is not one."""
    documents, problems = documents_of_records(records, name)
    if problems:
        raise ValueError(problems[0])
    return passages_of_documents(documents, chunking, declared)[0]


def load_documents(
    folder: str | Path,
    chunking: Chunking = Chunking(),
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    declared_language: str | None = None,
    encoding: str | None = None,
) -> LoadedDocuments:
    """Every readable document of the folder, long ones chunked, each in its language (its
    record's, else ``declared_language``, else detected over the whole folder); files that are
    malformed, larger than ``max_file_bytes`` or of an unsupported type, and lines of a JSONL
    file that are not documents, are listed in ``problems`` and skipped. A file that is not text
    in ``encoding`` (UTF-8 unless set) is also listed in ``unreadable``: a run refuses it."""
    folder = Path(folder)
    documents: list[Document] = []
    supported = ", ".join(TEXT_SUFFIXES + TABLE_SUFFIXES)
    problems: list[str] = [
        f"{file_name(p, folder)}: unsupported file type '{p.suffix or p.name}' (use {supported})"
        for p in unsupported_files(folder)
    ]
    unreadable: list[str] = []
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
            records, unread_lines = _records(path, encoding)
        except FileEncodingError as err:
            unreadable.append(str(err))
            problems.append(f"{name}: {err.reason}")
            continue
        except (ValueError, OSError) as err:
            problems.append(f"{name}: {err}")
            continue
        modified = pd.Timestamp(path.stat().st_mtime, unit="s", tz="UTC").isoformat()
        found, bad_records = documents_of_records(records, name, modified)
        documents += found
        problems += [f"{name}, {problem}" for problem in unread_lines + bad_records]
    images = image_catalog(folder) if folder.is_dir() else ImageCatalog()
    problems += images.all_problems()
    documents += [
        Document(c.title, c.text, c.passage_id, c.image_id, None) for c in image_captions(images, folder)
    ]
    rows, assumed = passages_of_documents(documents, chunking, declared_language)
    frame = pd.DataFrame(rows, columns=DOCUMENT_COLUMNS)
    duplicated = frame["passage_id"][frame["passage_id"].duplicated()].unique().tolist()
    if duplicated:
        problems.append(f"duplicate document ids (last one kept): {duplicated[:5]}")
        frame = frame.drop_duplicates("passage_id", keep="last")
    return LoadedDocuments(frame.reset_index(drop=True), problems, unreadable, versions, assumed, images)


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
