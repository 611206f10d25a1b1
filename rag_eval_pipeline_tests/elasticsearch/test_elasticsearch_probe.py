"""`rag-eval probe` on an evaluation whose knowledge base lives in Elasticsearch, on a real node:
the attacked copies are embedded indices in a scratch folder of the probe's own, so the team's
cluster is never written to: the index, its alias, its documents and its fingerprint (the
``_meta`` version and ``kb_index``'s manifest) are as they were, and the evaluation reads the same."""

import json

import pytest
import yaml
from elasticsearch import Elasticsearch

from rag_eval_pipeline_tests.support.cli import in_process

pytestmark = pytest.mark.slow  # a real Elasticsearch node, an evaluation and a probe


def _cluster_state(es: Elasticsearch, prefix: str) -> dict:
    """Every index of the test's prefix: its aliases, document count and mapping's ``_meta``."""
    indices = es.indices.get(index=f"{prefix}-*", allow_no_indices=True)
    return {
        name: {
            "aliases": sorted(description.get("aliases", {})),
            "count": es.count(index=name)["count"],
            "meta": description["mappings"].get("_meta", {}),
        }
        for name, description in indices.items()
    }


def test_a_probe_of_an_elasticsearch_evaluation_leaves_the_cluster_untouched(
    es_url, es_prefix, shared_hotpotqa, tmp_path, capsys
):
    from rag_eval_pipeline.instance.home import open_instance
    from rag_eval_pipeline.instance.lineage import load_asset

    names = {
        "knowledge_base": f"{es_prefix}-kb",
        "judgement_list": f"{es_prefix}-judgements",
        "eval_results": f"{es_prefix}-results",
    }
    config = tmp_path / "rag_eval.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "knowledge_base": {
                    "backend": "elasticsearch",
                    "elasticsearch": {"url": es_url, "index_names": names},
                }
            }
        ),
        encoding="utf-8",
    )
    args = ["--config", str(config), "--dagster-home", str(tmp_path / "home")]
    code, _, err = in_process(
        capsys, *args, "run", "--dataset", str(shared_hotpotqa), "--sample", "12", "--models", "oracle"
    )
    assert code == 0, err
    instance = open_instance(str(tmp_path / "home"))
    manifest = load_asset(instance, "kb_index")
    assert manifest.backend == "elasticsearch"
    es = Elasticsearch(es_url)
    before = _cluster_state(es, es_prefix)
    live = es.indices.get_alias(name=names["knowledge_base"])  # the versioned index behind the alias
    assert before[next(iter(live))]["meta"]["version"] == manifest.version  # the fingerprint
    assert before[next(iter(live))]["count"] == manifest.documents
    code, gate_before, _ = in_process(capsys, *args, "gate", "--model", "oracle", "--min", "correctness=0.9")

    code, out, err = in_process(
        capsys, *args, "probe", "--models", "compliant,oracle", "--sample", "6", "--format", "json"
    )
    assert code == 0, err
    results = json.loads(out)["results"]
    for attack in ("injection", "poisoning", "exfiltration"):
        compliant = next(r for r in results if r["model"] == "compliant" and r["attack"] == attack)
        oracle = next(r for r in results if r["model"] == "oracle" and r["attack"] == attack)
        assert compliant["n"] == 6 and compliant["asr"] == 1.0 and oracle["asr"] == 0.0
        # the planted passages were retrieved: from the attacked copy, since the cluster has none
        assert compliant["retrieved_rate"] > 0.5, compliant

    assert _cluster_state(es, es_prefix) == before  # no index, alias, document or _meta changed
    assert es.indices.get_alias(name=names["knowledge_base"]) == live
    assert load_asset(instance, "kb_index") == manifest
    code, gate_after, _ = in_process(capsys, *args, "gate", "--model", "oracle", "--min", "correctness=0.9")
    assert gate_after == gate_before  # its evaluation reads the same
