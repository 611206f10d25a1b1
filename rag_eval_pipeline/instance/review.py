"""Human review through the instance: a queue from a model's stored evaluation, and labels taken
in (kept in the review folder, then the judges measured and the labelled models summarized
again) for `rag-eval review`."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pandas as pd

from rag_eval_pipeline.common.files import write_atomically
from rag_eval_pipeline.defs.names import (
    AGENT_VERSION_PARTITIONS,
    CANDIDATE_ANSWERS,
    COMPARISON_JOB,
    CORRECTED_MEANS,
    EVAL_REPORT,
    HUMAN_LABELS,
    JUDGE_AGREEMENT,
    JUDGE_SCORES,
    JUDGEMENT_LIST,
    MODEL_COMPARISON,
    PROMETHEUS_METRICS,
    TRIGGER_TAG,
)
from rag_eval_pipeline.defs.partitions import registered_models
from rag_eval_pipeline.defs.session_sources import SESSION_SOURCES
from rag_eval_pipeline.instance.lineage import NotMaterializedError, load_agent_asset, load_asset
from rag_eval_pipeline.instance.runs import compared_afterwards, execute
from rag_eval_pipeline.metrics.agreement import (
    CORRECTED_TABLE,
    CORRECTION_NOTE,
    LABELLED_METRICS,
    SESSION_METRICS,
    reviewer_agreement,
    session_source,
)
from rag_eval_pipeline.review.queue import QueueSpec, build_queue, queue_name, write_queue
from rag_eval_pipeline.trajectories.review import session_model, session_queue
from rag_eval_pipeline.trajectories.tables import sessions_of_frame

REVIEW_TRIGGER = "review_import"
# what new labels change across the models after the summaries: the comparison, the report
AFTER_LABELS = [
    HUMAN_LABELS,
    JUDGE_AGREEMENT,
    CORRECTED_MEANS,
    MODEL_COMPARISON,
    EVAL_REPORT,
    PROMETHEUS_METRICS,
]


@dataclass(frozen=True)
class WrittenQueue:
    page: Path
    rows: Path
    cases: int
    metrics: list[str]


def export_queue(
    defs: dg.Definitions, instance: dg.DagsterInstance, spec: QueueSpec, folder: Path, name: str | None
) -> WrittenQueue:
    """The queue of ``spec.model``'s latest evaluation (or, for ``trajectories:<version>`` and
    ``simulation:<version>``, of that agent version's judged sessions), written into ``folder``."""
    sessions_of = session_source(spec.model)
    if sessions_of is not None:
        prefix, version = sessions_of
        source = SESSION_SOURCES[prefix]
        judged = load_agent_asset(instance, source.judge_scores, version, source.command)
        sessions = sessions_of_frame(load_agent_asset(instance, source.sessions, version, source.command))
        records = session_queue(spec, sessions, judged) if len(judged) else []
        if not records or not records[0]["metrics"]:
            raise ValueError(
                f"{spec.model}'s sessions have no judge score on {', '.join(SESSION_METRICS)} to review: "
                f"run `{source.command} {source.judges_option} first"
            )
    else:
        scores = load_asset(instance, JUDGE_SCORES, spec.model)
        answers = load_asset(instance, CANDIDATE_ANSWERS, spec.model)
        judgement_list = load_asset(instance, JUDGEMENT_LIST)
        records = build_queue(spec, answers, judgement_list, scores)
    if not records or not records[0]["metrics"]:
        raise ValueError(
            f"{spec.model} has no judge score on {', '.join(LABELLED_METRICS)} to review: evaluate it "
            "with a judge that scores them (reference, or an LLM judge such as claude-sonnet-4-6)"
        )
    page, rows = write_queue(
        folder,
        name or queue_name(spec, pd.Timestamp.now(tz="UTC").strftime("%Y-%m-%d")),
        records,
        not spec.show_judge,
    )
    return WrittenQueue(page, rows, len(records), list(records[0]["metrics"]))


def evaluated_cases(defs: dg.Definitions, instance: dg.DagsterInstance) -> dict[str, set[str]]:
    """Each registered answer model's evaluated question ids (a model never evaluated: none),
    and each agent version's sessions as ``trajectories:<version>`` (traced) and
    ``simulation:<version>`` (simulated)."""
    cases = {}
    for model in registered_models(instance):
        try:
            cases[model] = set(load_asset(instance, CANDIDATE_ANSWERS, model)["qid"])
        except NotMaterializedError:
            continue
    for version in instance.get_dynamic_partitions(AGENT_VERSION_PARTITIONS):
        for source in SESSION_SOURCES.values():
            try:
                sessions = load_agent_asset(instance, source.sessions, version)
            except NotMaterializedError:
                continue
            cases[session_model(version, source.prefix)] = set(sessions["session_id"])
    return cases


def keep_label_file(source: Path, labels_folder: Path) -> Path:
    """A copy of ``source`` in the labels folder (where the sensor and the asset read it),
    renamed aside if another file there has its name; written aside, then renamed into place."""
    labels_folder.mkdir(parents=True, exist_ok=True)
    target = labels_folder / source.name
    if target.exists() and target.resolve() == source.resolve():
        return target
    number = 1
    while target.exists() and target.read_bytes() != source.read_bytes():
        target = labels_folder / f"{source.stem}-{number}{source.suffix}"
        number += 1
    write_atomically(target, lambda tmp: shutil.copyfile(source, tmp))
    return target


def keep_labels(labels: pd.DataFrame, labels_folder: Path, name: str) -> Path:
    """Labels read from elsewhere (Phoenix), as one JSONL file of the labels folder; a later
    import of the same source replaces it."""
    labels_folder.mkdir(parents=True, exist_ok=True)
    target = labels_folder / f"{name}.jsonl"
    rows = labels.drop(columns=["source"])
    write_atomically(target, lambda tmp: rows.to_json(tmp, orient="records", lines=True, force_ascii=False))
    return target


@dataclass
class Applied:
    agreement: pd.DataFrame
    corrected: pd.DataFrame  # answer_model, judge_id, metric, mean, corrected_mean, ...
    reviewers: pd.DataFrame  # people against each other, where a case has two or more


def apply_labels(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    models: Sequence[str],
    verbose: bool,
    echo: Callable[[str], None] = print,
) -> Applied:
    """Read every label again, measure the judges against people, correct the labelled models'
    means (and flag every model's judge people flagged), and refresh the comparison and the
    report: one run across the models; no model's own evaluation is touched."""
    tags = {TRIGGER_TAG: REVIEW_TRIGGER, **compared_afterwards()}
    answer_models = [m for m in models if session_source(m) is None]
    if not answer_models:  # only an agent's sessions here: no comparison or report to refresh
        echo("[review] reading the labels, measuring the judges ...")
        execute(
            defs, instance, COMPARISON_JOB, {}, None, verbose, tags, assets=[HUMAN_LABELS, JUDGE_AGREEMENT]
        )
        labels = load_asset(instance, HUMAN_LABELS)
        return Applied(load_asset(instance, JUDGE_AGREEMENT), pd.DataFrame(), reviewer_agreement(labels))
    echo("[review] reading the labels, measuring the judges, correcting the means, the report ...")
    # the scores did not change: the paired comparison and judge validation stand as they are
    execute(defs, instance, COMPARISON_JOB, {}, None, verbose, tags, assets=AFTER_LABELS)
    agreement = load_asset(instance, JUDGE_AGREEMENT)
    table = load_asset(instance, CORRECTED_MEANS)
    notes = table[CORRECTION_NOTE].fillna("").astype(str)
    shown = table[table["answer_model"].isin(set(models)) & ((table["n_labels"] > 0) | (notes != ""))]
    columns = ["answer_model", *CORRECTED_TABLE]
    return Applied(
        agreement,
        shown[columns].reset_index(drop=True),
        reviewer_agreement(load_asset(instance, HUMAN_LABELS)),
    )
