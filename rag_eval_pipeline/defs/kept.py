"""What the runs of one Dagster instance share in a process: the stored values they read and
the embedded indexes they opened. `rag-eval run` executes its six runs on one instance, so the
judgement list, each model's scores and the index are read once instead of once per run; a run
launched by the UI or the daemon is a process of its own and keeps them for itself. Kept as long
as the instance object lives (weakly keyed by it), so nothing outlives the command or the test
that opened the instance."""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field

import dagster as dg

from rag_eval_pipeline.retrieval.embedded import OpenedIndexes
from rag_eval_pipeline.storage.read_once import ReadOnce


@dataclass
class KeptForInstance:
    reads: ReadOnce = field(default_factory=ReadOnce)
    indexes: OpenedIndexes = field(default_factory=OpenedIndexes)


_BY_INSTANCE: weakref.WeakKeyDictionary[dg.DagsterInstance, KeptForInstance] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def kept_for(instance: dg.DagsterInstance | None) -> KeptForInstance:
    """The values and indexes ``instance``'s runs in this process share (a new, unshared set
    where there is no instance)."""
    if instance is None:
        return KeptForInstance()
    with _LOCK:
        kept = _BY_INSTANCE.get(instance)
        if kept is None:
            kept = _BY_INSTANCE[instance] = KeptForInstance()
        return kept
