"""A question said in other words than its passage ("misplaced my card" for a lost card): where a
passage says the reference but holds too few of the question's words to count as about it, the
reranker's cross-encoder reads the question and the sentences saying the answer together. Only
those candidates are scored (a case's answer must already stand in them), each pair once: the
scores are kept by content in the reranker's own store (``retrieval/pair_scores.py``). A yes/no
question two passages do not cover in words is read the same way against the sentences of the
passages sharing most of it (its answer is seldom written: "yes" stands nowhere)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_eval_pipeline.common.heap import return_freed_heap

# cross-encoder/ms-marco-MiniLM-L-12-v2's logit for (question, the two sentences saying the
# reference) from which the passage answers the question although it shares few of its words.
# Lower than the model's own boundary (0, a relevance probability of one half: MS MARCO's "the
# passage that answers"), since the sentences already say the answer and the model need only
# say they are about the question. Calibrated on the seen sets (benchmarks/README.md,
# "Paraphrased questions"), the best window of each case the model was asked about: planted gaps
# (a number or word of the answer in a passage on something else) -7.4 and below on HotpotQA, -9.5
# and below on /work/data/82b; passages answering a question in other words -3.8 and above on
# HotpotQA, -0.6 and above on 82b but for one (-10.2: "the old town newspaper" for the Gazette,
# which takes knowing the town). -5 stands about midway between -7.4 and -3.8. For yes/no
# questions (their best window among the passages sharing most of them) the model reads the
# subject, not the answer, and no threshold separates the seen sets: answered in other words
# -3.9 to -1.9 (/work/data/82c), a gap beside a passage on the same subject -1.4 (82b's tripod in
# the galleries, beside the galleries' accessibility); -5 holds all four (benchmarks/README.md).
ANSWERS_LOGIT = -5.0
MAX_PAIRS_A_CASE = 12  # the candidates' windows read, those sharing most of the question first


@dataclass(frozen=True)
class ParaphraseReader:
    """Scores (question, passage text) pairs, higher: the text answers the question; ``languages``
    those its model was trained on (other languages keep the lexical rule alone)."""

    name: str
    languages: tuple[str, ...]
    score: Callable[[Sequence[tuple[str, str]]], list[float]]
    threshold: float = ANSWERS_LOGIT
    # drops the model and hands its memory back once every case is read (a later score loads
    # it again): the clustering and the report that follow do not carry its 0.1 GB
    release: Callable[[], None] = lambda: None

    def reads(self, language: str) -> bool:
        return language in self.languages


NO_READER = (
    "no paraphrase reader: the reranker's cross-encoder reads questions said in other words "
    "where it is installed, pip install 'rag-eval-pipeline[rerank]'"
)


def gap_signal(reader: ParaphraseReader | None, languages: Sequence[str]) -> str:
    """Which signal decided whether a passage holds a reference, per language of the cases, in
    one line: the words alone, or the words and, for a question sharing too few of them with
    the passage saying the answer, or a yes/no question, the cross-encoder (only in the languages
    it was trained on; elsewhere a gap the words cannot tell is said unsure, labels.UNSURE)."""
    said = []
    for code in sorted(set(languages)) or ["en"]:
        if reader is None:
            said.append(f"{code}: words alone ({NO_READER})")
        elif reader.reads(code):
            said.append(
                f"{code}: words, and the cross-encoder {reader.name} where a question shares too few "
                "or is a yes/no question"
            )
        else:
            read = ", ".join(reader.languages)
            said.append(f"{code}: words alone (the cross-encoder {reader.name} reads {read} only)")
    return "; ".join(said)


def cross_encoder_reader(storage: Path | None, model: str = "reranker_en") -> ParaphraseReader | None:
    """The reranker's bundled cross-encoder behind its kept pair scores (in ``storage``, the
    instance's storage folder; None: kept in no file), loaded on the first pairs it is asked to
    score (a run whose questions all share their passages' words never loads it); None where it
    is not installed."""
    from rag_eval_pipeline.retrieval.reranker import READS, reranker_problem
    from rag_eval_pipeline.retrieval.spec import RerankSpec

    if reranker_problem(RerankSpec(model=model)) is not None:
        return None
    loaded: list = []

    def scored(pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not loaded:
            from rag_eval_pipeline.retrieval.pair_scores import (
                PAIR_SCORES_FILE,
                KeptPairScores,
                PairScoreStore,
            )
            from rag_eval_pipeline.retrieval.reranker import CrossEncoder

            encoder = CrossEncoder(model)
            store = PairScoreStore(storage / PAIR_SCORES_FILE) if storage is not None else None
            loaded.append((KeptPairScores(encoder.scores, encoder.identity, store), encoder))
        return loaded[0][0].scores(pairs)

    def release() -> None:
        if loaded:
            loaded.pop()[1].close()
            return_freed_heap()

    return ParaphraseReader(model, READS.get(model, ()), scored, release=release)
