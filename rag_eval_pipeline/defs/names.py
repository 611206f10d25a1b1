"""Every name the Dagster glue, the instance helpers and the command line share: asset keys, their
groups and the lists derived from them, and the run tags. One place, so no list drifts."""

# the dynamic partitions: one per answer model
ANSWER_MODEL_PARTITIONS = "answer_model"

# groups
KNOWLEDGE = "knowledge"  # the knowledge base and the judgement list, rebuilt as one snapshot
EVALUATION = "evaluation"  # one answer model's partition: answers, scores, summary
REPORTING = "reporting"  # across every model
ELASTICSEARCH = "elasticsearch"  # indices for dashboards, when the knowledge base lives there
REVIEW = "review"  # people's labels and each judge measured against them
PRODUCTION = "production"  # a daily sample of the agent's real traffic, scored without references
GENERATION = "generation"  # a judgement list written from the documents, every case checked
TRAJECTORIES = "trajectories"  # an agent's sessions from its traces, a partition per agent version
AGENT_VERSION_PARTITIONS = "agent_version"
TRAJECTORY_SPANS = "trajectory_spans"
AGENT_SESSIONS = "agent_sessions"
TRAJECTORY_SCORES = "trajectory_scores"
SESSION_JUDGE_SCORES = "session_judge_scores"
TRAJECTORY_SUMMARY = "trajectory_summary"
TRAJECTORY_JOB = "trajectory_job"
TRACED_VERSIONS = "traced_versions"  # the trace files as read: their agent versions, unpartitioned
SIMULATION = "simulation"  # simulated users talking to the agent, a partition per agent version
SIMULATION_SCENARIOS = "simulation_scenarios"
SIMULATED_SESSIONS = "simulated_sessions"
SIMULATION_SCORES = "simulation_scores"
SIMULATION_JUDGE_SCORES = "simulation_judge_scores"
SIMULATION_SUMMARY = "simulation_summary"
SIMULATION_JOB = "simulation_job"
SHARDS = "shards"  # a model's cases split over workers: each shard answered and judged on its own
CASE_SHARD_PARTITIONS = "case_shard"  # 1of4 ... 4of4, beside the answer model
CASE_SHARD_SCORES = "case_shard_scores"

# the knowledge base's assets, in the order they are built
HOTPOTQA_RAW = "hotpotqa_raw"
USER_DOCUMENTS = "user_documents"
IMAGE_CATALOG = "image_catalog"
DOCUMENTS_FINGERPRINT = "documents_fingerprint"  # user_documents' metadata: the folder it read
KB_PASSAGES = "kb_passages"
KB_INDEX = "kb_index"
JUDGEMENT_LIST = "judgement_list"
KNOWLEDGE_BASE = "knowledge_base"  # publishes the others together
# written into their run's snapshot folder, live when ``knowledge_base`` publishes that run
SNAPSHOT_ASSETS = (HOTPOTQA_RAW, USER_DOCUMENTS, KB_PASSAGES, KB_INDEX, JUDGEMENT_LIST)
# what new documents rebuild (the sample and the judgement list stay), then publish
DOCUMENTS_REBUILD = (USER_DOCUMENTS, KB_PASSAGES, KB_INDEX, KNOWLEDGE_BASE)

# one answer model's partition
CANDIDATE_ANSWERS = "candidate_answers"
JUDGE_SCORES = "judge_scores"
METRIC_SUMMARY = "metric_summary"
# a model that could not answer at all: its chain is stored with this reason (metadata and the
# value's ``attrs``), never as the latest value, and the summary's `answered` check fails the run
EVALUATION_FAILED = "evaluation_failed"
METRIC_HISTORY = "metric_history"
KB_HEALTH = "kb_health"  # which questions the documents cannot answer, which documents are old
CASE_TRACES = "case_traces"
PHOENIX_EXPERIMENT = "phoenix_experiment"
EVAL_RESULTS = "eval_results"
EVALUATION_STEPS = (CANDIDATE_ANSWERS, JUDGE_SCORES, METRIC_SUMMARY)  # the lineage of one score

# across every model
MODEL_COMPARISON = "model_comparison"
SECURITY_PROBES = "security_probes"  # recorded by `rag-eval probe`, read by the comparison and the report
PAIRED_COMPARISON = "paired_comparison"
JUDGE_VALIDATION = "judge_validation"
BASELINE_DIFFS = "baseline_diffs"
EVAL_REPORT = "eval_report"
PROMETHEUS_METRICS = "prometheus_metrics"

# human review
HUMAN_LABELS = "human_labels"
JUDGE_AGREEMENT = "judge_agreement"
CORRECTED_MEANS = "corrected_means"  # each model's judge means corrected by people's labels
REVIEW_QUEUE = "review_queue"

# generated from the documents
GENERATED_JUDGEMENT_LIST = "generated_judgement_list"
# what a generation run materializes: the documents as they are now (not published), the list
GENERATION_STEPS = (USER_DOCUMENTS, KB_PASSAGES, GENERATED_JUDGEMENT_LIST)

# production traffic: a partition per day, then the trend across days
PRODUCTION_SOURCES = "production_sources"  # where the days are read from, unpartitioned
PRODUCTION_INTERACTIONS = "production_interactions"
PRODUCTION_SAMPLE = "production_sample"
PRODUCTION_SCORES = "production_scores"
PRODUCTION_SUMMARY = "production_summary"
# a day that met its thresholds: not materialized (Failed, red, in its Partitions tab) on a day
# that did not, for the blocking check on the summary stops it
PRODUCTION_VERDICT = "production_verdict"
PRODUCTION_TREND = "production_trend"
PRODUCTION_REPORT = "production_report"
PRODUCTION_DAY = (
    PRODUCTION_INTERACTIONS,
    PRODUCTION_SAMPLE,
    PRODUCTION_SCORES,
    PRODUCTION_SUMMARY,
    PRODUCTION_VERDICT,
)

# jobs
KNOWLEDGE_BASE_JOB = "knowledge_base_job"
EVALUATION_JOB = "evaluation_job"
COMPARISON_JOB = "comparison_job"
REVIEW_QUEUE_JOB = "review_queue_job"
GENERATION_JOB = "generation_job"  # questions written from the documents, checked
PRODUCTION_JOB = "production_job"  # one day: read, sample, score, summarize
PRODUCTION_REPORT_JOB = "production_report_job"  # the trend across days, its report and metrics

# run tags: Dagster's own
PARTITION_TAG = "dagster/partition"
BACKFILL_TAG = "dagster/backfill"
SENSOR_TAG = "dagster/sensor_name"
# run tags: ours
TRIGGER_TAG = "rag_eval/trigger"  # what launched a run: cli, new_documents, schedule:<profile> ...
DOCUMENTS_TAG = "rag_eval/documents"  # the files whose change launched a rebuild
PROFILE_TAG = "rag_eval/profile"  # a scheduled profile's rebuild: its evaluations use its judges
KNOWLEDGE_BASE_RUN_TAG = "rag_eval/knowledge_base_run"  # the snapshot an evaluation is pinned to
PRODUCTION_DIGEST_TAG = "rag_eval/production_digest"  # the day's rows a production run scored
CLI_PID_TAG = "rag_eval/cli_pid"  # runs `rag-eval` executes in its own process: its pid and host
CLI_HOST_TAG = "rag_eval/cli_host"
WORKER_TAG = "rag_eval/worker"  # runs a Celery worker executed: its name and host (name@host)
# the runs of a command that compares every model itself once they end (`rag-eval run`, `review
# import`), in its process or a backfill's: "<pid>@<host>", so the refresh sensor waits for it
COMPARED_BY_TAG = "rag_eval/compared_by"
# a comparison that completes a backfill (which cannot build it past a failed model): which
# backfill, and the models that failed in it
AFTER_BACKFILL_TAG = "rag_eval/after_backfill"
FAILED_MODELS_TAG = "rag_eval/failed_models"
# tags Dagster itself writes on a materialization: its data version, and per input (suffixed by
# the input's asset key) the data version and the event it read
DATA_VERSION_TAG = "dagster/data_version"
INPUT_VERSION = "dagster/input_data_version/"
INPUT_POINTER = "dagster/input_event_pointer/"
ARTIFACTS = "artifacts"  # the folder of the storage directory where the IO manager keeps every asset
