"""The reranker's pair scores kept by content: a kept score is the score the model gives (pairs
are scored alone), a pair is scored once whatever asks for it again (another call, another
process, a refresh aside), and texts that differ never share a score."""

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from rag_eval_pipeline.retrieval.pair_scores import (
    KeptPairScores,
    PairCounts,
    PairScoreStore,
    PairScoresUnreadableError,
    pair_key,
)
from rag_eval_pipeline.retrieval.spec import RerankSpec

texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=30)
pairs = st.lists(st.tuples(texts, texts), max_size=25)


class CountingModel:
    """A stand-in scoring function (the cross-encoder's own consistency is tested against the
    real model in test_reranker.py): a score from the pair's text, and every pair it was given."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def __call__(self, batch):
        self.seen += list(batch)
        return [float(len(a) - 2 * len(b)) + (hash((a, b)) % 1000) / 1000 for a, b in batch]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=pairs, second=pairs)
def test_kept_scores_are_the_models_and_no_pair_is_scored_twice(tmp_path_factory, first, second):
    store = PairScoreStore(tmp_path_factory.mktemp("kept") / "scores.sqlite")
    model = CountingModel()
    counts = PairCounts()
    kept = KeptPairScores(model, "model-a", store, counts)
    assert kept.scores(first) == model(first)  # the same scores, in the order asked
    model.seen.clear()
    assert kept.scores(second) == model(second)
    model.seen.clear()
    assert counts.scored == len(set(first)) + len(set(second) - set(first))
    assert counts.scored + counts.kept == len(first) + len(second)
    # a second run over the same store (another process, another answer model) scores nothing
    again = PairCounts()
    assert KeptPairScores(model, "model-a", store, again).scores(first + second) == model(first + second)
    model.seen.clear()
    assert again == PairCounts(scored=0, kept=len(first) + len(second))
    # another model's identity shares nothing; refresh scores everything again
    other = PairCounts()
    KeptPairScores(model, "model-b", store, other).scores(first)
    assert other.scored == len(set(first))
    refreshed = PairCounts()
    KeptPairScores(model, "model-a", store, refreshed, refresh=True).scores(first)
    assert refreshed.scored == len(set(first))
    store.close()


@given(a=st.tuples(texts, texts), b=st.tuples(texts, texts))
def test_different_texts_never_share_a_key(a, b):
    """The parts' lengths are hashed with them: ("a b", "c") and ("a", "b c") are two pairs."""
    assert (pair_key("m", a) == pair_key("m", b)) == (a == b)
    assert pair_key("m", a) != pair_key("n", a)


def test_without_a_store_every_pair_is_scored():
    model, counts = CountingModel(), PairCounts()
    assert KeptPairScores(model, "m", None, counts).scores([("q", "p"), ("q", "p")]) == model(
        [("q", "p")] * 2
    )
    assert counts == PairCounts(scored=2, kept=0)


def test_the_cuts_are_part_of_what_reranked_answers_depend_on():
    """Reading less of a passage changes scores: each cut is in the mode's identity (the answers'
    fingerprint), and the defaults keep the identity answers were stored under before."""
    default = RerankSpec()
    assert default.identity == "rerank(two_hop, 20, reranker_en+second-step)"
    cut = RerankSpec(passage_tokens=128, bridge_tokens=64, bridge_pool=8)
    assert cut.identity == (
        "rerank(two_hop, 20, reranker_en+second-step, passage_tokens=128, bridge_tokens=64, bridge_pool=8)"
    )
    assert RerankSpec(second_step=False, bridge_pool=8).identity == "rerank(two_hop, 20, reranker_en)"


def test_a_file_that_is_not_the_store_is_one_line_and_left_as_it_was(tmp_path):
    torn = tmp_path / "scores.sqlite"
    torn.write_bytes(b"not a database" * 100)
    kept = KeptPairScores(CountingModel(), "m", PairScoreStore(torn))
    with pytest.raises(PairScoresUnreadableError, match="cannot be read .*: remove the file"):
        kept.scores([("q", "p")])
    assert torn.read_bytes() == b"not a database" * 100
