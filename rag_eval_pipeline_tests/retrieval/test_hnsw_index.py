"""The embedded backend's approximate vector search (knowledge_base.vector_search: hnsw)."""

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import numpy as np
import pytest

from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.knowledge_base import flatten_passages
from rag_eval_pipeline.retrieval.embedded import build_embedded_index, open_embedded_index
from rag_eval_pipeline.retrieval.spec import VectorSearch
from rag_eval_pipeline.retrieval.vector_index import HnswIndex
from rag_eval_pipeline_tests.retrieval.test_vector_index import HashingEmbedder

pytestmark = pytest.mark.slow  # vectors of real passages, a graph built twice


def test_hnsw_finds_what_exact_search_finds_from_its_own_index_version(shared_hotpotqa, tmp_path: Path):
    questions = read_hotpotqa_file(shared_hotpotqa).head(200)
    passages = flatten_passages(questions)
    embedder = HashingEmbedder()
    exact = build_embedded_index(passages, tmp_path, embedder)
    approximate = build_embedded_index(passages, tmp_path, embedder, vector_search=VectorSearch.HNSW)
    assert approximate.version != exact.version  # switching the search rebuilds, never reuses
    assert approximate.details["vector_search"] == "hnsw" and exact.details["vector_search"] == "exact"
    assert (Path(approximate.location) / "vectors.usearch").is_file()
    assert not (Path(exact.location) / "vectors.usearch").exists()

    by_graph = open_embedded_index(approximate, lambda model: embedder).semantic
    by_matrix = open_embedded_index(exact, lambda model: embedder).semantic
    assert isinstance(by_graph, HnswIndex)
    overlaps, score_gaps = [], []
    for question in questions["question"]:
        found, truth = by_graph.search(question, 10), by_matrix.search(question, 10)
        overlaps.append(len({h.passage_id for h in found} & {h.passage_id for h in truth}) / 10)
        score_gaps.append(abs(found[0].score - truth[0].score))
    assert np.mean(overlaps) >= 0.95, np.mean(overlaps)  # ties at the 10th place may differ
    assert max(score_gaps) < 0.01  # cosine from half-precision vectors
    # the same passages build the same graph: the same hits, scores included
    rebuilt = build_embedded_index(passages, tmp_path / "again", embedder, vector_search=VectorSearch.HNSW)
    again = open_embedded_index(rebuilt, lambda model: embedder).semantic
    for question in questions["question"].head(20):
        assert again.search(question, 10) == by_graph.search(question, 10)


BLOCK_USEARCH = """
import importlib.abc
import sys

class Uninstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "usearch":
            raise ImportError(f"No module named {name!r}")
        return None

if sys.argv[1] == "without-usearch":
    sys.meta_path.insert(0, Uninstalled())
from rag_eval_pipeline.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _run(tmp_path: Path, shared_hotpotqa, usearch: str) -> subprocess.CompletedProcess:
    config = tmp_path / "rag_eval.yaml"
    config.write_text("knowledge_base:\n  embedding_model: minilm\n  vector_search: hnsw\n")
    arguments = ["--config", str(config), "--dagster-home", str(tmp_path / f"home-{usearch}"), "run"]
    arguments += ["--dataset", str(shared_hotpotqa), "--sample", "10"]
    arguments += ["--models", "extractive-baseline@semantic-k4"]
    return subprocess.run(
        [sys.executable, "-c", BLOCK_USEARCH, usearch, *arguments],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "RAG_EVAL_CONFIG"},
        timeout=600,
    )


def test_a_run_with_hnsw_vectors_and_the_clear_error_without_usearch(shared_hotpotqa, tmp_path: Path):
    result = _run(tmp_path, shared_hotpotqa, "with-usearch")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "| extractive-baseline@semantic-k4 | reference | 10 | 0 |" in result.stdout
    graphs = list((tmp_path / "home-with-usearch").rglob("vectors.usearch"))
    assert len(graphs) == 1
    with dg.DagsterInstance.from_config(str(tmp_path / "home-with-usearch")) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("kb_index"))
        assert event.asset_materialization.metadata["vector_search"].value == "hnsw"

    missing = _run(tmp_path, shared_hotpotqa, "without-usearch")
    assert missing.returncode == 2
    lines = [line for line in missing.stderr.splitlines() if line.startswith("error:")]
    assert lines and "vector_search: hnsw needs usearch" in lines[0]
    assert "pip install 'rag-eval-pipeline[ann]'" in lines[0]
    assert "Traceback" not in missing.stderr
