"""Knowledge-base health of one answer model's evaluation: the cases' gap labels, the documents'
status and use, the topics of the flagged questions and (with production questions) how like
real traffic the judgement list is. The one function the asset and the CLI both call."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from rag_eval_pipeline.common.heap import return_freed_heap
from rag_eval_pipeline.health.conflicts import Conflict, find_conflicts
from rag_eval_pipeline.health.documents import DocumentTimes, document_times, with_usage
from rag_eval_pipeline.health.knowledge import KnowledgeView, knowledge_view
from rag_eval_pipeline.health.labels import CaseInput, Supports, Thresholds, case_table, label_rates
from rag_eval_pipeline.health.paraphrase import ParaphraseReader, gap_signal
from rag_eval_pipeline.health.topics import MAX_CLUSTERED, TOPIC_COLUMNS, topic_table
from rag_eval_pipeline.health.traffic import Traffic, compare_traffic
from rag_eval_pipeline.language.table import ENGLISH

SUFFICIENCY = "sufficiency"  # the metric a sufficiency:<LLM> judge writes


@dataclass(frozen=True)
class HealthSettings:
    as_of: str | None = None  # ISO date; None: today (UTC)
    max_topics: int = 8
    seed: int = 0
    with_topics: bool = True  # False: labels and documents only (no clustering library loaded)
    thresholds: Thresholds = field(default_factory=Thresholds)


@dataclass(frozen=True)
class Health:
    cases: pd.DataFrame
    documents: pd.DataFrame
    topics: pd.DataFrame
    conflicts: list[Conflict]
    rates: dict[str, float | None]
    as_of: str
    problems: tuple[str, ...]
    traffic: Traffic | None = None
    gap_signal: str = ""  # per language, what decided that a passage holds a reference (paraphrase.py)

    @property
    def never_retrieved(self) -> list[str]:
        return self.documents.loc[self.documents["retrieved"] == 0, "document"].tolist()

    @property
    def ghosts(self) -> list[str]:
        return self.documents.loc[self.documents["ghost"], "document"].tolist()


def empty_topics() -> pd.DataFrame:
    return pd.DataFrame(columns=TOPIC_COLUMNS)


def _listed(value) -> tuple[str, ...]:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ()
    return tuple(str(v) for v in value)


def _absent(value) -> bool:
    return value is None or (isinstance(value, float) and pd.isna(value))


def _rationale(value, metric: str) -> str:
    """A judge's reason for ``metric`` from the scores' ``rationales`` (JSON text of a dict)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return value
    return str(value.get(metric, "")) if isinstance(value, dict) else ""


def case_inputs(
    candidate_answers: pd.DataFrame, judge_scores: pd.DataFrame, judgement_list: pd.DataFrame
) -> list[CaseInput]:
    """One input per case (an agent asked several times: its first answer), joined with its
    reference (None when pending or absent), whether it declined, its correctness and a
    sufficiency verdict where the scores hold them."""
    answers = candidate_answers
    if "repeat" in answers:
        answers = answers.sort_values("repeat").drop_duplicates("qid")
    read = ("qid", "question", "answer", "reference_pending", "language")
    columns = [c for c in read if c in judgement_list]
    truth: dict[str, dict] = {}
    for labelled in judgement_list[columns].to_dict(orient="records"):
        truth.setdefault(str(labelled["qid"]), labelled)
    per_case: dict[str, dict] = {}
    for row in judge_scores.to_dict(orient="records"):
        seen = per_case.setdefault(str(row["qid"]), {})
        if "abstained" in row and not _absent(row["abstained"]):
            seen.setdefault("abstained", bool(row["abstained"]))
        for key in ("correctness", SUFFICIENCY):
            if key in row and not _absent(row[key]):
                seen.setdefault(key, float(row[key]))
                if key == SUFFICIENCY:
                    seen.setdefault("reason", _rationale(row.get("rationales"), SUFFICIENCY))
    inputs = []
    for row in answers.to_dict(orient="records"):
        qid = str(row["qid"])
        labels = truth.get(qid)
        reference = None
        if labels is not None:
            reference = None if _absent(labels.get("answer")) else str(labels["answer"])
            if bool(labels.get("reference_pending", False) or False):
                reference = None
        seen = per_case.get(qid, {})
        language = row.get("language") or (labels.get("language") if labels is not None else None) or "en"
        inputs.append(
            CaseInput(
                qid,
                str(row.get("question") or (labels["question"] if labels is not None else "")),
                reference,
                "" if _absent(row.get("answer")) else str(row["answer"]),
                bool(seen.get("abstained", False)),
                _listed(row.get("retrieved_ids")),
                _listed(row.get("retrieved_titles")),
                str(language),
                seen.get(SUFFICIENCY),
                seen.get("reason", ""),
                seen.get("correctness"),
            )
        )
    return inputs


# the reading of the one knowledge-base version last assessed in this process: every model's
# kb_health of a run reads the same passages, so the term index and the conflict scan are done once
_READING: dict[str, tuple[KnowledgeView, list[Conflict]]] = {}
# each question's support over that reading (labels.Supports), for the same reason
_SUPPORTS: dict[int, Supports] = {}
READING_FORMAT = "3"  # a stored reading of another format is never loaded: raise it when
# KnowledgeView or Conflict change shape or what they read (3: lone letters as terms)


def _version_of(passages: pd.DataFrame, statuses: dict[str, str], versions: set[frozenset[str]]) -> str:
    """What the reading depends on, hashed: the passages' ids, titles, texts and languages, the
    documents' statuses and which documents supersede which (never the model, never the cases)."""
    columns = [c for c in ("passage_id", "title", "passage", "language") if c in passages]
    digest = hashlib.sha256(READING_FORMAT.encode())
    digest.update(pd.util.hash_pandas_object(passages[columns], index=False).values.tobytes())
    digest.update(json.dumps(sorted(statuses.items())).encode())
    digest.update(json.dumps(sorted(sorted(pair) for pair in versions)).encode())
    return digest.hexdigest()


def _stored(folder: Path, key: str) -> tuple[KnowledgeView, list[Conflict]] | None:
    """The reading another process stored for this version; None when absent or unreadable
    (then it is computed again, never guessed)."""
    try:
        with (folder / f"{key}.pickle").open("rb") as handle:
            found = pickle.load(handle)  # noqa: S301 - written by this module in the instance's own storage
    except (OSError, EOFError, pickle.PickleError, AttributeError, ImportError, TypeError, ValueError):
        return None
    if isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], KnowledgeView):
        return found
    return None


def _store(folder: Path, key: str, reading: tuple[KnowledgeView, list[Conflict]]) -> None:
    """Keep ``reading`` for the next process, written whole then renamed into place; only the
    latest version is kept, so the folder does not grow with the knowledge base's history."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f"{key}.{os.getpid()}.partial"
        with partial.open("wb") as handle:
            pickle.dump(reading, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(partial, folder / f"{key}.pickle")
        for old in folder.glob("*.pickle"):
            if old.name != f"{key}.pickle":
                old.unlink(missing_ok=True)
    except OSError:  # a full or read-only disk costs the next process a recomputation, no more
        return


def knowledge_base_reading(
    passages: pd.DataFrame,
    statuses: dict[str, str],
    versions: set[frozenset[str]],
    folder: Path | None = None,
) -> tuple[KnowledgeView, list[Conflict]]:
    """The knowledge base read by the language analysis (its term index) and its conflicts:
    computed once per knowledge-base version and status, kept in the process (one version at a
    time, so memory does not grow) and, with ``folder``, stored there for the runs of other
    processes. Neither is changed by its readers."""
    key = _version_of(passages, statuses, versions)
    if key not in _READING:
        reading = _stored(folder, key) if folder is not None else None
        if reading is None:
            view = knowledge_view(passages, statuses)
            reading = (view, find_conflicts(view, versions))
            if folder is not None:
                _store(folder, key, reading)
        _READING.clear()
        _READING[key] = reading
    return _READING[key]


def forget_readings() -> None:
    """Drop the reading and the support memo kept for the next model's assessment: once every
    model of a run is assessed, the comparison and the report need neither."""
    _READING.clear()
    _SUPPORTS.clear()
    return_freed_heap()


def _supports_of(view: KnowledgeView, thresholds: Thresholds) -> Supports:
    """The memo of each question's support over ``view``, kept beside the reading: every model of
    a run asks it about the same questions (its entries grow with the distinct questions, and go
    with the reading when the knowledge base changes)."""
    kept = _SUPPORTS.get(id(view))
    if kept is None or kept.view is not view or kept.th != thresholds:
        _SUPPORTS.clear()
        kept = _SUPPORTS[id(view)] = Supports(view, thresholds)
    return kept


def assess(
    passages: pd.DataFrame,
    cases: list[CaseInput],
    source_documents: list[str] | None = None,
    production: pd.DataFrame | None = None,
    settings: HealthSettings = HealthSettings(),
    reading_folder: Path | None = None,
    production_source: str = "",
    paraphrase: ParaphraseReader | None = None,
) -> Health:
    """Every part of the knowledge base's health, from the indexed ``passages``, the labelled
    ``cases``, the ids the documents' source holds now (ghosts; None: unknown) and optional
    ``production`` questions (id, question, language; ``production_source`` says where they came
    from); ``reading_folder``: where the knowledge base's reading is kept between processes
    (None: in this process only); ``paraphrase``: the model that reads a question said in
    other words than the passage answering it (None: the lexical rule alone)."""
    times: DocumentTimes = document_times(passages, settings.as_of)
    times = with_usage(times, (c.retrieved_ids for c in cases), source_documents)
    versions = {
        frozenset({row.document, row.superseded_by})
        for row in times.table.itertuples()
        if isinstance(row.superseded_by, str)
    }
    view, conflicts = knowledge_base_reading(passages, times.status_of(), versions, reading_folder)
    supports = _supports_of(view, settings.thresholds)
    table = case_table(cases, view, conflicts, settings.thresholds, supports, paraphrase)
    if paraphrase is not None:
        paraphrase.release()  # every case is read: the clustering below does not carry the model
    traffic = None
    if production is not None:
        traffic = compare_traffic(
            table[["qid", "question", "language"]], production, settings.max_topics, seed=settings.seed
        )
        traffic = replace(traffic, source=production_source)
    topics = empty_topics()
    if settings.with_topics:
        topics = topic_table(table, settings.max_topics, settings.seed)
    return_freed_heap()  # the clustering's vectors are gone: the report that follows does not carry them
    return Health(
        table,
        times.table,
        topics,
        conflicts,
        label_rates(table),
        times.as_of.date().isoformat(),
        times.problems,
        traffic,
        gap_signal(paraphrase, [c.language or ENGLISH for c in cases]),
    )


def _plain(value):
    """A value as JSON holds it (numpy scalars and arrays, NaN as None)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple) or hasattr(value, "tolist") and not isinstance(value, str):
        listed = value.tolist() if hasattr(value, "tolist") else value
        return [_plain(v) for v in listed] if isinstance(listed, list) else _plain(listed)
    if isinstance(value, float) and pd.isna(value):
        return None
    return value


def _rows(frame: pd.DataFrame) -> list[dict]:
    return [_plain(row) for row in frame.to_dict(orient="records")]


def health_record(health: Health, model: str) -> dict:
    """The health of one model's evaluation as JSON data: what the asset stores and
    ``rag-eval kb health --format json`` prints (``cases``, ``documents``, ``topics``)."""
    traffic = health.traffic
    return {
        "answer_model": model,
        "as_of": health.as_of,
        "gap_signal": health.gap_signal,
        "rates": _plain(health.rates),
        "counts": {
            "cases": len(health.cases),
            "documents": len(health.documents),
            "non_current_documents": int((health.documents["status"] != "current").sum()),
            "never_retrieved": len(health.never_retrieved),
            "ghosts": len(health.ghosts),
            "conflicts": len(health.conflicts),
        },
        "cases": _rows(health.cases),
        "documents": _rows(health.documents),
        "topics": _rows(health.topics),
        # the flagged questions the topics were found on: over MAX_CLUSTERED, a seeded sample
        "topics_fitted_on": min(int(health.topics["size"].sum()) if len(health.topics) else 0, MAX_CLUSTERED),
        "conflicts": [
            {
                "first": c.first,
                "second": c.second,
                "first_sentence": c.first_sentence,
                "second_sentence": c.second_sentence,
                "similarity": round(c.similarity, 3),
            }
            for c in health.conflicts
        ],
        "problems": list(health.problems),
        "traffic": None
        if traffic is None
        else {
            "divergence": traffic.divergence,
            "source": traffic.source,
            "topics": _rows(traffic.topics),
            "proposals": _rows(traffic.proposals),
        },
    }


def with_document_times(passages: pd.DataFrame, documents: pd.DataFrame) -> pd.DataFrame:
    """The indexed passages with their documents' file and time (``user_documents`` holds them;
    a HotpotQA paragraph has none: it is current and no file's)."""
    wanted = [c for c in ("source_file", "updated_at", "valid_until", "supersedes") if c in documents]
    if not wanted or documents.empty:
        return passages
    times = documents[["passage_id", *wanted]].drop_duplicates("passage_id")
    kept = passages.drop(columns=[c for c in wanted if c in passages])
    return kept.merge(times, on="passage_id", how="left")
