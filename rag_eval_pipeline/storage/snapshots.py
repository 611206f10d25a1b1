"""The knowledge base is rebuilt as one snapshot: its assets are written into their run's own
folder, ``<base>/knowledge_base/<run id>/<asset>.*``, and ``LIVE.json`` names the run whose
files are live. The pointer is switched (write aside, rename) only when a rebuild completed, so a
failed rebuild never replaces the live state; an evaluation can be pinned to the snapshot its
own run published, whatever became live since."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from upath import UPath

from rag_eval_pipeline.common.files import write_text_atomically

SNAPSHOTS = "knowledge_base"
LIVE_POINTER = "LIVE.json"
PUBLISHED_PREFIX = "published-"  # published-<run id>.json: the snapshot that run made live
KEEP_SNAPSHOTS = 3  # runs whose files are kept besides the live ones (inspection, rollback)


class UnreadableLivePointerError(ValueError):
    """``LIVE.json`` is damaged: named with the way out."""


@dataclass(frozen=True)
class KnowledgeBaseSnapshot:
    """Which run's version of each knowledge-base asset is live."""

    live: dict[str, str]
    published_by: str

    def to_dict(self) -> dict[str, Any]:
        return {"live": dict(self.live), "published_by": self.published_by}


class SnapshotStore:
    """The snapshots under ``<base>/knowledge_base``."""

    def __init__(self, base: UPath) -> None:
        self.root = base / SNAPSHOTS

    @property
    def pointer(self) -> UPath:
        return self.root / LIVE_POINTER

    def live(self) -> dict[str, str]:
        """Asset -> the run whose file is live; a damaged pointer is one error naming the file."""
        if not self.pointer.exists():
            return {}
        try:
            return dict(json.loads(self.pointer.read_text())["live"])
        except (ValueError, KeyError, TypeError) as err:
            raise UnreadableLivePointerError(
                f"the live knowledge-base pointer {self.pointer} is unreadable ({type(err).__name__}: "
                f"{err}): `rag-eval run` rebuilds the knowledge base and writes it anew, or restore it "
                "from a backup"
            ) from None

    def path(self, asset: str, run_id: str) -> UPath:
        return self.root / run_id / asset

    def has(self, asset: str, run_id: str) -> bool:
        folder = self.root / run_id
        return folder.exists() and any(f.name.split(".")[0] == asset for f in folder.iterdir())

    def staged(self, run_id: str) -> list[str]:
        folder = self.root / run_id
        return sorted({f.name.split(".")[0] for f in folder.iterdir()}) if folder.exists() else []

    def published(self, run_id: str) -> dict[str, str]:
        """Asset -> run, as run ``run_id`` published it: what an evaluation pinned to that run
        reads, whatever became live since."""
        record = self.root / f"{PUBLISHED_PREFIX}{run_id}.json"
        if not record.exists():
            raise FileNotFoundError(
                f"no knowledge base published by run {run_id} is kept (it failed, or its files were "
                "removed): evaluate again after a rebuild (rag-eval run)"
            )
        return dict(json.loads(record.read_text())["live"])

    def publish(self, run_id: str) -> KnowledgeBaseSnapshot:
        """Makes ``run_id``'s assets live together (the others stay as they were). A damaged
        pointer is replaced: this run's assets become the live knowledge base."""
        try:
            current = self.live()
        except UnreadableLivePointerError:
            current = {}
        snapshot = KnowledgeBaseSnapshot({**current, **dict.fromkeys(self.staged(run_id), run_id)}, run_id)
        record = json.dumps(snapshot.to_dict(), indent=2, sort_keys=True)
        for target in (self.root / f"{PUBLISHED_PREFIX}{run_id}.json", self.pointer):
            write_text_atomically(target, record)  # two rebuilds publishing at once never share a file
        self._forget_old(set(snapshot.live.values()))
        return snapshot

    def _forget_old(self, live_runs: set[str]) -> None:
        """Keeps the live runs' folders and the newest ``KEEP_SNAPSHOTS`` others (an evaluation
        pinned to a recent rebuild still finds its files)."""
        runs = [f for f in self.root.iterdir() if f.is_dir() and f.name not in live_runs]
        runs.sort(key=lambda f: max((x.stat().st_mtime for x in f.iterdir()), default=0), reverse=True)
        for old in runs[KEEP_SNAPSHOTS:]:
            for file in old.iterdir():
                file.unlink(missing_ok=True)
            old.rmdir()
            (self.root / f"{PUBLISHED_PREFIX}{old.name}.json").unlink(missing_ok=True)
