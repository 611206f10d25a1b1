"""Human review: every label people gave, each judge measured against them, and (on a schedule)
a fresh queue to label. The logic is in ``review/`` and ``metrics/agreement.py``."""

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import dagster as dg
import pandas as pd

from rag_eval_pipeline.data.documents import file_digest
from rag_eval_pipeline.data.rows import ROW_FILE_TYPES, RowFileError
from rag_eval_pipeline.defs.io_manager import FAN_IN, PINNED_BY
from rag_eval_pipeline.defs.names import METRIC_SUMMARY, REVIEW
from rag_eval_pipeline.defs.resources import HistoryResource, SettingsResource
from rag_eval_pipeline.defs.session_sources import SessionSource
from rag_eval_pipeline.metrics.agreement import (
    CORRECTED_TABLE,
    CORRECTION_NOTE,
    FLAG_COLUMN,
    AgreementBars,
    agreement_history_rows,
    corrections,
    reviewer_agreement,
)
from rag_eval_pipeline.metrics.agreement import (
    judge_agreement as measure_judges,
)
from rag_eval_pipeline.reporting.markdown import to_markdown
from rag_eval_pipeline.review.labels import LABEL_COLUMNS, latest_labels, now, read_label_file
from rag_eval_pipeline.review.queue import QueueSpec, build_queue, queue_name, write_queue
from rag_eval_pipeline.trajectories.review import as_scores, session_model

EVERY_MODEL = {"allow_missing_partitions": True, FAN_IN: True}
AS_SUMMARIZED = {**EVERY_MODEL, PINNED_BY: METRIC_SUMMARY}


def label_files(folder: Path) -> list[Path]:
    """The label files of a folder, oldest first (a later file corrects an earlier one); a link
    to a file outside the folder is not one of them (``outside_links`` names it)."""
    if not folder.is_dir():
        return []
    files = [
        p
        for p in folder.iterdir()
        if p.is_file() and p.suffix.lower() in ROW_FILE_TYPES and p not in outside_links(folder)
    ]
    return sorted(files, key=lambda p: (p.stat().st_mtime_ns, p.name))


def outside_links(folder: Path) -> list[Path]:
    """Links in the folder to files outside it: labels are what people dropped there, not what a
    link can make the instance read from anywhere."""
    if not folder.is_dir():
        return []
    inside = folder.resolve()
    return [p for p in folder.iterdir() if p.is_symlink() and inside not in p.resolve().parents]


def labels_version(labels: pd.DataFrame) -> str:
    """The labels' content, hashed: the same labels are the same version wherever they came from."""
    content = labels.drop(columns=["source"]).sort_values(["reviewer", "answer_model", "qid", "metric"])
    return hashlib.sha256(content.to_csv(index=False).encode()).hexdigest()[:16]


def agreement_version(agreement: pd.DataFrame) -> str:
    """What the summaries read of the agreement (who is flagged and why), hashed."""
    content = agreement[["judge_id", "metric", "n", "flagged", "why"]].to_csv(index=False)
    return hashlib.sha256(content.encode()).hexdigest()[:16]


READ_FILES = "read_files"  # human_labels' metadata: the label files it read, name -> digest


def known_cases(
    answers_by_model: dict[str, pd.DataFrame], sessions_by_model: dict[str, pd.DataFrame] | None = None
) -> dict[str, set[str]]:
    """The cases people may label: each model's answers, each agent version's sessions (keyed
    ``trajectories:<version>`` or ``simulation:<version>``)."""
    known = {model: set(answers["qid"]) for model, answers in answers_by_model.items()}
    for model, sessions in (sessions_by_model or {}).items():
        known[model] = set(sessions["session_id"])
    return known


def _read_labels(
    context: dg.AssetExecutionContext,
    candidate_answers: dict[str, pd.DataFrame],
    sessions_by_model: dict[str, pd.DataFrame],
    settings: SettingsResource,
) -> pd.DataFrame:
    """Every reviewer's latest label of each case and metric, from the files in the review
    folder's ``labels/`` (what `rag-eval review import` and the labels sensor put there). A file
    with a bad row is left out whole, each problem logged with its file and line."""
    folder = settings.settings.review.labels_folder
    frames, skipped = [], []
    for link in outside_links(folder):
        context.log.warning(f"label file left out: {link.name} is a link to a file outside {folder}")
    files = label_files(folder)
    for path in files:
        try:
            frames.append(read_label_file(path, known_cases(candidate_answers, sessions_by_model)))
        except RowFileError as err:
            skipped.append(path.name)
            for problem in err.problems:
                context.log.warning(f"label file left out: {problem}")
    labels = latest_labels(frames)
    version = labels_version(labels)
    context.set_data_version(context.asset_key, dg.DataVersion(version))
    context.add_output_metadata(
        {
            "labels": len(labels),
            "reviewers": ", ".join(sorted(set(labels["reviewer"]))) or "none",
            "answer_models": ", ".join(sorted(set(labels["answer_model"]))) or "none",
            "files": len(frames),
            "files_left_out": ", ".join(skipped) or "none",
            "folder": dg.MetadataValue.path(str(folder)),
            "labels_version": version,
            # each file as it was read (left out or not): the labels sensor reads a file again
            # only when it changed since, whoever read it (`rag-eval review import`, the sensor)
            READ_FILES: dg.MetadataValue.json({path.name: file_digest(path) for path in files}),
        }
    )
    return labels


def _readable(agreement: pd.DataFrame) -> pd.DataFrame:
    """The agreement table narrow enough for the asset page: each estimate with its interval."""

    def interval(estimate: str, low: str, high: str) -> list[str]:
        return [
            "–" if pd.isna(v) else f"{v:.2f} [{lo:.2f}, {hi:.2f}]"
            for v, lo, hi in agreement[[estimate, low, high]].to_numpy()
        ]

    return pd.DataFrame(
        {
            "judge": agreement["judge_id"],
            "metric": agreement["metric"],
            "n": agreement["n"],
            "accuracy": agreement["accuracy"].round(3),
            "weighted kappa": interval("kappa", "kappa_low", "kappa_high"),
            "true-positive rate": interval("true_positive_rate", "tpr_low", "tpr_high"),
            "true-negative rate": interval("true_negative_rate", "tnr_low", "tnr_high"),
            "flagged": agreement["why"].where(agreement["flagged"], "no"),
        }
    )


def _measure_judges(
    context: dg.AssetExecutionContext,
    human_labels: pd.DataFrame,
    judge_scores: dict[str, pd.DataFrame],
    judged_sessions: dict[str, pd.DataFrame],
    settings: SettingsResource,
    history: HistoryResource,
) -> pd.DataFrame:
    """Each judge against people, per metric and pooled over the answer models: accuracy,
    linearly weighted kappa with a bootstrap interval, the pass/fail rates at 0.5 with exact
    intervals, and whether it clears the configured bars (``flagged``, ``why``). Recorded per
    set of labels in the calibration history the report charts."""
    review = settings.settings.review
    sessions = {model: as_scores(s) for model, s in judged_sessions.items() if len(s)}
    agreement, tables = measure_judges(
        human_labels, {**judge_scores, **sessions}, AgreementBars(review.min_kappa, review.min_rate)
    )
    reviewers = reviewer_agreement(human_labels)
    flagged = agreement[agreement["flagged"]] if len(agreement) else agreement
    for row in flagged.to_dict(orient="records"):
        context.log.warning(f"judge {row['judge_id']} on {row['metric']} disagrees with people: {row['why']}")
    if len(agreement):
        history.record_agreement(agreement_history_rows(agreement, labels_version(human_labels), now()))
    # its content is its version: a refresh that measures the same agreement leaves every
    # summary that reads its flags current
    context.set_data_version(context.asset_key, dg.DataVersion(agreement_version(agreement)))
    metadata = {
        "labels": len(human_labels),
        "labels_version": labels_version(human_labels),
        "answer_models": ", ".join(sorted(set(human_labels["answer_model"]))) or "none",
        "flagged_judges": "; ".join(
            f"{r['judge_id']} / {r['metric']} ({r['why']})" for r in flagged.to_dict("records")
        )
        or "none",
        "agreement": dg.MetadataValue.md(
            to_markdown(_readable(agreement)) if len(agreement) else "no labels yet"
        ),
        "reviewers": dg.MetadataValue.md(to_markdown(reviewers) if len(reviewers) else "one reviewer a case"),
    }
    for name, table in list(tables.items())[:10]:
        metadata[f"confusion: {name}"] = dg.MetadataValue.md(to_markdown(table.reset_index()))
    context.add_output_metadata(metadata)
    return agreement


@dg.asset(
    group_name=REVIEW,
    ins={
        METRIC_SUMMARY: dg.AssetIn(metadata=EVERY_MODEL),
        "judge_scores": dg.AssetIn(metadata=AS_SUMMARIZED),
    },
    code_version="1",
)
def corrected_means(
    context: dg.AssetExecutionContext,
    metric_summary: dict[str, pd.DataFrame],
    judge_scores: dict[str, pd.DataFrame],
    human_labels: pd.DataFrame,
    judge_agreement: pd.DataFrame,
) -> pd.DataFrame:
    """Each model's judge means beside their correction by people's labels of its cases
    (prediction-powered, with a 95% interval, only where the labels were drawn at random) and
    the flags people raised on a judge. Across the models, so a model's own summary never
    waits on labels or on another model."""
    table = corrections(metric_summary, judge_scores, human_labels, judge_agreement)
    corrected = table[table["n_labels"] > 0]
    refused = sorted(
        set(table.loc[(table["n_labels"] == 0) & (table[CORRECTION_NOTE] != ""), CORRECTION_NOTE])
    )
    flagged = table[table[FLAG_COLUMN] != ""]
    context.add_output_metadata(
        {
            "corrected": len(corrected),
            "corrected_by_people": dg.MetadataValue.md(
                to_markdown(corrected[["answer_model", *CORRECTED_TABLE, FLAG_COLUMN]])
                if len(corrected)
                else "no labels drawn at random yet: no mean is corrected"
            ),
            **({"not_corrected": "; ".join(refused)} if refused else {}),
            "flagged_by_people": "; ".join(
                sorted({f"{r.judge_id}/{r.metric}: {r.flagged_by_people}" for r in flagged.itertuples()})
            )
            or "none",
        }
    )
    return table


@dg.asset(
    group_name=REVIEW,
    ins={
        "judge_scores": dg.AssetIn(metadata=AS_SUMMARIZED),
        "candidate_answers": dg.AssetIn(metadata=AS_SUMMARIZED),
    },
    code_version="1",
    # shown on the asset's page before its first materialization, where Dagster would say only
    # "No metadata found"
    metadata={
        "what it writes": "one labelling page and one JSONL of empty label rows per evaluated model, "
        "in the review folder (review.folder): materialize it, or run `rag-eval review export`",
        "then": "label the cases in the page, drop the JSONL into <review folder>/labels/ (or run "
        "`rag-eval review import`): new_labels_sensor measures the judges against them",
    },
)
def review_queue(
    context: dg.AssetExecutionContext,
    judge_scores: dict[str, pd.DataFrame],
    candidate_answers: dict[str, pd.DataFrame],
    judgement_list: pd.DataFrame,
    settings: SettingsResource,
) -> pd.DataFrame:
    """A fresh review queue per evaluated model (the configured size and strategy), written into
    the review folder as a labelling page and a JSONL of empty label rows: the monthly
    calibration's work list."""
    review = settings.settings.review
    day = pd.Timestamp.now(tz="UTC").strftime("%Y-%m-%d")
    written = []
    for model, scores in sorted(judge_scores.items()):
        spec = QueueSpec(model, review.queue_size, review.strategy)
        records = build_queue(spec, candidate_answers[model], judgement_list, scores)
        page, rows = write_queue(Path(review.folder), queue_name(spec, day), records, blind=True)
        written.append({"answer_model": model, "cases": len(records), "page": str(page), "rows": str(rows)})
    queues = pd.DataFrame(written, columns=["answer_model", "cases", "page", "rows"])
    context.add_output_metadata(
        {"queues": dg.MetadataValue.md(to_markdown(queues) if len(queues) else "none")}
    )
    return queues


def review_assets(sources: Sequence[SessionSource] = ()) -> list[dg.AssetsDefinition]:
    """``human_labels``, ``judge_agreement`` and ``corrected_means``. With an agent's sessions
    (a ``trajectories`` or ``simulation`` section: ``sources``), the labels and the agreement
    read those sessions and their session judges too; without, nothing of them (no asset of
    another partitioning upstream)."""
    sessions_in = {s.sessions: dg.AssetIn(metadata=EVERY_MODEL) for s in sources}
    judged_in = {s.judge_scores: dg.AssetIn(metadata=EVERY_MODEL) for s in sources}

    def by_model(tables: dict[str, dict[str, pd.DataFrame]], key: str) -> dict[str, pd.DataFrame]:
        """Each source's tables per agent version, keyed as people label them (``<source>:<version>``)."""
        return {
            session_model(version, s.prefix): table
            for s in sources
            for version, table in tables[getattr(s, key)].items()
        }

    def review_asset(name: str, ins: dict[str, dg.AssetIn], described_by: Callable) -> Callable:
        """An asset of the review group over every model's (and agent version's) tables."""
        return dg.asset(
            name=name, group_name=REVIEW, ins=ins, code_version="1", description=described_by.__doc__
        )

    @review_asset(
        "human_labels", {"candidate_answers": dg.AssetIn(metadata=EVERY_MODEL), **sessions_in}, _read_labels
    )
    def labels(context, candidate_answers, settings: SettingsResource, **sessions):
        return _read_labels(context, candidate_answers, by_model(sessions, "sessions"), settings)

    @review_asset(
        "judge_agreement", {"judge_scores": dg.AssetIn(metadata=AS_SUMMARIZED), **judged_in}, _measure_judges
    )
    def agreement(
        context, human_labels, judge_scores, settings: SettingsResource, history: HistoryResource, **judged
    ):
        return _measure_judges(
            context, human_labels, judge_scores, by_model(judged, "judge_scores"), settings, history
        )

    return [labels, agreement, corrected_means]


__all__ = [
    "LABEL_COLUMNS",
    "review_assets",
    "corrected_means",
    "review_queue",
]
