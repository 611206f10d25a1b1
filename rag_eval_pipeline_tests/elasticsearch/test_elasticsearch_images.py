"""A multimodal knowledge base in Elasticsearch, on a real node: `rag-eval run --dataset
multimodal-sample` indexes each image's caption and alt text as a passage carrying the image's
id, and a model of ours that retrieves through the cluster finds the images by their captions."""

import pytest
import yaml
from elasticsearch import Elasticsearch

from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.metrics.grounding import IMAGE_METRICS
from rag_eval_pipeline_tests.support.cli import rag_eval

pytestmark = pytest.mark.slow  # a real Elasticsearch node and one `rag-eval run`

GOLD = {  # the sample's labelled questions and the image each asks about
    "kitchen": "plans/ground_floor.png",
    "bathroom": "plans/ground_floor.png",
    "sales": "charts/sales.png",
    "garden": "photos/garden.png",
    "sign": "photos/sign.png",
}


def test_images_are_indexed_in_elasticsearch_and_retrieved_by_their_captions(es_url, es_prefix, tmp_path):
    names = {
        "knowledge_base": f"{es_prefix}-kb",
        "judgement_list": f"{es_prefix}-judgements",
        "eval_results": f"{es_prefix}-results",
    }
    config = tmp_path / "rag_eval.yaml"
    knowledge_base = {"backend": "elasticsearch", "elasticsearch": {"url": es_url, "index_names": names}}
    config.write_text(yaml.safe_dump({"knowledge_base": knowledge_base, "judges": ["reference"]}))
    home = tmp_path / "home"
    result = rag_eval(
        "--config", str(config), "--dagster-home", str(home), "run", "--dataset", "multimodal-sample",
        "--models", "extractive-baseline,oracle", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    es = Elasticsearch(es_url)
    kitchen = es.search(index=names["knowledge_base"], query={"match": {"passage": "kitchen"}}, size=1)
    assert kitchen["hits"]["hits"][0]["_source"]["passage_id"] == "image:plans/ground_floor.png"
    instance = open_instance(str(home))
    assert load_asset(instance, "kb_index").backend == "elasticsearch"
    answers = load_asset(instance, "candidate_answers", "extractive-baseline").set_index("qid")
    for qid, image in GOLD.items():
        assert list(answers.loc[qid, "images"])[0] == image, (qid, answers.loc[qid, "images"])
    for model in ("extractive-baseline", "oracle"):
        scores = load_asset(instance, "judge_scores", model)
        grounding = scores[scores["judge_id"] == "grounding"].set_index("qid")
        for qid in GOLD:  # its gold image is the first image retrieved: precision and recall 1
            got = grounding.loc[qid, ["image_context_precision", "image_context_recall"]].tolist()
            assert got == [1.0, 1.0], (model, qid, got)
        assert grounding.loc["hours", list(IMAGE_METRICS)].isna().all()  # no gold image: absent
