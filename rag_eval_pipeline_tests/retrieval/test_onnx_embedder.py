"""The semantic modes without PyTorch: all-MiniLM-L6-v2 as int8 ONNX (the [semantic] extra),
checked against the sentence-transformers reference vectors (stored: minilm_reference.py) and run
through the CLI with torch and sentence-transformers made unimportable."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from rag_eval_pipeline.retrieval.embedder import (
    MINILM,
    PACKAGED_TOKENIZER,
    EmbeddingRuntime,
    make_embedder,
    resolve_embedding_model,
)
from rag_eval_pipeline_tests.retrieval.minilm_reference import (
    REFERENCE_FILE,
    passages_digest,
    reference_passages,
)


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_the_packaged_int8_model_gives_the_reference_vectors(shared_hotpotqa):
    passages = reference_passages(shared_hotpotqa)
    reference = np.load(REFERENCE_FILE)
    assert str(reference["digest"]) == passages_digest(passages), "regenerate: minilm_reference.py"
    onnx = make_embedder(resolve_embedding_model(MINILM))
    cosines = (onnx.encode(passages) * reference["vectors"]).sum(axis=1)
    assert len(passages) >= 60
    assert cosines.mean() >= 0.99 and cosines.min() >= 0.98  # measured: 0.9994 mean over 4,943
    shuffled = onnx.encode(passages[::-1])[::-1]  # batching by length must not change a vector
    assert np.allclose(shuffled, onnx.encode(passages), atol=1e-5)


def test_an_onnx_folder_needs_its_tokenizer(tmp_path):
    model = resolve_embedding_model(MINILM).model_file
    shutil.copy(model, tmp_path / "model.onnx")
    spec = resolve_embedding_model(str(tmp_path))
    assert spec.runtime is EmbeddingRuntime.ONNX
    with pytest.raises(FileNotFoundError, match="tokenizer.json"):
        make_embedder(spec)
    shutil.copy(PACKAGED_TOKENIZER, tmp_path / "tokenizer.json")
    assert make_embedder(spec).encode(["a passage"]).shape == (1, 384)
    assert resolve_embedding_model("sentence-transformers/all-MiniLM-L6-v2").runtime is (
        EmbeddingRuntime.SENTENCE_TRANSFORMERS
    )


BLOCK_TORCH = """
import importlib.abc
import sys

class Uninstalled(importlib.abc.MetaPathFinder):
    # as if torch and sentence-transformers were not installed: importing them raises ImportError
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("torch", "sentence_transformers"):
            raise ImportError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, Uninstalled())
from rag_eval_pipeline.cli import main
code = main(sys.argv[1:])
assert "torch" not in sys.modules
sys.exit(code)
"""


@pytest.mark.slow  # a whole run with real vectors
def test_semantic_and_hybrid_modes_run_without_torch(shared_hotpotqa, tmp_path):
    arguments = ["--dagster-home", str(tmp_path / "home"), "run", "--dataset", str(shared_hotpotqa)]
    arguments += ["--sample", "10", "--embedding-model", MINILM]
    arguments += ["--models", "extractive-baseline@semantic-k4,extractive-baseline@hybrid-k4"]
    result = subprocess.run(
        [sys.executable, "-c", BLOCK_TORCH, *arguments],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "RAG_EVAL_CONFIG"},  # the defaults
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "| extractive-baseline@semantic-k4 | reference | 10 | 0 |" in result.stdout
    assert "| extractive-baseline@hybrid-k4 | reference | 10 | 0 |" in result.stdout
