"""Sensors: new documents rebuild the knowledge base, a published knowledge base (whatever
launched its rebuild) re-runs the evaluation of every registered answer model, and new metric
summaries refresh the comparison and the reports."""

import json

import dagster as dg

from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.data.documents import document_files, file_digest, load_documents
from rag_eval_pipeline.defs.partitions import ANSWER_MODEL_PARTITIONS
from rag_eval_pipeline.defs.resources import DocumentsResource
from rag_eval_pipeline.defs.run_config import CLI_PID_TAG, evaluation_run_config

DOCUMENTS_TAG = "rag_eval/documents"
TRIGGER_TAG = "rag_eval/trigger"
PROFILE_TAG = "rag_eval/profile"  # a scheduled profile's rebuild: its evaluations use its judges
NEW_DOCUMENTS = "new_documents"
# the documents' part of the knowledge base, and the asset that publishes it when all succeeded
REBUILD_SELECTION = [
    dg.AssetKey("user_documents"),
    dg.AssetKey("kb_passages"),
    dg.AssetKey("kb_index"),
    dg.AssetKey("knowledge_base"),
]


def changed_files(folder_versions: dict[str, str], cursor: dict[str, str]) -> list[str]:
    """Files that are new or whose content changed since the cursor (each version once)."""
    return sorted(name for name, digest in folder_versions.items() if cursor.get(name) != digest)


def evaluations_after_publish(
    instance: dg.DagsterInstance, published_by: str, settings: Settings
) -> list[dg.RunRequest] | dg.SkipReason:
    """One evaluation run per registered model after the run ``published_by`` made a rebuilt
    knowledge base live (the profile's judges after a profile's schedule); none when rag-eval
    published it, since it evaluates its models itself."""
    run = instance.get_run_by_id(published_by)
    tags = run.tags if run is not None else {}
    if CLI_PID_TAG in tags:
        return dg.SkipReason("published by rag-eval, which evaluates its models itself")
    profile = tags.get(PROFILE_TAG)
    run_config = evaluation_run_config(settings.with_profile(profile).judges if profile else None)
    return [
        dg.RunRequest(
            run_key=f"{published_by}:{partition}",
            partition_key=partition,
            run_config=run_config,
            tags={DOCUMENTS_TAG: tags.get(DOCUMENTS_TAG, ""), "rag_eval/knowledge_base_run": published_by},
        )
        for partition in instance.get_dynamic_partitions(ANSWER_MODEL_PARTITIONS)
    ]


REPORTS_INPUT = dg.AssetKey("metric_summary")  # written last in a partition's run, after its checks
REPORTS_OUTPUT = dg.AssetKey("model_comparison")


def reports_refresh(
    latest_summary: int | None, latest_comparison: int | None, busy_runs: int
) -> dg.RunRequest | dg.SkipReason:
    """A comparison run when a metric summary was stored after the comparison last was (storage
    ids are the event log's order), once no evaluation or comparison run is in flight, so a
    backfill of many partitions gets one refresh at its end. It compares stored history, so it
    catches up with whatever was materialized while it was off."""
    if latest_summary is None:
        return dg.SkipReason("no metric summary yet")
    if latest_comparison is not None and latest_comparison > latest_summary:
        return dg.SkipReason("the comparison and the reports are current")
    if busy_runs:
        return dg.SkipReason(f"waiting for {busy_runs} evaluation or comparison run(s) to finish")
    return dg.RunRequest(run_key=f"summaries-up-to-{latest_summary}", tags={TRIGGER_TAG: "new_summaries"})


def _latest_storage_id(instance: dg.DagsterInstance, key: dg.AssetKey) -> int | None:
    records = instance.fetch_materializations(key, limit=1).records
    return records[0].storage_id if records else None


def build_sensors(knowledge_base_job, evaluation_job, settings: Settings, comparison_job=None) -> list:
    @dg.sensor(
        job=knowledge_base_job,
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Rebuilds the knowledge base once per new or changed file of the documents "
        "folder (malformed files are reported and skipped).",
    )
    def new_documents_sensor(context: dg.SensorEvaluationContext, documents: DocumentsResource):
        """Watches the documents folder; a new or changed file rebuilds the knowledge base index."""
        from pathlib import Path

        cursor = json.loads(context.cursor) if context.cursor else {}
        files = document_files(Path(documents.folder))
        versions = {path.name: file_digest(path) for path in files}
        changed = changed_files(versions, cursor)
        if not changed:
            return dg.SkipReason(f"no new or changed documents in {documents.folder}")
        problems = load_documents(Path(documents.folder)).problems
        bad = {p.split(":", 1)[0] for p in problems}
        for problem in problems:
            context.log.warning(f"malformed document skipped: {problem}")
        usable = [name for name in changed if name not in bad]
        new_cursor = json.dumps(versions, sort_keys=True)
        if not usable:
            return dg.SensorResult(
                skip_reason=f"only malformed documents changed: {', '.join(changed)}", cursor=new_cursor
            )
        run_key = "documents:" + ",".join(f"{name}@{versions[name]}" for name in usable)
        return dg.SensorResult(
            run_requests=[
                dg.RunRequest(
                    run_key=run_key,
                    asset_selection=REBUILD_SELECTION,
                    tags={DOCUMENTS_TAG: ", ".join(usable), TRIGGER_TAG: NEW_DOCUMENTS},
                )
            ],
            cursor=new_cursor,
        )

    @dg.asset_sensor(
        asset_key=dg.AssetKey("knowledge_base"),
        job=evaluation_job,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="When a rebuilt knowledge base is published, from any launch (documents sensor, "
        "schedule, the UI's catalog), evaluates every registered answer model again (one run per "
        "partition), with the profile's judges after a profile's schedule.",
    )
    def knowledge_base_rebuilt_sensor(context: dg.SensorEvaluationContext, asset_event: dg.EventLogEntry):
        return evaluations_after_publish(context.instance, asset_event.run_id, settings)

    sensors = [new_documents_sensor, knowledge_base_rebuilt_sensor]
    if comparison_job is None:
        return sensors

    @dg.sensor(
        job=comparison_job,
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Refreshes model_comparison, the paired comparison, judge validation, the report "
        "and the Prometheus metrics after new metric summaries (one run after a backfill ends); it "
        "compares stored history, so it catches up after being off.",
    )
    def reports_refresh_sensor(context: dg.SensorEvaluationContext):
        """Keeps the cross-model assets current with the partitions' summaries."""
        instance = context.instance
        busy = instance.get_runs_count(
            dg.RunsFilter(
                job_name=None,
                statuses=[
                    dg.DagsterRunStatus.QUEUED,
                    dg.DagsterRunStatus.NOT_STARTED,
                    dg.DagsterRunStatus.STARTING,
                    dg.DagsterRunStatus.STARTED,
                ],
            )
        )
        return reports_refresh(
            _latest_storage_id(instance, REPORTS_INPUT), _latest_storage_id(instance, REPORTS_OUTPUT), busy
        )

    return [*sensors, reports_refresh_sensor]
