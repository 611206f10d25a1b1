"""Cross-encoder scores kept by content: the model's identity and the exact text of a pair map
to its logit, in one SQLite file of the storage folder. A pair is scored alone (its score does
not depend on what else is scored), so a kept score is the score: a re-run, or a second answer
model over the same retrieval, reranks without scoring a pair again."""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

PAIR_SCORES_FILE = "rerank_pair_scores.sqlite"
BUSY_TIMEOUT_S = 30.0  # runs of a backfill share the file: a writer waits for the other's commit
LOOKUP_CHUNK = 500  # keys a query asks for at once (SQLite's limit on bound parameters is higher)

Pair = tuple[str, str]


def pair_key(model_identity: str, pair: Pair) -> str:
    """The content address of a pair's score: the model's identity and both texts, unambiguous
    (each part's length is part of what is hashed)."""
    digest = hashlib.sha256()
    for part in (model_identity, *pair):
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


class PairScoresUnreadableError(ValueError):
    """The kept scores' file is not a store this code can read: one line, with the remedy."""


class PairScoreStore:
    """``key -> logit`` in a SQLite file (WAL, so runs side by side read while one writes). A
    file that cannot be read as the store stops the run with one line, never overwritten."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    @contextlib.contextmanager
    def _open(self):
        """The connection, under the lock; a file SQLite cannot read as the store is one error."""
        with self._lock:
            try:
                yield self._connect()
            except sqlite3.DatabaseError as err:
                raise PairScoresUnreadableError(
                    f"the reranker's kept scores {self.path} cannot be read ({err}): remove the file "
                    "(it only keeps scores, which the next run computes again)"
                ) from err

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS pair_scores (key TEXT PRIMARY KEY, logit REAL NOT NULL)"
            )
            connection.commit()
            self._connection = connection
        return self._connection

    def get_many(self, keys: Sequence[str]) -> dict[str, float]:
        found: dict[str, float] = {}
        with self._open() as connection:
            for start in range(0, len(keys), LOOKUP_CHUNK):
                chunk = list(keys[start : start + LOOKUP_CHUNK])
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(f"SELECT key, logit FROM pair_scores WHERE key IN ({marks})", chunk)
                found.update(rows)
        return found

    def put_many(self, scores: dict[str, float]) -> None:
        if not scores:
            return
        with self._open() as connection, connection:  # one transaction
            connection.executemany("INSERT OR REPLACE INTO pair_scores VALUES (?, ?)", scores.items())

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._connection.close()
                self._connection = None


@dataclass
class PairCounts:
    """How many pairs a retrieval gave the cross-encoder, and how many it read back instead."""

    scored: int = 0
    kept: int = 0


class KeptPairScores:
    """``score`` (a cross-encoder's, pairs scored alone) behind the store: only pairs the store
    does not hold are scored, and their scores enter it. ``refresh`` scores every pair again
    (and stores the new scores). Each call adds to ``counts``."""

    def __init__(
        self,
        score: Callable[[Sequence[Pair]], list[float]],
        model_identity: str,
        store: PairScoreStore | None,
        counts: PairCounts | None = None,
        refresh: bool = False,
    ) -> None:
        self._score = score
        self._identity = model_identity
        self._store = store
        self._refresh = refresh
        self.counts = counts if counts is not None else PairCounts()

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        if self._store is None:
            self.counts.scored += len(pairs)
            return self._score(pairs)
        keys = [pair_key(self._identity, p) for p in pairs]
        known = {} if self._refresh else self._store.get_many(sorted(set(keys)))
        todo = list(dict.fromkeys(k for k in keys if k not in known))  # a pair asked twice: scored once
        first_pair = {k: p for k, p in zip(keys, pairs)}
        fresh = dict(zip(todo, self._score([first_pair[k] for k in todo]))) if todo else {}
        self._store.put_many(fresh)
        self.counts.scored += len(todo)
        self.counts.kept += len(pairs) - len(todo)
        return [known[k] if k in known else fresh[k] for k in keys]
