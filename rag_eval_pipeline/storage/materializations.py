"""Every materialization keeps its own file, ``history/<asset>[/<partition>]/<run id>.<ext>`` (a
hard link to the file it wrote: no copy), so an older score can still be inspected after a
re-run replaced the latest; the newest ``keep`` of each asset and partition stay."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

from upath import UPath

from rag_eval_pipeline.common.files import write_text_atomically
from rag_eval_pipeline.storage.paths import contained

HISTORY = "history"
KEEP_MATERIALIZATIONS = 10
PAGES = "pages"  # a document's companion pages: pages/<asset>/<run id>/...


def history_folder(base: UPath, asset: str, partition: str | None = None) -> UPath:
    folder = base / HISTORY / asset
    return contained(base, folder / partition) if partition else folder


def materialization_file(base: UPath, asset: str, partition: str | None, run_id: str) -> UPath | None:
    """The file one run wrote for an asset (partition), if it is still kept."""
    folder = history_folder(base, asset, partition)
    if not folder.exists():
        return None
    return next((f for f in folder.iterdir() if f.name.split(".")[0] == run_id), None)


def kept_runs(base: UPath, asset: str, partition: str | None = None) -> list[str]:
    """The runs whose file of this asset (partition) is kept, newest first."""
    folder = history_folder(base, asset, partition)
    if not folder.exists():
        return []
    files = sorted(folder.iterdir(), key=lambda f: f.stat().st_mtime, reverse=True)
    return [f.name.split(".")[0] for f in files]


def keep_as_materialization(written: UPath, folder: UPath, run_id: str, keep: int) -> UPath:
    """``written`` also under its run id; only the newest ``keep`` such files stay."""
    folder.mkdir(parents=True, exist_ok=True)
    kept = folder / f"{run_id}{''.join(written.suffixes[-1:])}"
    kept.unlink(missing_ok=True)
    try:
        os.link(str(written), str(kept))
    except OSError:  # another filesystem, or links not allowed: a copy
        shutil.copyfile(str(written), str(kept))
    trim_kept(folder, keep)
    return kept


def trim_kept(folder: UPath, keep: int) -> None:
    """Only the newest ``keep`` materialization files of ``folder`` stay."""
    files = sorted(folder.iterdir(), key=lambda f: f.stat().st_mtime, reverse=True)
    for old in files[keep:]:
        old.unlink(missing_ok=True)  # (another run may be trimming the same folder)


def pages_folder(asset: str, run_id: str) -> str:
    """Where a run's document keeps its companion pages, relative to the artifacts folder (one
    folder a run: its kept materialization keeps loading its own pages)."""
    return f"{PAGES}/{asset}/{run_id}"


def write_companions(base: UPath, companions: Mapping[str, str]) -> None:
    """A document's pages, each under the artifacts folder; written before the document that
    loads them, so it never points at a page not written yet."""
    for relative, text in companions.items():
        write_text_atomically(contained(base, base / relative), text)


def trim_pages(base: UPath, asset: str) -> None:
    """The pages of runs whose document of ``asset`` is no longer kept, removed (after the
    kept materializations were trimmed)."""
    folder = base / PAGES / asset
    if not folder.exists():
        return
    keep = set(kept_runs(base, asset))
    for run in folder.iterdir():
        if run.name not in keep:
            shutil.rmtree(str(run), ignore_errors=True)  # (another run may be trimming too)
