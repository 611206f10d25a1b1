import dagster as dg

from rag_eval_pipeline.definitions import defs as load_defs

defs = load_defs()  # the code location as `dagster dev` loads it

EXPECTED_ASSETS = {
    "hotpotqa_raw",
    "user_documents",
    "image_catalog",
    "kb_passages",
    "kb_index",
    "judgement_list",
    "knowledge_base",
    "candidate_answers",
    "judge_scores",
    "answer_claims",
    "metric_summary",
    "metric_history",
    "kb_health",
    "security_probes",
    "model_comparison",
    "paired_comparison",
    "judge_validation",
    "baseline_diffs",
    "eval_report",
    "prometheus_metrics",
    "human_labels",
    "judge_agreement",
    "corrected_means",
    "review_queue",
}
EXPECTED_CHECKS = {
    ("kb_passages", "unique_ids"),
    ("judgement_list", "gold_titles_in_kb"),
    ("candidate_answers", "complete"),
    ("judge_scores", "in_range"),
    ("judge_scores", "complete"),
    ("judge_scores", "judge_error_share"),
    ("judge_scores", "quality_gates"),
    ("metric_summary", "answered"),
}


def test_definitions_load_with_every_asset_check_and_job():
    repo = defs.get_repository_def()
    graph = repo.asset_graph
    assert {k.to_user_string() for k in graph.get_all_asset_keys()} == EXPECTED_ASSETS
    checks = {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys}
    assert checks == EXPECTED_CHECKS
    jobs = {
        name: defs.resolve_job_def(name)
        for name in [
            "knowledge_base_job",
            "evaluation_job",
            "comparison_job",
            "review_queue_job",
        ]
    }
    assert jobs["evaluation_job"].partitions_def.name == "answer_model"
    blocking = {key.name for key in graph.asset_check_keys if graph.get(key).blocking}
    assert blocking == {name for _, name in EXPECTED_CHECKS}


def test_the_generated_list_is_in_the_code_location_only_when_the_file_asks_for_it():
    """Off by default: the UI's "Materialize all" must never have an LLM write questions unasked.
    A generation section puts the asset and its job in, its values the run's defaults."""
    from rag_eval_pipeline.config import Settings
    from rag_eval_pipeline.definitions import build_definitions
    from rag_eval_pipeline.generation.settings import GenerationSettings

    assert "generation_job" not in {j.name for j in defs.jobs}
    section = GenerationSettings(n=7, model="local:smollm2", types="single")
    on = build_definitions(Settings(generation=section))
    graph = on.resolve_asset_graph()
    assert graph.get(dg.AssetKey("generated_judgement_list")).group_name == "generation"
    assert on.resolve_job_def("generation_job") is not None
    spec = section.overridden({"n": None, "seed": 3}).spec()
    assert (spec.n, spec.model, spec.judge, spec.seed) == (7, "local:smollm2", "local:smollm2", 3)


def test_sensors():
    assert {s.name for s in defs.sensors} == {
        "answer_models_sensor",
        "new_documents_sensor",
        "knowledge_base_rebuilt_sensor",
        "reports_refresh_sensor",
        "new_labels_sensor",
        "failed_checks_sensor",
    }


def test_a_models_chain_reads_nothing_of_another_model():
    """The graph crosses the partition boundary twice, as its meaning needs: the knowledge base
    (unpartitioned) into each model's chain (partitioned, to its own summary and history), then
    every cross-model asset. Nothing a model's summary reads depends on another model, so one
    broken model holds no other back, and a backfill waits for two crossings, not four."""
    graph = defs.get_repository_def().asset_graph
    model = {"candidate_answers", "judge_scores", "answer_claims", "metric_summary", "metric_history"}
    model |= {"kb_health"}
    knowledge = {
        "hotpotqa_raw",
        "user_documents",
        "image_catalog",
        "kb_passages",
        "kb_index",
        "judgement_list",
        "knowledge_base",
    }
    for key in model:
        upstream = {k.to_user_string() for k in graph.upstream_key_iterator(dg.AssetKey(key))}
        assert upstream <= model | knowledge, (key, upstream - model - knowledge)
    cross = {"human_labels", "judge_agreement", "corrected_means", "model_comparison", "eval_report"}
    for key in cross:
        downstream = {k.to_user_string() for k in graph.get(dg.AssetKey(key)).child_keys}
        assert not downstream & model, (key, downstream & model)


def test_model_assets_are_partitioned_by_answer_model():
    graph = defs.get_repository_def().asset_graph
    for key in ["candidate_answers", "judge_scores", "metric_summary", "metric_history", "kb_health"]:
        partitions = graph.get(dg.AssetKey(key)).partitions_def
        assert isinstance(partitions, dg.DynamicPartitionsDefinition)
        assert partitions.name == "answer_model"
    for key in ["hotpotqa_raw", "kb_index", "model_comparison"]:
        assert graph.get(dg.AssetKey(key)).partitions_def is None


def test_every_asset_has_a_description_and_code_version():
    graph = defs.get_repository_def().asset_graph
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        assert node.description, key
        assert node.code_version, key


def test_every_asset_receives_typed_settings_not_loose_strings():
    """Configuration flows one way: the settings resource, no per-asset dict round-trip."""
    resources = defs.resources
    assert "settings" in resources and not {"evaluation", "dataset", "quality_gates"} & set(resources)
    assert resources["settings"].settings.statistics.min_cases == 10


PRODUCTION_ASSETS = {
    "production_sources",
    "production_interactions",
    "production_sample",
    "production_scores",
    "production_summary",
    "production_verdict",
    "production_trend",
    "production_report",
}


def test_a_production_section_adds_daily_partitions_its_check_jobs_and_sensors(tmp_path):
    """Production traffic is off without the section (above), and with it: a daily partition
    from start_date, a blocking threshold check, a job per day and one for the trend, the
    sensor that watches the sources and the automation that refreshes the trend."""
    from rag_eval_pipeline.config import Settings
    from rag_eval_pipeline.definitions import build_definitions

    settings = Settings.model_validate(
        {"production": {"sources": [{"kind": "logs", "path": str(tmp_path)}], "start_date": "2026-11-01"}}
    )
    production = build_definitions(settings)
    graph = production.get_repository_def().asset_graph
    assert {k.to_user_string() for k in graph.get_all_asset_keys()} == EXPECTED_ASSETS | PRODUCTION_ASSETS
    check = dg.AssetCheckKey(dg.AssetKey("production_summary"), "quality_gates")
    assert check in graph.asset_check_keys and graph.get(check).blocking
    days = graph.get(dg.AssetKey("production_summary")).partitions_def
    assert isinstance(days, dg.DailyPartitionsDefinition)
    assert days.get_first_partition_key() == "2026-11-01"
    assert graph.get(dg.AssetKey("production_trend")).partitions_def is None
    assert production.resolve_job_def("production_job").partitions_def == days
    production.resolve_job_def("production_report_job")
    sensors = {s.name: s for s in production.sensors}
    assert sensors["production_logs_sensor"].default_status == dg.DefaultSensorStatus.RUNNING
    assert sensors["production_reports_sensor"].default_status == dg.DefaultSensorStatus.RUNNING
    for key in PRODUCTION_ASSETS:
        assert graph.get(dg.AssetKey(key)).description, key


TRAJECTORY_ASSETS = {
    "trajectory_spans",
    "agent_sessions",
    "trajectory_scores",
    "session_judge_scores",
    "trajectory_summary",
}


def test_a_trajectories_section_adds_the_agent_version_assets_their_checks_and_job():
    """Off by default: the answer models' "Materialize all" never mixes in another partitioning.
    With the section, the five assets partitioned by agent version, their two blocking checks,
    the job, and the review assets reading the sessions and the session judges too."""
    from rag_eval_pipeline.config import Settings
    from rag_eval_pipeline.definitions import build_definitions
    from rag_eval_pipeline.trajectories.settings import TrajectorySettings

    assert "trajectory_job" not in {j.name for j in defs.jobs}
    upstream = {
        k.to_user_string() for k in defs.resolve_asset_graph().get(dg.AssetKey("judge_agreement")).parent_keys
    }
    assert not upstream & TRAJECTORY_ASSETS
    on = build_definitions(Settings(trajectories=TrajectorySettings(traces=["t.json"], reference="r.jsonl")))
    graph = on.resolve_asset_graph()
    everything = EXPECTED_ASSETS | TRAJECTORY_ASSETS | {"traced_versions"}
    assert {k.to_user_string() for k in graph.get_all_asset_keys()} == everything
    assert graph.get(dg.AssetKey("traced_versions")).partitions_def is None
    for key in TRAJECTORY_ASSETS:
        assert graph.get(dg.AssetKey(key)).partitions_def.name == "agent_version"
    checks = {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys if graph.get(k).blocking}
    assert {("agent_sessions", "reconstruction"), ("trajectory_summary", "quality_gates")} <= checks
    assert on.resolve_job_def("trajectory_job").partitions_def.name == "agent_version"
    upstream = {k.to_user_string() for k in graph.get(dg.AssetKey("judge_agreement")).parent_keys}
    assert "session_judge_scores" in upstream


def test_a_simulation_section_adds_its_four_agent_version_assets_their_gate_and_job():
    """Off by default; with the section, the scenarios as read (unpartitioned: the family's root)
    and the conversations, their scores and the summary, partitioned by agent version as the
    trajectories are, and the summary's blocking gate."""
    from rag_eval_pipeline.config import Settings
    from rag_eval_pipeline.definitions import build_definitions
    from rag_eval_pipeline.trajectories.simulation.settings import SimulationSettings

    assert "simulation_job" not in {j.name for j in defs.jobs}
    on = build_definitions(Settings(simulation=SimulationSettings(scenarios="s.jsonl", agent="bot")))
    graph = on.resolve_asset_graph()
    simulation = {"simulated_sessions", "simulation_scores", "simulation_judge_scores", "simulation_summary"}
    everything = EXPECTED_ASSETS | simulation | {"simulation_scenarios"}
    assert {k.to_user_string() for k in graph.get_all_asset_keys()} == everything
    assert graph.get(dg.AssetKey("simulation_scenarios")).partitions_def is None
    for key in simulation:
        assert graph.get(dg.AssetKey(key)).partitions_def.name == "agent_version"
        assert graph.get(dg.AssetKey(key)).description, key
    checks = {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys if graph.get(k).blocking}
    assert ("simulation_summary", "quality_gates") in checks
    assert on.resolve_job_def("simulation_job").partitions_def.name == "agent_version"


def _whole_lineage_roots(definitions: dg.Definitions) -> tuple[set, list[str]]:
    """What the UI's "Materialize all…" over the whole lineage decides on (Dagster's
    LaunchAssetExecutionButton): the partitions definitions among the assets a run can make, and
    the partitioned roots of that selection (assets none of whose parents are selected). With
    more than one definition, a partitioned root makes the dialog anchor the backfill on it,
    whose launch fails ("All the assets at the root of the backfill must have the same
    PartitionsDefinition"); none makes it a backfill of every partition of every family."""
    graph = definitions.resolve_asset_graph()
    selected = {k for k in graph.get_all_asset_keys() if graph.get(k).is_executable}
    families = {graph.get(k).partitions_def for k in selected} - {None}
    roots = [
        k.to_user_string()
        for k in selected
        if graph.get(k).partitions_def is not None and not set(graph.get(k).parent_keys) & selected
    ]
    return families, roots


def test_materialize_all_is_one_backfill_per_family_whatever_sections_the_file_has():
    """Models, simulated users, traced sessions and production days (each a partitioning of its
    own), alone beside the models or all together: the whole
    lineage launches as a backfill of every family's partitions, each family rooted in an
    unpartitioned asset, and Dagster builds that backfill's targets."""
    from dagster._core.execution.asset_backfill import AssetBackfillData

    from rag_eval_pipeline.config import Settings
    from rag_eval_pipeline.definitions import build_definitions
    from rag_eval_pipeline.trajectories.settings import TrajectorySettings
    from rag_eval_pipeline.trajectories.simulation.settings import SimulationSettings

    simulation = SimulationSettings(scenarios="s.jsonl", agent="bot")
    trajectories = TrajectorySettings(traces=["t.json"], reference="r.jsonl")
    production = Settings.model_validate(
        {"production": {"sources": [{"kind": "logs", "path": "logs"}], "start_date": "2026-11-01"}}
    ).production
    every = [
        {"simulation": simulation},
        {"trajectories": trajectories},
        {"production": production},
        {"simulation": simulation, "trajectories": trajectories, "production": production},
    ]
    with dg.DagsterInstance.ephemeral() as instance:
        for sections in every:
            definitions = build_definitions(Settings(**sections))
            families, roots = _whole_lineage_roots(definitions)
            assert len(families) >= 2 and roots == [], (sections.keys(), roots)
            graph = definitions.resolve_asset_graph()
            data = AssetBackfillData.from_asset_partitions(
                asset_graph=graph,
                partition_names=None,
                asset_selection=list(graph.executable_asset_keys),
                dynamic_partitions_store=instance,
                backfill_start_timestamp=0.0,
                all_partitions=True,
            )
            assert data.target_subset.non_partitioned_asset_keys
    _, roots = _whole_lineage_roots(defs)  # the default file: one family, the models' dialog
    assert roots == []
