"""Sensors: new documents rebuild the knowledge base, and a published knowledge base (whatever
launched its rebuild) re-runs the evaluation of every registered answer model."""

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


def build_sensors(knowledge_base_job, evaluation_job, settings: Settings) -> list:
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

    return [new_documents_sensor, knowledge_base_rebuilt_sensor]
