"""A model's cases in shards, as a sharded backfill's runs would evaluate them (in this process):
the shards hold every case once, the model's own run that follows gives each case the scores its
shard gave, and a model whose shard failed is named in the comparison with that shard's reason."""

import dagster as dg
import pandas as pd

from rag_eval_pipeline.config import load_settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.defs.names import KNOWLEDGE_BASE_RUN_TAG
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.instance.runs import live_knowledge_base_run
from rag_eval_pipeline_tests.test_a_broken_model import BROKEN_AGENT, REASON

SCORES = ["qid", "judge_id", "status", "exact_match", "f1", "correctness", "context_recall"]


def test_shards_hold_every_case_once_and_a_failed_shard_is_named(tmp_path, shared_hotpotqa, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken_agent.py").write_text(BROKEN_AGENT)
    (tmp_path / "rag_eval.yaml").write_text(
        f"dataset: {{source: '{shared_hotpotqa}', sample_size: 12}}\n"
        "workers: {}\n"  # the shards group exists with a workers section
        "answer_models:\n"
        "  - {name: extractive-baseline, provider: offline, model: extractive-baseline}\n"
        "  - {name: broken, provider: python, target: 'broken_agent:answer'}\n"
    )
    defs = build_definitions(load_settings(tmp_path / "rag_eval.yaml"))
    instance = open_instance(str(tmp_path / "home"))
    instance.add_dynamic_partitions("answer_model", ["extractive-baseline", "broken"])
    instance.add_dynamic_partitions("case_shard", ["1of2", "2of2"])
    assert defs.resolve_job_def("knowledge_base_job").execute_in_process(instance=instance).success
    pinned = {KNOWLEDGE_BASE_RUN_TAG: live_knowledge_base_run(instance)}
    shard_job = defs.resolve_implicit_global_asset_job_def()

    def shard(model: str, key: str) -> dg.ExecuteInProcessResult:
        return shard_job.execute_in_process(
            instance=instance,
            partition_key=f"{model}|{key}",
            asset_selection=[dg.AssetKey("case_shard_scores")],
            tags=pinned,
            raise_on_error=False,
        )

    parts = []
    for key in ("1of2", "2of2"):
        result = shard("extractive-baseline", key)
        assert result.success
        parts.append(result.output_for_node("case_shard_scores"))
    assert not shard("broken", "1of2").success
    evaluation = defs.resolve_job_def("evaluation_job")
    own = evaluation.execute_in_process(instance=instance, partition_key="extractive-baseline", tags=pinned)
    assert own.success
    assert defs.resolve_job_def("comparison_job").execute_in_process(instance=instance).success

    sharded = pd.concat(parts)
    assert len(parts[0]) and len(parts[1]) and sharded["qid"].is_unique and len(sharded) == 12
    whole = load_asset(instance, "judge_scores", "extractive-baseline")
    columns = [c for c in SCORES if c in whole]
    assert (
        sharded.sort_values("qid")[columns]
        .reset_index(drop=True)
        .equals(whole.sort_values("qid")[columns].reset_index(drop=True))
    )
    comparison = load_asset(instance, "model_comparison").set_index("answer_model")
    assert comparison.loc["broken", "missing"] and not comparison.loc["extractive-baseline", "missing"]
    note = comparison.loc["broken", "note"]
    assert note.startswith("missing: case shard 1of2 failed in run ") and REASON in note, note


def test_materialize_all_answers_each_model_after_its_own_shards_only(tmp_path):
    """What "Materialize all" then All launches with a workers section: every asset over every
    partition, models and shards alike. Dagster's backfill runs a partition once its parents'
    partitions are done, so a model's own answers wait for its shards (then read their calls
    from the caches: each case answered once) and never for another model's."""
    (tmp_path / "rag_eval.yaml").write_text(
        "workers: {}\nanswer_models:\n"
        "  - {name: oracle, provider: offline, model: oracle}\n"
        '  - {name: "null", provider: offline, model: "null"}\n'
    )
    defs = build_definitions(load_settings(tmp_path / "rag_eval.yaml"))
    instance = open_instance(str(tmp_path / "home"))
    instance.add_dynamic_partitions("answer_model", ["oracle", "null"])
    instance.add_dynamic_partitions("case_shard", ["1of2", "2of2"])
    graph = defs.resolve_asset_graph()
    answers, shards = dg.AssetKey("candidate_answers"), dg.AssetKey("case_shard_scores")
    assert shards in graph.get(answers).parent_keys
    with dg.partition_loading_context(dynamic_partitions_store=instance):
        for model in ("oracle", "null"):
            after = graph.get_parent_partition_keys_for_child(model, shards, answers)
            assert set(after.partitions_subset.get_partition_keys()) == {f"{model}|1of2", f"{model}|2of2"}
    # one machine: no shards, and a model's answers depend on nothing but the knowledge base
    (tmp_path / "alone.yaml").write_text(
        "answer_models:\n  - {name: oracle, provider: offline, model: oracle}\n"
    )
    alone = build_definitions(load_settings(tmp_path / "alone.yaml")).resolve_asset_graph()
    assert not alone.has(shards) and alone.get(answers).parent_keys == {
        dg.AssetKey(k) for k in ("judgement_list", "kb_index", "kb_passages")
    }
