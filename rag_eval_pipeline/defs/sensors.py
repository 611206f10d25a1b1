"""Sensors: the configured answer models become partitions, new documents rebuild the knowledge
base, a published knowledge base (whatever launched its rebuild) re-runs the evaluation of every
registered answer model, new results refresh the comparison and the reports (once a backfill is
over), and new label files measure the judges again and correct the means, across the models."""

import json
import re
import socket
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import dagster as dg

from rag_eval_pipeline.answering.spec import InvalidNameError, check_name
from rag_eval_pipeline.common.processes import process_alive
from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.data.documents import document_versions, file_digest, folder_fingerprint
from rag_eval_pipeline.defs.assets.review import READ_FILES, label_files
from rag_eval_pipeline.defs.names import (
    AFTER_BACKFILL_TAG,
    CLI_PID_TAG,
    COMPARED_BY_TAG,
    COMPARISON_JOB,
    DOCUMENTS_FINGERPRINT,
    DOCUMENTS_REBUILD,
    DOCUMENTS_TAG,
    EVALUATION_JOB,
    EVALUATION_STEPS,
    FAILED_MODELS_TAG,
    HUMAN_LABELS,
    JUDGE_SCORES,
    KNOWLEDGE_BASE,
    KNOWLEDGE_BASE_JOB,
    KNOWLEDGE_BASE_RUN_TAG,
    METRIC_SUMMARY,
    MODEL_COMPARISON,
    PARTITION_TAG,
    PROFILE_TAG,
    TRIGGER_TAG,
    USER_DOCUMENTS,
)
from rag_eval_pipeline.defs.partitions import (
    ANSWER_MODEL_PARTITIONS,
    failed_checks,
    registered_models,
    step_failure_reasons,
)
from rag_eval_pipeline.defs.resources import DocumentsResource
from rag_eval_pipeline.defs.run_config import evaluation_run_config

if TYPE_CHECKING:  # what define_asset_job returns (not exported by dagster's top level)
    from dagster._core.definitions.unresolved_asset_job_definition import (
        UnresolvedAssetJobDefinition as Job,
    )

NEW_DOCUMENTS = "new_documents"
BACKFILL_TAG = "dagster/backfill"  # the tag Dagster puts on every run of a backfill


def partition_requests(configured: list[str], registered: list[str]) -> tuple[list[str], dict[str, str]]:
    """The configured models not yet registered, and the registered keys a run could never
    start on (added around the CLI, e.g. in the UI's dialog), each with why."""
    invalid = {}
    for key in registered:
        try:
            check_name(key)
        except InvalidNameError as err:
            invalid[key] = str(err)
    missing = [name for name in configured if name not in set(registered)]
    return missing, invalid


def changed_files(folder_versions: dict[str, str], cursor: dict[str, str]) -> list[str]:
    """Files that are new or whose content changed since the cursor (each version once)."""
    return sorted(name for name, digest in folder_versions.items() if cursor.get(name) != digest)


def evaluations_after_publish(
    instance: dg.DagsterInstance, published_by: str, settings: Settings
) -> list[dg.RunRequest] | dg.SkipReason:
    """One evaluation run per registered model after the run ``published_by`` made a rebuilt
    knowledge base live, pinned to that snapshot (the profile's judges after a profile's
    schedule), but none for a model the launch that published it evaluates itself (rag-eval, a
    backfill, a run that selected a partition's evaluation too): one evaluation per model per
    knowledge base."""
    run = instance.get_run_by_id(published_by)
    tags = run.tags if run is not None else {}
    if CLI_PID_TAG in tags:
        return dg.SkipReason("published by rag-eval, which evaluates its models itself")
    evaluated = evaluated_by_launch(instance, run) if run is not None else frozenset()
    partitions = [] if evaluated is ALL else [p for p in registered_models(instance) if p not in evaluated]
    if not partitions:
        return dg.SkipReason("the launch that rebuilt it evaluates every model on it itself")
    profile = tags.get(PROFILE_TAG)
    run_config = evaluation_run_config(settings.with_profile(profile).judges if profile else None)
    return [
        dg.RunRequest(
            run_key=f"{published_by}:{partition}",
            partition_key=partition,
            run_config=run_config,
            # the documents that changed, when a documents rebuild published it (no empty tag)
            tags={
                KNOWLEDGE_BASE_RUN_TAG: published_by,
                **{k: v for k, v in tags.items() if k == DOCUMENTS_TAG and v},
            },
        )
        for partition in partitions
    ]


ALL: frozenset[str] = frozenset({"*"})  # a launch that evaluates every model (or cannot say which)


def evaluated_by_launch(instance: dg.DagsterInstance, run: dg.DagsterRun) -> frozenset[str]:
    """The answer models the launch of ``run`` evaluates itself: the partition of a run that
    selected the evaluation assets too, the partitions a backfill targets (ALL when its targets
    cannot be read), none for a knowledge-base-only launch."""
    if BACKFILL_TAG in run.tags:
        backfill = instance.get_backfill(run.tags[BACKFILL_TAG])
        if backfill is None:
            return ALL
        if backfill.asset_backfill_data is None:  # a job's backfill, or one stored serialized
            return frozenset(backfill.partition_names) if backfill.partition_names else ALL
        subsets = backfill.asset_backfill_data.target_subset.partitions_subsets_by_asset_key
        return frozenset(
            key
            for step in EVALUATION_STEPS
            if (subset := subsets.get(dg.AssetKey(step))) is not None
            for key in subset.get_partition_keys()
        )
    selected = {key.to_user_string() for key in (run.asset_selection or set())}
    if not selected & set(EVALUATION_STEPS):
        return frozenset()
    partition = run.tags.get("dagster/partition")
    return frozenset({partition}) if partition else ALL


# what a refresh of the cross-model assets follows: a summary, and the scores of a run whose gate
# failed (no summary follows them; the comparison then names the failed run). Not a rebuilt
# knowledge base: until the models are evaluated on it, the reports stay as they were and read
# STALE in the UI, as every evaluation partition does
# Not a probe recorded by `rag-eval probe` either: the comparison then reads stale in the UI (it
# depends on security_probes) and its rows join at the next comparison, which nobody is made to
# wait for, and `rag-eval probe` then `rag-eval ui` starts no run
REPORTS_INPUTS = (dg.AssetKey(METRIC_SUMMARY), dg.AssetKey(JUDGE_SCORES))
REPORTS_OUTPUT = dg.AssetKey(MODEL_COMPARISON)
# how soon after the last evaluation run of a backfill the comparison and reports are refreshed
# (a tick reads three storage ids and counts the runs in flight: cheap at any interval)
REPORTS_REFRESH_INTERVAL_S = 5


# how long a `rag-eval` of another machine may be between its own runs: its process cannot be
# seen from here, and its next run (the comparison) starts within seconds of the last summary
OTHER_HOST_GAP_S = 60


def reports_refresh(
    latest_input: int | None,
    latest_comparison: int | None,
    busy_runs: int,
    comparing: str | None = None,
    backfills: int = 0,
    after_backfill: Mapping[str, str] | None = None,
) -> dg.RunRequest | dg.SkipReason:
    """A comparison run when an input was stored after the comparison last was (storage ids are
    the event log's order), once no run is in flight and no backfill is in progress (between a
    backfill's iterations no run is in flight, and the backfill compares at its end itself), so
    a backfill of many partitions gets one comparison, and not while the `rag-eval` command that
    stored it (``comparing``: which) still runs, since it compares itself after its runs. A
    backfill that ended with a failed model cannot reach its own comparison: this one then
    compares the others, naming the failed one (``after_backfill``: the tags that say which
    backfill and which models failed in it). It compares stored history, so it catches up
    with whatever was materialized while it was off."""
    if latest_input is None:
        return dg.SkipReason("no evaluation yet")
    if latest_comparison is not None and latest_comparison > latest_input:
        return dg.SkipReason("the comparison and the reports are current")
    if busy_runs:
        return dg.SkipReason(f"waiting for {busy_runs} run(s) to finish")
    if backfills:
        return dg.SkipReason(f"waiting for {backfills} backfill(s) in progress, which compare at their end")
    if comparing:
        return dg.SkipReason(f"{comparing} stored the latest results and compares them itself")
    return dg.RunRequest(
        run_key=f"results-up-to-{latest_input}", tags={TRIGGER_TAG: "new_results", **(after_backfill or {})}
    )


def backfill_tags(instance: dg.DagsterInstance, run_tags: Mapping[str, str]) -> dict[str, str]:
    """For results stored by a backfill's run: the backfill, and the models whose partitions
    failed in it (what the comparison that completes it names), for the comparison run's tags."""
    backfill_id = run_tags.get(BACKFILL_TAG)
    backfill = instance.get_backfill(backfill_id) if backfill_id else None
    if backfill is None:
        return {}
    data = backfill.asset_backfill_data
    failed = sorted(
        {
            key
            for subset in (
                data.failed_and_downstream_subset.partitions_subsets_by_asset_key.values() if data else []
            )
            for key in subset.get_partition_keys()
        }
    )
    return {
        AFTER_BACKFILL_TAG: backfill.backfill_id,
        **({FAILED_MODELS_TAG: ", ".join(failed)} if failed else {}),
    }


def comparing_command(tags: Mapping[str, str], stored_at: float, now: float, host: str) -> str | None:
    """The `rag-eval` command that stored an input in a run with these ``tags`` and compares
    after its runs, while it may still be between them: its process alive on this ``host``; on
    another machine, for OTHER_HOST_GAP_S after it stored it. None for a run of the UI or the
    daemon's own, and once that command is gone (killed: the refresh then catches up)."""
    pid, _, where = tags.get(COMPARED_BY_TAG, "").partition("@")
    if not pid.isdigit():
        return None
    if where == host:
        return f"rag-eval (pid {pid})" if process_alive(int(pid)) else None
    return f"rag-eval (pid {pid} on {where})" if now - stored_at < OTHER_HOST_GAP_S else None


def backfills_in_progress(instance: dg.DagsterInstance) -> list:
    """The instance's backfills still requesting runs (Dagster exports no public name for the
    status: the one private import of the sensors)."""
    from dagster._core.execution.backfill import BulkActionStatus

    return list(instance.get_backfills(status=BulkActionStatus.REQUESTED))


def _latest(instance: dg.DagsterInstance, key: dg.AssetKey) -> dg.EventLogRecord | None:
    records = instance.fetch_materializations(key, limit=1).records
    return records[0] if records else None


def _latest_storage_id(instance: dg.DagsterInstance, key: dg.AssetKey) -> int | None:
    record = _latest(instance, key)
    return record.storage_id if record else None


IN_FLIGHT = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


NEW_LABELS = "new_labels"


def labels_read(instance: dg.DagsterInstance) -> dict[str, str]:
    """The label files the latest read of the labels read, name -> digest (none before any)."""
    records = instance.fetch_materializations(dg.AssetKey(HUMAN_LABELS), limit=1).records
    materialization = records[0].asset_materialization if records else None
    value = materialization.metadata.get(READ_FILES) if materialization is not None else None
    return dict(getattr(value, "value", None) or {})


def build_sensors(jobs: "Mapping[str, Job]", settings: Settings) -> list:
    """Every sensor of the evaluation, each targeting its job by name."""
    return [
        answer_models_sensor(settings),
        new_documents_sensor(jobs[KNOWLEDGE_BASE_JOB]),
        knowledge_base_rebuilt_sensor(jobs[EVALUATION_JOB], settings),
        reports_refresh_sensor(jobs[COMPARISON_JOB]),
        new_labels_sensor(jobs[COMPARISON_JOB], settings),
        failed_checks_sensor(),
    ]


FAILED_CHECKS_INTERVAL_S = 5  # the failed run's page says why within seconds of its end


def failed_checks_sensor() -> dg.RunStatusSensorDefinition:
    @dg.run_failure_sensor(
        name="failed_checks_sensor",
        minimum_interval_seconds=FAILED_CHECKS_INTERVAL_S,
        default_status=dg.DefaultSensorStatus.RUNNING,
        monitor_all_code_locations=True,  # the CLI's runs too (they have no code location)
        description="Writes why a run failed at the foot of its log, where its page opens: what "
        "its blocking checks said (a quality gate's metric, value and threshold) and each failed "
        "step's own reason (an agent that cannot start): Dagster's own error names only how many "
        "checks or which steps failed.",
    )
    def sensor(context: dg.RunFailureSensorContext):
        run_id = context.dagster_run.run_id
        said = failed_steps_said(context.instance, run_id) + failed_checks_said(context.instance, run_id)
        if said:
            context.instance.report_engine_event("; ".join(said), context.dagster_run)

    return sensor


def failed_steps_said(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """Each failed step's reason in its own words, `<step> failed: <reason>` (a dagster.Failure's
    description, else its error's first line); a step a blocking check stopped is said by its
    check (``failed_checks_said``)."""
    reasons = step_failure_reasons(instance, run_id, blocked_by_checks=False)
    return [f"{step} failed: {reason}" for step, reason in reasons]


def failed_checks_said(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """What each failed blocking check of the run said: `<asset> <check> failed: <description>`."""
    return [f"{check} failed: {reason}" for check, reason in failed_checks(instance, run_id)]


def model_problems(settings: Settings) -> dict[str, list[str]]:
    """What stands in the way of each configured model's runs, as `rag-eval agents check` and a
    run's pre-flight find it (an agent's module that cannot be imported, a missing answers
    file, a secret header's variable unset): one line each, with the remedy."""
    registry = settings.answer_registry()
    found = {}
    for name in settings.configured_models():
        try:
            problems = registry.problems(registry.resolve(name))
        except Exception as err:  # an unresolvable entry is said the same way
            problems = [f"{type(err).__name__}: {err}"]
        if problems:
            found[name] = problems
    return found


def stray_agents(instance: dg.DagsterInstance, settings: Settings, registered: list[str]) -> dict[str, str]:
    """A registered partition that is the simulation's agent, which the file does not evaluate,
    and that no run ever evaluated (an earlier start registered it): with why it goes, so that
    no view calls it "not evaluated yet"."""
    agent = settings.simulation.agent if settings.simulation is not None else None
    if agent is None or agent not in registered or agent in settings.configured_models():
        return {}
    if instance.get_runs_count(dg.RunsFilter(tags={PARTITION_TAG: agent})):
        return {}  # evaluated once: its results stay comparable
    why = "the simulation's agent, not a model to evaluate (evaluate: true on its entry makes it one)"
    return {agent: why}


def answer_models_sensor(settings: Settings) -> dg.SensorDefinition:
    @dg.sensor(
        name="answer_models_sensor",
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Registers every answer model of the configuration file as a partition, "
        "removes a partition no run could start on (a name outside the allowed grammar) and the "
        "simulation's agent where an earlier start registered it and nothing evaluated it, and says "
        "in its tick why a registered model cannot run (the pre-flight of `rag-eval agents "
        "check`): the model stays, so its failure shows where it happens.",
    )
    def sensor(context: dg.SensorEvaluationContext):
        """The configuration's answer models are partitions as soon as the code location loads."""
        registered = registered_models(context.instance)
        missing, invalid = partition_requests(settings.configured_models(), registered)
        invalid |= stray_agents(context.instance, settings, registered)
        for key, reason in invalid.items():
            context.log.warning(f"removing answer-model partition {key!r}: {reason}")
        problems = model_problems(settings)
        said = json.dumps(problems, sort_keys=True)
        for name, lines in problems.items():
            if said != context.cursor:  # each problem said once, until it changes
                context.log.warning(f"answer model {name!r} cannot run: {'; '.join(lines)}")
        requests: list = [
            *([dg.AddDynamicPartitionsRequest(ANSWER_MODEL_PARTITIONS, missing)] if missing else []),
            *([dg.DeleteDynamicPartitionsRequest(ANSWER_MODEL_PARTITIONS, list(invalid))] if invalid else []),
        ]
        unable = "; ".join(f"{name} cannot run: {'; '.join(lines)}" for name, lines in problems.items())
        changed = [f"registered {', '.join(missing)}"] if missing else []
        changed += [f"removed {', '.join(invalid)}"] if invalid else []
        done = "; ".join(changed) or "every configured answer model is registered"
        # every tick says why a model cannot run, the one that registers it too: a user opening the
        # sensor right after `rag-eval ui` starts reads it there, not a tick later
        reason = done + (f" ({unable})" if unable else "")
        return dg.SensorResult(dynamic_partitions_requests=requests or None, skip_reason=reason, cursor=said)

    return sensor


def _folder_sensor(name: str, job: "Job", description: str) -> Callable[..., dg.SensorDefinition]:
    """A running sensor of ``job`` that looks at a watched folder every 30 seconds."""
    return dg.sensor(
        name=name,
        job=job,
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=description,
    )


def new_documents_sensor(knowledge_base_job: "Job") -> dg.SensorDefinition:
    @_folder_sensor(
        "new_documents_sensor",
        knowledge_base_job,
        "Rebuilds the knowledge base once per new or changed file of the documents "
        "folder (malformed files are reported and skipped).",
    )
    def sensor(context: dg.SensorEvaluationContext, documents: DocumentsResource):
        """Watches the documents folder; a new or changed file rebuilds the knowledge base index,
        reading the folder with the asset's own rules (size limit, chunking)."""
        return documents_rebuild(context, documents)

    return sensor


def documents_rebuild(
    context: dg.SensorEvaluationContext, documents: DocumentsResource
) -> dg.SensorResult | dg.SkipReason:
    """One knowledge-base rebuild for the files that are new or changed since the cursor. With
    no cursor yet (the sensor's first tick), a folder the live knowledge base was built from, as
    `rag-eval run` left it, is seen already: no rebuild of what is indexed."""
    versions = document_versions(documents.folder)
    if (
        not context.cursor
        and versions
        and indexed_fingerprint(context.instance) == folder_fingerprint(versions)
    ):
        said = f"the knowledge base already holds the {len(versions)} documents of {documents.folder}"
        return dg.SensorResult(skip_reason=said, cursor=json.dumps(versions, sort_keys=True))
    cursor = json.loads(context.cursor) if context.cursor else {}
    changed = changed_files(versions, cursor)
    if not changed:
        return dg.SkipReason(f"no new or changed documents in {documents.folder}")
    loaded = documents.load()
    problems = loaded.problems
    # a problem names its file first ("a.jsonl: ..." or "a.jsonl, line 3: ..."); a file with a bad
    # line is still new documents when its other lines were read
    bad = {re.split(r"[:,]", p, maxsplit=1)[0] for p in problems}
    read = set(loaded.passages["source_file"]) if "source_file" in loaded.passages else set()
    for problem in problems:
        context.log.warning(f"malformed document skipped: {problem}")
    usable = [name for name in changed if name not in bad or name in read]
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
                asset_selection=[dg.AssetKey(name) for name in DOCUMENTS_REBUILD],
                tags={DOCUMENTS_TAG: ", ".join(usable), TRIGGER_TAG: NEW_DOCUMENTS},
            )
        ],
        cursor=new_cursor,
    )


def indexed_fingerprint(instance: dg.DagsterInstance) -> str | None:
    """The fingerprint of the documents folder the live knowledge base was built from: the
    latest read of the documents stored before the latest publish (None before any, or for a
    knowledge base published before reads recorded it)."""
    published = _latest(instance, dg.AssetKey(KNOWLEDGE_BASE))
    if published is None:
        return None
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(dg.AssetKey(USER_DOCUMENTS), before_storage_id=published.storage_id), limit=1
    ).records
    materialization = records[0].asset_materialization if records else None
    value = materialization.metadata.get(DOCUMENTS_FINGERPRINT) if materialization is not None else None
    return getattr(value, "value", None)


def knowledge_base_rebuilt_sensor(evaluation_job: "Job", settings: Settings) -> dg.AssetSensorDefinition:
    @dg.asset_sensor(
        name="knowledge_base_rebuilt_sensor",
        asset_key=dg.AssetKey(KNOWLEDGE_BASE),
        job=evaluation_job,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="When a rebuilt knowledge base is published by a launch that does not evaluate "
        "the models itself (documents sensor, schedule, the UI's catalog), evaluates every "
        "registered answer model again on it (one run per partition), with the profile's judges "
        "after a profile's schedule.",
    )
    def sensor(context: dg.SensorEvaluationContext, asset_event: dg.EventLogEntry):
        return evaluations_after_publish(context.instance, asset_event.run_id, settings)

    return sensor


def reports_refresh_sensor(comparison_job: "Job") -> dg.SensorDefinition:
    @dg.sensor(
        name="reports_refresh_sensor",
        job=comparison_job,
        minimum_interval_seconds=REPORTS_REFRESH_INTERVAL_S,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Refreshes model_comparison, the paired comparison, judge validation, the report "
        "and the Prometheus metrics after new results (one run after a backfill ends); it compares "
        "stored history, so it catches up after being off.",
    )
    def sensor(context: dg.SensorEvaluationContext):
        """Keeps the cross-model assets current with the partitions' results: new summaries, a
        failed gate's scores, a rebuilt knowledge base.

        Not declarative automation: an eager condition waits for every registered partition
        (a model that failed stays missing forever), and a refresh must not repeat the
        comparison `rag-eval run` makes itself right after its evaluations; comparing storage
        ids of the event log says both exactly."""
        instance = context.instance
        busy = instance.get_runs_count(dg.RunsFilter(statuses=IN_FLIGHT))
        backfills = len(backfills_in_progress(instance))
        inputs = [record for record in (_latest(instance, key) for key in REPORTS_INPUTS) if record]
        latest = max(inputs, key=lambda record: record.storage_id, default=None)
        comparing, after = None, {}
        if latest is not None and (run := instance.get_run_by_id(latest.run_id)) is not None:
            comparing = comparing_command(run.tags, latest.timestamp, time.time(), socket.gethostname())
            after = backfill_tags(instance, run.tags) if not busy and not backfills else {}
        compared = _latest_storage_id(instance, REPORTS_OUTPUT)
        return reports_refresh(
            latest.storage_id if latest else None, compared, busy, comparing, backfills, after
        )

    return sensor


def new_labels_sensor(comparison_job: "Job", settings: Settings) -> dg.SensorDefinition:
    @_folder_sensor(
        "new_labels_sensor",
        comparison_job,
        "Reads the human labels again when a label file is dropped into (or changed "
        "in) the review folder's labels/, measures every judge against them, corrects the "
        "labelled models' means and refreshes the comparison and the report: one run across "
        "the models.",
    )
    def sensor(context: dg.SensorEvaluationContext):
        """Watches ``<review folder>/labels``: each new or changed file, once, whoever read it."""
        return labels_to_read(context, settings)

    return sensor


def labels_to_read(
    context: dg.SensorEvaluationContext, settings: Settings
) -> dg.SensorResult | dg.SkipReason:
    """A read of the labels when a file is new or changed since the cursor and since the latest
    read (`rag-eval review import` reads what it copies there)."""
    folder = settings.review.labels_folder
    cursor = json.loads(context.cursor) if context.cursor else {}
    versions = {path.name: file_digest(path) for path in label_files(folder)}
    unseen = changed_files(versions, cursor)
    read = labels_read(context.instance)
    changed = [name for name in unseen if read.get(name) != versions[name]]
    if not changed:
        said = f"no new or changed label files in {folder} (each read as it is)"
        new_cursor = json.dumps(versions, sort_keys=True)
        return dg.SensorResult(skip_reason=said, cursor=new_cursor) if unseen else dg.SkipReason(said)
    return dg.SensorResult(
        run_requests=[
            dg.RunRequest(
                run_key="labels:" + ",".join(f"{name}@{versions[name]}" for name in changed),
                tags={TRIGGER_TAG: NEW_LABELS},
            )
        ],
        cursor=json.dumps(versions, sort_keys=True),
    )
