"""One stored format per kind of value, chosen from one table: tables as parquet, records and
manifests as JSON, the report as HTML. Every write goes aside first and is renamed into place."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from upath import UPath

from rag_eval_pipeline.common.files import write_atomically, write_text_atomically
from rag_eval_pipeline.retrieval.base import IndexManifest

RECORD_TYPE = "__record__"  # marks a typed record in its JSON file, so it loads as that type again
RECORDS: dict[str, Any] = {"IndexManifest": IndexManifest}


class HtmlDocument(str):
    """An HTML file, stored as ``<asset>.html`` so it opens in a browser. ``libraries`` (a file
    name and what makes its text) are written once beside it, where it loads them from: a
    report's megabytes of JavaScript are not copied into every materialization. ``companions``
    (a path under the artifacts folder and its text) are the pages it loads on demand: a
    report of 100,000 cases stays a file a browser opens."""

    libraries: dict[str, Callable[[], str | bytes]]
    companions: Mapping[str, str]

    def __new__(
        cls,
        text: str,
        libraries: Mapping[str, Callable[[], str | bytes]] | None = None,
        companions: Mapping[str, str] | None = None,
    ) -> HtmlDocument:
        document = super().__new__(cls, text)
        document.libraries = dict(libraries or {})
        document.companions = companions or {}  # made page by page as they are written
        return document


def write_library(path: UPath, make: Callable[[], str | bytes]) -> None:
    """A document's library, once: a file of that name (its version or content hash in the
    name) is kept. Text (a script) or bytes (an image the report shows)."""
    if path.exists():
        return
    made = make()
    if isinstance(made, bytes):
        write_atomically(path, lambda tmp: tmp.write_bytes(made))
    else:
        write_text_atomically(path, made)


class CorruptArtifactError(ValueError):
    """A stored file that cannot be read (truncated, overwritten): named with what to do."""


@dataclass(frozen=True)
class ArtifactFormat:
    extension: str
    holds: Callable[[Any], bool]
    write: Callable[[Any, UPath], None]
    read: Callable[[UPath], Any]


def _write_json(value: Any, path: UPath) -> None:
    data = value if isinstance(value, dict) else {RECORD_TYPE: type(value).__name__, **value.to_dict()}
    path.write_text(json.dumps(data, indent=2, sort_keys=True))


def _read_json(path: UPath) -> Any:
    data = json.loads(path.read_text())
    record = RECORDS.get(data.pop(RECORD_TYPE, None)) if isinstance(data, dict) else None
    return record.from_dict(data) if record is not None else data


# schema metadata of a table stored from Arrow-backed columns: read back Arrow-backed (numpy
# objects would take five times the memory)
ARROW_BACKED = b"rag_eval/arrow_backed"
# rows of a table decoded at a time when it is read: a 100,000-case table read as one group
# of rows takes 1.9 GB for a moment, as groups of 10,000 1.3 GB (and a third of the time)
ROW_GROUP_ROWS = 10_000


def _write_table(value: pd.DataFrame, path: UPath) -> None:
    table = pa.Table.from_pandas(value, preserve_index=False)
    if any(isinstance(dtype, pd.ArrowDtype) for dtype in value.dtypes):
        # without pandas' metadata, which names Arrow types pandas itself cannot read back: any
        # parquet reader (`pd.read_parquet` too) reads the file, and this store reads it as Arrow
        table = table.replace_schema_metadata({ARROW_BACKED: b"1"})
    with path.open("wb") as file:
        pq.write_table(table, file, row_group_size=ROW_GROUP_ROWS)
    del table
    _release_arrow_memory()


def _read_table(path: UPath, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The table at ``path``; ``columns``: only those of them it has (the others are not read)."""
    with path.open("rb") as file:
        parquet = pq.ParquetFile(file)
        schema = parquet.schema_arrow
        wanted = [c for c in columns if c in schema.names] if columns is not None else None
        if ARROW_BACKED in (schema.metadata or {}):
            table = parquet.read(columns=wanted).to_pandas(types_mapper=pd.ArrowDtype, ignore_metadata=True)
        else:  # as pandas reads its own files (its string dtype, its index)
            table = pd.read_parquet(path, columns=wanted)
    _release_arrow_memory()
    return table


def _release_arrow_memory() -> None:
    """Give back what Arrow's allocator still holds from decoding or encoding a table: it keeps
    freed pages for reuse, and a command's next step is not Arrow's (about 0.5 GB at 100,000
    cases)."""
    pa.default_memory_pool().release_unused()


FORMATS = (
    ArtifactFormat(
        ".html",
        lambda value: isinstance(value, HtmlDocument),
        lambda value, path: path.write_text(value, encoding="utf-8"),
        lambda path: HtmlDocument(path.read_text(encoding="utf-8")),
    ),
    ArtifactFormat(
        ".parquet",
        lambda value: isinstance(value, pd.DataFrame),
        _write_table,
        _read_table,
    ),
    ArtifactFormat(".json", lambda value: isinstance(value, dict | IndexManifest), _write_json, _read_json),
)


def with_extension(path: UPath, extension: str) -> UPath:
    """Append the extension: partition keys may hold dots (model ids), so never with_suffix."""
    return path.with_name(path.name + extension)


def format_of(value: Any, what: str) -> ArtifactFormat:
    for artifact_format in FORMATS:
        if artifact_format.holds(value):
            return artifact_format
    raise TypeError(
        f"{what}: cannot store a {type(value).__name__}; assets return a pandas DataFrame, a dict, "
        "an IndexManifest or an HtmlDocument"
    )


def write(value: Any, path: UPath, what: str) -> UPath:
    """Stores ``value`` at ``path`` plus its format's extension, atomically; removes the file of
    another format the asset may have written before. Returns the file written."""
    chosen = format_of(value, what)
    target = with_extension(path, chosen.extension)
    write_atomically(target, lambda tmp: chosen.write(value, tmp))  # readers never see half a file
    for other in FORMATS:
        if other is not chosen:
            with_extension(path, other.extension).unlink(missing_ok=True)
    for name, make in getattr(value, "libraries", {}).items():
        write_library(target.parent / name, make)
    return target


def stored_file(path: UPath) -> UPath | None:
    """The file stored at ``path`` (whatever its format), or None."""
    return next(
        (f for f in (with_extension(path, a.extension) for a in FORMATS) if f.exists()),
        None,
    )


def read(path: UPath, remedy: str, columns: Sequence[str] | None = None) -> Any:
    """The value stored at ``path`` (of a table, only ``columns`` when given); a damaged file is
    one error naming it and ``remedy``."""
    found = stored_file(path)
    if found is None:
        raise FileNotFoundError(f"no stored artifact at {path}.parquet or {path}.json")
    reader = next(a.read for a in FORMATS if found.name.endswith(a.extension))
    if columns is not None and reader is _read_table:
        reader = functools.partial(_read_table, columns=columns)
    try:
        return reader(found)
    except Exception as err:  # a truncated parquet, half a JSON file
        raise CorruptArtifactError(
            f"{found} is unreadable ({type(err).__name__}: {str(err)[:120]}): {remedy}"
        ) from err


def extension_of(value: Any) -> str:
    return format_of(value, "value").extension
