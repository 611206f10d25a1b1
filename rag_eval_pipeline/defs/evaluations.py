"""Evaluations named the way a reviewer names them, read back from the instance: a model (its
latest scores), a run id or its prefix, a named baseline, or ``current`` (the latest of the other
side's model). Each becomes the run's own scores, the answers they judged and the judgement list
they were scored on, as that run recorded them (not as they are now)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import pandas as pd
from upath import UPath

from rag_eval_pipeline.defs.names import (
    ARTIFACTS,
    CANDIDATE_ANSWERS,
    INPUT_POINTER,
    INPUT_VERSION,
    JUDGE_SCORES,
)
from rag_eval_pipeline.metrics.diff import DiffSpec, Evaluation, RunDiff, diff_evaluations
from rag_eval_pipeline.storage import formats
from rag_eval_pipeline.storage.baselines import Baseline, BaselineStore
from rag_eval_pipeline.storage.history import StoredMaterialization
from rag_eval_pipeline.storage.materializations import materialization_file
from rag_eval_pipeline.storage.snapshots import SnapshotStore

if TYPE_CHECKING:  # Dagster is imported by the instance's records, not by a local home's
    import dagster as dg

CURRENT = "current"
MIN_RUN_PREFIX = 6  # a shorter prefix would match too much to mean one run
RUN_ID_LENGTH = 36  # a Dagster run id (a UUID)
SCORES_SEARCHED = 10_000  # judge_scores materializations a run-id prefix is looked up in


class EvaluationNotFoundError(LookupError):
    """A name that is no model, run or baseline here, or a run whose files are no longer kept."""


class EvaluationRecords(Protocol):
    """What naming and loading an evaluation asks of the history: an opened instance's
    (``InstanceRecords``) or a local home's SQLite files without Dagster
    (``instance.location.LocalHistory``), which answer alike."""

    def storage_directory(self) -> str: ...

    def registered_models(self) -> list[str] | None: ...

    def score_records(self, model: str | None, limit: int) -> list[StoredMaterialization]:
        """The newest ``judge_scores`` materializations (of ``model``), newest first."""
        ...

    def run_score_records(self, run_id: str) -> list[StoredMaterialization]:
        """The ``judge_scores`` materializations of one run, oldest first."""
        ...

    def materialization(self, asset: str, storage_id: int) -> StoredMaterialization | None:
        """The materialization of ``asset`` stored with that id, if there is one."""
        ...


def _stored(record: dg.EventLogRecord) -> StoredMaterialization:
    materialization = record.asset_materialization
    key = record.asset_key.to_user_string() if record.asset_key else ""
    tags = dict(materialization.tags or {}) if materialization is not None else {}
    return StoredMaterialization(record.storage_id, record.run_id, key, record.partition_key, tags)


@dataclass(frozen=True)
class InstanceRecords:
    """The records of an opened Dagster instance (any storage)."""

    instance: dg.DagsterInstance

    def storage_directory(self) -> str:
        return self.instance.storage_directory()

    def registered_models(self) -> list[str]:
        from rag_eval_pipeline.defs.partitions import registered_models

        return registered_models(self.instance)

    def score_records(self, model: str | None, limit: int) -> list[StoredMaterialization]:
        import dagster as dg

        scores = dg.AssetRecordsFilter(
            asset_key=dg.AssetKey(JUDGE_SCORES), asset_partitions=[model] if model else None
        )
        found = self.instance.fetch_materializations(scores, limit=limit)
        return [_stored(record) for record in found.records]

    def run_score_records(self, run_id: str) -> list[StoredMaterialization]:
        """Read from that run's own events."""
        import dagster as dg

        records = self.instance.get_records_for_run(
            run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION
        ).records
        return [_stored(r) for r in records if r.asset_key == dg.AssetKey(JUDGE_SCORES)]

    def materialization(self, asset: str, storage_id: int) -> StoredMaterialization | None:
        import dagster as dg

        found = self.instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey.from_user_string(asset), storage_ids=[storage_id]),
            limit=1,
        ).records
        return _stored(found[0]) if found else None


@dataclass(frozen=True)
class Pinned:
    """Which run of which model a name meant, and the baseline it named (if it did)."""

    label: str
    model: str
    record: StoredMaterialization
    baseline: Baseline | None = None

    @property
    def run_id(self) -> str:
        return self.record.run_id


def artifacts(records: EvaluationRecords) -> UPath:
    return UPath(records.storage_directory()) / ARTIFACTS


def baselines(records: EvaluationRecords) -> BaselineStore:
    return BaselineStore(artifacts(records))


def _models(records: EvaluationRecords) -> list[str]:
    return records.registered_models() or []


def pinned_baseline(records: EvaluationRecords, baseline: Baseline) -> Pinned:
    """The run a baseline pins, as its scores' materialization."""
    found = [r for r in records.run_score_records(baseline.run_id) if r.partition == baseline.model]
    if not found:
        raise EvaluationNotFoundError(
            f"baseline {baseline.name} pins run {baseline.run_id[:8]} of {baseline.model}, whose scores are "
            f"no longer recorded here: pin another (`rag-eval baseline set {baseline.name} RUN`)"
        )
    return Pinned(f"baseline {baseline.name}", baseline.model, found[-1], baseline)


def latest_of(records: EvaluationRecords, model: str, label: str) -> Pinned:
    found = records.score_records(model, 1)
    if not found:
        raise EvaluationNotFoundError(
            f"{model} has no scores here yet: evaluate it with `rag-eval run --models {model}`"
        )
    return Pinned(label, model, found[0])


def _of_run(records: EvaluationRecords, prefix: str) -> Pinned:
    matches = (
        records.run_score_records(prefix)  # a whole run id: that run's own events
        if len(prefix) == RUN_ID_LENGTH
        else [r for r in records.score_records(None, SCORES_SEARCHED) if r.run_id.startswith(prefix)]
    )
    runs = {r.run_id for r in matches}
    if not matches:
        raise EvaluationNotFoundError(
            f"'{prefix}' is no baseline, answer model or run that scored answers here (models: "
            f"{', '.join(_models(records)) or 'none'}; `rag-eval baseline list` names the "
            "baselines)"
        )
    if len(runs) > 1:
        raise EvaluationNotFoundError(
            f"run prefix '{prefix}' matches {len(runs)} runs ({', '.join(sorted(r[:12] for r in runs))}): "
            "give more of it"
        )
    models = sorted({r.partition or "" for r in matches})
    if len(models) > 1:
        raise EvaluationNotFoundError(
            f"run {prefix} scored several models ({', '.join(models)}): name one as MODEL, or pin "
            "the run of one model"
        )
    return Pinned(f"run {matches[0].run_id[:8]}", models[0], matches[0])


def pin(records: EvaluationRecords, name: str, other: Pinned | None = None) -> Pinned:
    """What ``name`` means here: a baseline, ``current`` (the latest of ``other``'s model), a
    model (its latest scores) or a run id (a prefix of at least ``MIN_RUN_PREFIX`` characters)."""
    baseline = baselines(records).get(name)
    if baseline is not None:
        return pinned_baseline(records, baseline)
    if name == CURRENT:
        if other is None:
            raise EvaluationNotFoundError(
                "'current' is the latest evaluation of the other side's model: name that side first "
                "(`rag-eval diff main current`)"
            )
        return latest_of(records, other.model, f"current {other.model}")
    if name in _models(records):
        return latest_of(records, name, name)
    if len(name) < MIN_RUN_PREFIX:
        raise EvaluationNotFoundError(
            f"'{name}' is no baseline or answer model here, and too short for a run id (at least "
            f"{MIN_RUN_PREFIX} characters); models: {', '.join(_models(records)) or 'none'}"
        )
    return _of_run(records, name)


def _pointed(
    records: EvaluationRecords, record: StoredMaterialization, asset: str
) -> StoredMaterialization | None:
    """The materialization of ``asset`` (or of the asset whose key ends with it, such as
    ``custom_judgement_list``) that the scores' run read: Dagster's input event pointer."""
    pointers = [
        (key[len(INPUT_POINTER) :], value)
        for key, value in record.tags.items()
        if key.startswith(INPUT_POINTER) and key.endswith(asset)
    ]
    if not pointers:
        return None
    key, storage_id = pointers[0]
    return records.materialization(key, int(storage_id))


def judgement_list_of(record: StoredMaterialization) -> str | None:
    """The judgement list's version the scores were computed on, as Dagster recorded it."""
    return next(
        (v for k, v in record.tags.items() if k.startswith(INPUT_VERSION) and k.endswith("judgement_list")),
        None,
    )


def _answers(records: EvaluationRecords, pinned: Pinned) -> pd.DataFrame | None:
    answered = _pointed(records, pinned.record, CANDIDATE_ANSWERS)
    run_id = answered.run_id if answered is not None else pinned.run_id
    kept = materialization_file(artifacts(records), CANDIDATE_ANSWERS, pinned.model, run_id)
    return pd.read_parquet(kept) if kept is not None else None


def _cases(records: EvaluationRecords, pinned: Pinned) -> pd.DataFrame | None:
    listed = _pointed(records, pinned.record, "judgement_list")
    if listed is None:
        return None
    snapshots = SnapshotStore(artifacts(records))
    asset = listed.asset or "judgement_list"
    if not snapshots.has(asset, listed.run_id):
        return None
    return formats.read(snapshots.path(asset, listed.run_id), "rebuild the knowledge base (`rag-eval run`)")


def load_evaluation(records: EvaluationRecords, pinned: Pinned) -> Evaluation:
    """The pinned run's own scores, the answers they judged and the judgement list they were
    scored on; answers or list no longer kept are absent (the diff says so)."""
    kept = materialization_file(artifacts(records), JUDGE_SCORES, pinned.model, pinned.run_id)
    if kept is None:
        raise EvaluationNotFoundError(
            f"the scores of {pinned.label} (run {pinned.run_id[:8]} of {pinned.model}) are no longer kept "
            "(only the newest materializations are): evaluate it again"
        )
    return Evaluation(
        label=pinned.label,
        model=pinned.model,
        run_id=pinned.run_id,
        scores=pd.read_parquet(kept),
        answers=_answers(records, pinned),
        cases=_cases(records, pinned),
        judgement_list=judgement_list_of(pinned.record),
    )


def baseline_refusal(baseline: Baseline, candidate: Evaluation) -> str | None:
    """Why a candidate cannot be compared with a baseline (another judgement list or other
    judges), in one line; None when it can."""
    if (
        baseline.judgement_list
        and candidate.judgement_list
        and baseline.judgement_list != candidate.judgement_list
    ):
        return (
            f"baseline {baseline.name} was scored on judgement list {baseline.judgement_list}, "
            f"{candidate.label} on {candidate.judgement_list}: pin a baseline evaluated on the same "
            f"list (`rag-eval baseline set {baseline.name} RUN`)"
        )
    judges = tuple(candidate.judges())
    if judges != baseline.judges:
        return (
            f"baseline {baseline.name} was judged by {', '.join(baseline.judges)}, {candidate.label} by "
            f"{', '.join(judges)}: judge both alike, or pin a baseline judged like this run "
            f"(`rag-eval baseline set {baseline.name} RUN`)"
        )
    return None


@dataclass(frozen=True)
class BaselineResult:
    """One baseline against the latest evaluation of its model: the diff, or why it was refused
    or could not be read."""

    baseline: Baseline
    diff: RunDiff | None = None
    refused: str | None = None


def against_baselines(records: EvaluationRecords, spec: DiffSpec) -> list[BaselineResult]:
    """Every baseline of the instance diffed with the latest evaluation of its model (what the
    report and the ``baseline_diffs`` asset show)."""
    results = []
    for baseline in baselines(records).all().values():
        try:
            before = load_evaluation(records, pinned_baseline(records, baseline))
            after = load_evaluation(records, latest_of(records, baseline.model, f"latest {baseline.model}"))
        except (EvaluationNotFoundError, FileNotFoundError, ValueError) as err:
            results.append(BaselineResult(baseline, refused=str(err)))
            continue
        refusal = baseline_refusal(baseline, after)
        if refusal:
            results.append(BaselineResult(baseline, refused=refusal))
        else:
            results.append(BaselineResult(baseline, diff=diff_evaluations(before, after, spec)))
    return results


DIFF_TABLE_COLUMNS = ["baseline", "model", "before_run", "after_run", "regressed_cases", "refused"]


def baseline_diff_table(results: list[BaselineResult]) -> pd.DataFrame:
    """The stored value of ``baseline_diffs``: every baseline's metric rows (a refused one as a
    row that says why), what the report's diff section reads."""
    frames = []
    for result in results:
        head = {
            "baseline": result.baseline.name,
            "model": result.baseline.model,
            "before_run": result.baseline.run_id,
        }
        if result.diff is None:
            frames.append(
                pd.DataFrame([{**head, "after_run": None, "regressed_cases": 0, "refused": result.refused}])
            )
            continue
        rows = result.diff.metrics.copy()
        for column, value in {
            **head,
            "after_run": result.diff.after.run_id,
            "regressed_cases": int(result.diff.regressions["qid"].nunique()),
            "refused": None,
        }.items():
            rows[column] = value
        frames.append(rows)
    if not frames:
        return pd.DataFrame(columns=DIFF_TABLE_COLUMNS)
    table = pd.concat(frames, ignore_index=True)
    return table[[*DIFF_TABLE_COLUMNS, *[c for c in table.columns if c not in DIFF_TABLE_COLUMNS]]]
