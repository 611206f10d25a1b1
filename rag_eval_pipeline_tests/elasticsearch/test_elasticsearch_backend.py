"""The Elasticsearch backend on a real node (the integ-test distribution: no english analyzer,
no inference endpoints, no rrf retriever, so their fallbacks run for real)."""

import logging
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import pytest
from elasticsearch import Elasticsearch

from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.knowledge_base import flatten_passages
from rag_eval_pipeline.retrieval.bm25_index import Bm25Index
from rag_eval_pipeline.retrieval.elasticsearch.build import BulkIndexingError, build_es_index
from rag_eval_pipeline.retrieval.elasticsearch.cluster import detect_features
from rag_eval_pipeline.retrieval.elasticsearch.errors import ElasticsearchUnavailableError
from rag_eval_pipeline.retrieval.elasticsearch.search import open_es_index
from rag_eval_pipeline.retrieval.modes import FusedIndex, ModeUnavailableError, TwoHopIndex
from rag_eval_pipeline_tests.retrieval.test_vector_index import HashingEmbedder

pytestmark = pytest.mark.slow  # a real Elasticsearch node


@pytest.fixture(scope="module")
def sample(shared_hotpotqa):
    questions = read_hotpotqa_file(shared_hotpotqa).head(60)
    return questions, flatten_passages(questions)


def _alias_targets(es, alias):
    return sorted(es.indices.get_alias(name=alias).keys())


def test_features_of_the_integ_test_node(es_url, caplog):
    es = Elasticsearch(es_url)
    with caplog.at_level(logging.INFO):
        features = detect_features(es, inference_id="my-elser-endpoint")
    assert features.version.startswith("9.")
    assert features.rrf is False and features.english_analyzer is False
    assert features.inference_id is None  # the endpoint does not exist here: dense_vector instead
    assert features.base64_vectors  # 9.3+: vectors travel as base64; older clusters get float arrays
    assert not replace(features, version="8.19.3").base64_vectors
    assert "client-side reciprocal rank fusion" in caplog.text


def test_bm25_hits_match_the_embedded_index(es_url, es_prefix, sample):
    questions, passages = sample
    es = Elasticsearch(es_url)
    features = detect_features(es, None)
    manifest = build_es_index(es, passages, f"{es_prefix}-kb", features)
    assert manifest.documents == len(passages) and manifest.details["semantic"] == "none"
    assert manifest.details["size_bytes"] > 0
    lexical = open_es_index(es, manifest, features, lambda m: None).for_mode("bm25")
    queries = questions["question"].tolist()
    es_hits = lexical.search_many(queries, 4)
    embedded_hits = Bm25Index.build(passages).search_many(queries, 4)
    overlap = np.mean(
        [
            len({h.passage_id for h in a} & {h.passage_id for h in b}) / 4
            for a, b in zip(es_hits, embedded_hits)
        ]
    )
    print(f"BM25 overlap@4, Elasticsearch vs embedded index: {overlap:.3f}")
    assert overlap >= 0.75  # the node lacks stemming; bm25s stems
    assert [h.title for h in es_hits[0]][0] == "Kiss and Tell (1945 film)"


def test_dense_vectors_knn_hybrid_fallback_and_two_hop(es_url, es_prefix, sample):
    questions, passages = sample
    es = Elasticsearch(es_url)
    features = detect_features(es, None)
    embedder = HashingEmbedder()
    manifest = build_es_index(es, passages, f"{es_prefix}-kb", features, embedder)
    assert manifest.details["semantic"] == "dense_vector"
    assert manifest.modes == ["bm25", "semantic", "hybrid", "two_hop"]  # one order for every backend
    for_mode = open_es_index(es, manifest, features, lambda model: embedder).for_mode
    query = questions["question"].iloc[0]
    semantic = for_mode("semantic").search(query, 5)
    assert len(semantic) == 5 and semantic[0].score >= semantic[-1].score
    # kNN on the node agrees with exact cosine on the same vectors for the best hit
    from rag_eval_pipeline.retrieval.vector_index import DenseIndex

    vectors = embedder.encode([f"{t}\n{p}" for t, p in zip(passages.title, passages.passage)])
    exact = DenseIndex(vectors, passages, embedder)
    cosine = dict(zip(passages.passage_id, vectors @ embedder.encode([query])[0]))
    # The vectors went as base64 float32, and a wrong byte order would scramble them. The node
    # quantizes them to int8 per segment, so near-ties may swap places: its hits must be the exact
    # top five up to that error, and each score the hit's own cosine ((1 + cos) / 2), not a neighbour's.
    quantization_error = 0.01
    exact_top = exact.search(query, 5)
    fifth_best = cosine[exact_top[-1].passage_id]
    pairs = [(round(2 * h.score - 1, 4), round(float(cosine[h.passage_id]), 4)) for h in semantic]
    print("node vs exact cosine:", pairs)
    for hit in semantic:
        assert abs((2 * hit.score - 1) - cosine[hit.passage_id]) < quantization_error
        assert cosine[hit.passage_id] >= fifth_best - quantization_error
    assert len({h.passage_id for h in semantic} & {h.passage_id for h in exact_top}) >= 4
    hybrid = for_mode("hybrid")
    assert isinstance(hybrid, FusedIndex)  # no rrf retriever here: fused client-side
    assert len(hybrid.search(query, 4)) == 4
    two_hop = for_mode("two_hop")
    assert isinstance(two_hop, TwoHopIndex) and len(two_hop.search(query, 4)) == 4


def test_semantic_mode_without_vectors_is_a_clear_error(es_url, es_prefix, sample):
    _, passages = sample
    es = Elasticsearch(es_url)
    features = detect_features(es, None)
    manifest = build_es_index(es, passages.head(20), f"{es_prefix}-kb", features)
    with pytest.raises(ModeUnavailableError, match="needs vectors, and the elasticsearch index has none"):
        open_es_index(es, manifest, features, lambda m: None).for_mode("hybrid")


def test_rebuild_swaps_the_alias_and_a_failed_build_never_replaces_the_live_index(es_url, es_prefix, sample):
    _, passages = sample
    es = Elasticsearch(es_url)
    features = detect_features(es, None)
    alias = f"{es_prefix}-kb"
    first = build_es_index(es, passages.head(30), alias, features)
    assert _alias_targets(es, alias) == [first.details["index"]]
    again = build_es_index(es, passages.head(30), alias, features)
    assert again.details["index"] == first.details["index"]  # same content: reused, no duplicates
    assert es.count(index=alias)["count"] == 30

    class ZeroForOne(HashingEmbedder):
        """A zero vector cannot be indexed under cosine similarity: a real per-document error."""

        def encode(self, texts, on_progress=None):
            vectors = super().encode(texts, on_progress)
            vectors[3] = 0.0
            return vectors

    with pytest.raises(BulkIndexingError, match="1 of 40 documents failed"):
        build_es_index(es, passages.head(40), alias, features, ZeroForOne())
    assert _alias_targets(es, alias) == [first.details["index"]]  # the live index is untouched
    assert sorted(es.indices.get(index=f"{alias}-v*")) == [first.details["index"]]  # no half-built index
    tolerant = build_es_index(es, passages.head(40), alias, features, ZeroForOne(), max_error_share=0.05)
    assert _alias_targets(es, alias) == [tolerant.details["index"]] and tolerant.documents == 39
    assert first.details["index"] in es.indices.get(index=f"{alias}-v*")  # the previous one kept


def test_node_down_and_index_missing_are_clear_errors(es_url, es_prefix, sample):
    _, passages = sample
    down = Elasticsearch("http://127.0.0.1:9", request_timeout=2, max_retries=0)
    with pytest.raises(ElasticsearchUnavailableError, match="unreachable"):
        detect_features(down, None)
    es = Elasticsearch(es_url)
    features = detect_features(es, None)
    manifest = build_es_index(es, passages.head(10), f"{es_prefix}-kb", features)
    es.indices.delete(index=manifest.details["index"])
    with pytest.raises(ElasticsearchUnavailableError, match="is missing; materialize kb_index"):
        open_es_index(es, manifest, features, lambda m: None)


@contextmanager
def _no_node_takes_new_shards(es_url):
    """The node excluded from allocation by a cluster setting, as a full disk or a node filter
    would leave it: immediate and certain, where the disk watermarks wait for the cluster's disk
    statistics (collected every 30 s, and not at all on the test node, whose disk decider is off).
    Shards already placed stay where they are; the setting is removed afterwards."""
    es = Elasticsearch(es_url)
    node = next(iter(es.nodes.info(node_id="_local")["nodes"].values()))["name"]
    es.cluster.put_settings(persistent={"cluster.routing.allocation.exclude._name": node})
    try:
        yield
    finally:
        es.cluster.put_settings(persistent={"cluster.routing.allocation.exclude._name": None})


def test_a_shard_the_cluster_will_not_place_is_a_clear_error_and_the_live_index_stays(
    es_url, es_prefix, sample
):
    _, passages = sample
    es = Elasticsearch(es_url)
    features = detect_features(es, None)
    alias = f"{es_prefix}-kb"
    live = build_es_index(es, passages.head(20), alias, features)
    refused = r"placed none of its shards within 2 s: filter: node matches cluster setting"
    with _no_node_takes_new_shards(es_url), pytest.raises(ElasticsearchUnavailableError, match=refused):
        build_es_index(es, passages.head(25), alias, features, shard_wait_s=2)
    assert _alias_targets(es, alias) == [live.details["index"]]
    assert sorted(es.indices.get(index=f"{alias}-v*")) == [live.details["index"]]  # nothing half-built
    assert build_es_index(es, passages.head(25), alias, features).documents == 25  # placeable again: builds


def test_each_language_is_searched_in_fields_analysed_its_own_way(es_url, es_prefix, tmp_path, caplog):
    """A knowledge base of Chinese, Spanish and Japanese documents on the node: the main language
    in the usual fields, every other in its own; each question finds its gold passage, and the
    analysis each language got is said in one line (this node has no language analyzers)."""
    from rag_eval_pipeline.data.documents import load_documents
    from rag_eval_pipeline_tests.support.languages import BY_LANGUAGE, write_project

    written = ["zh", "es", "ja"]
    write_project(tmp_path, written)
    passages = load_documents(tmp_path / "docs").passages
    es = Elasticsearch(es_url)
    features = detect_features(es, None)
    with caplog.at_level(logging.INFO):
        manifest = build_es_index(es, passages, f"{es_prefix}-languages", features)
    assert "es: standard, Spanish stop words (the node has no spanish analyzer)" in caplog.text
    assert "zh: standard (the node has no cjk analyzer)" in caplog.text
    assert sorted([manifest.details["main_language"], *manifest.details["language_fields"]]) == [
        "es",
        "ja",
        "zh",
    ]
    lexical = open_es_index(es, manifest, features, lambda m: None).for_mode("bm25")
    for language in written:  # (the table of support/languages.py holds more languages than these)
        cases = BY_LANGUAGE[language]
        hits = lexical.search_many([c.question for c in cases], 4, [language] * len(cases))
        found = np.mean([c.title in {h.title for h in found} for c, found in zip(cases, hits)])
        assert found >= 0.8, language
