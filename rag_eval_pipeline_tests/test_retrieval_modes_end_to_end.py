"""Every retrieval mode through candidate_answers, with real MiniLM vectors in the embedded index."""

import dagster as dg
import pytest

from rag_eval_pipeline.config import Settings
from rag_eval_pipeline.definitions import build_definitions
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.instance.runs import run_evaluation

pytestmark = pytest.mark.slow  # real MiniLM vectors for every mode

MODES = ["bm25", "semantic", "hybrid", "two_hop"]


@pytest.fixture(scope="module")
def semantic_run(shared_hotpotqa, tmp_path_factory):
    # ONNX, the [semantic] default
    defs = build_definitions(Settings.model_validate({"knowledge_base": {"embedding_model": "minilm"}}))
    models = [f"extractive-baseline@{mode}-k4" for mode in MODES] + ["oracle@hybrid-k2"]
    with dg.instance_for_test(temp_dir=str(tmp_path_factory.mktemp("home"))) as instance:
        report = run_evaluation(
            defs, instance, models, dataset=str(shared_hotpotqa), sample=8, echo=lambda _: None
        )
        yield defs, instance, report


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_answers_every_case_and_records_mode_and_k(semantic_run, mode):
    defs, instance, _ = semantic_run
    answers = load_asset(instance, "candidate_answers", f"extractive-baseline@{mode}-k4")
    assert len(answers) == 8 and (answers["status"] == "ok").all()
    assert (answers["retrieval_mode"] == mode).all() and (answers["top_k"] == 4).all()
    assert answers["retrieved_ids"].map(len).eq(4).all()


def test_modes_rank_differently_and_k_is_honoured(semantic_run):
    defs, instance, report = semantic_run
    rankings = {
        mode: load_asset(instance, "candidate_answers", f"extractive-baseline@{mode}-k4")["retrieved_ids"]
        .map(tuple)
        .tolist()
        for mode in MODES
    }
    assert rankings["bm25"] != rankings["semantic"]
    oracle = load_asset(instance, "candidate_answers", "oracle@hybrid-k2")
    assert oracle["retrieved_ids"].map(len).eq(2).all()
    manifest = load_asset(instance, "kb_index")
    assert manifest.modes == MODES
    assert len(report.comparison) == 5
