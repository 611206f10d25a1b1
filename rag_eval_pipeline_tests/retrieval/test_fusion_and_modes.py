import sys

import numpy as np
import pandas as pd
import pytest

from rag_eval_pipeline.data.knowledge_base import passage_id
from rag_eval_pipeline.retrieval.base import RetrievalMode, SearchHit
from rag_eval_pipeline.retrieval.bm25_index import Bm25Index
from rag_eval_pipeline.retrieval.embedder import SemanticExtraMissingError, SentenceTransformerEmbedder
from rag_eval_pipeline.retrieval.fusion import reciprocal_rank_fusion
from rag_eval_pipeline.retrieval.modes import (
    FusedIndex,
    ModeUnavailableError,
    OpenedIndex,
    TitleCatalog,
    TwoHopIndex,
)


def test_rrf_by_hand():
    # k = 60. a: 1/61 + 1/62 ; b: 1/62 + 1/61 ; c: 1/63 ; d: 1/63
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "a", "d"]], rrf_k=60)
    assert [item for item, _ in fused] == ["a", "b", "c", "d"]  # ties keep first-seen order
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[2][1] == pytest.approx(1 / 63)
    # with k = 0 a single first place outweighs two second places: 1/1 > 1/2 + 1/2 is false (equal)
    assert dict(reciprocal_rank_fusion([["x"], ["y", "x"]], rrf_k=0))["x"] == pytest.approx(1.5)
    assert reciprocal_rank_fusion([]) == [] and reciprocal_rank_fusion([[], []]) == []


class _Ranked:
    """A search index that returns a fixed ranking for each query (first matching key)."""

    def __init__(self, rankings: dict[str, list[str]]):
        self.rankings = rankings
        self.queries: list[str] = []

    def search(self, query, k):
        self.queries.append(query)
        for key, titles in self.rankings.items():
            if key in query:
                return [
                    SearchHit(passage_id(t), t, f"text of {t}", 1.0 / (r + 1)) for r, t in enumerate(titles)
                ][:k]
        return []


def test_fused_index_ranks_by_rrf():
    lexical = _Ranked({"q": ["A", "B", "C"]})
    semantic = _Ranked({"q": ["C", "B", "D"]})
    hits = FusedIndex(lexical, semantic).search("q", 3)
    # B: 1/62 + 1/62 ; A: 1/61 ; C: 1/63 + 1/61 -> C first, then B, then A
    assert [h.title for h in hits] == ["C", "B", "A"]
    assert hits[0].score == pytest.approx(1 / 63 + 1 / 61)


def _hit(title, text=""):
    return SearchHit(passage_id(title), title, text or f"text of {title}", 0.0)


CATALOG = TitleCatalog(
    [
        _hit(
            "Kiss and Tell (1945 film)", "Kiss and Tell is a 1945 comedy starring Shirley Temple as Corliss."
        ),
        _hit("Shirley Temple", "Shirley Temple Black was an actress and Chief of Protocol."),
        _hit("Temple", "A place of worship."),
        _hit("Y"),
        _hit("Meet Corliss Archer", "A radio show."),
    ]
)


def test_catalog_finds_whole_word_title_mentions_without_disambiguation():
    text = "A 1945 film, Kiss and Tell, starred Shirley Temple; Templeton is not a mention."
    assert CATALOG.mentioned_titles(text) == ["Kiss and Tell (1945 film)", "Shirley Temple", "Temple"]
    assert CATALOG.mentioned_titles(text, exclude="Temple") == ["Kiss and Tell (1945 film)", "Shirley Temple"]
    assert CATALOG.passage("Y").title == "Y" and CATALOG.passage("nope") is None


def test_two_hop_follows_the_bridge_entity():
    hop1 = ["Kiss and Tell (1945 film)", "Meet Corliss Archer", "Y"]
    base = _Ranked(
        {"Kiss and Tell (1945 film)": ["Kiss and Tell (1945 film)", "Shirley Temple", "Y"], "woman": hop1}
    )
    base.rankings = {k: v for k, v in base.rankings.items()}
    # _Ranked gives generic texts; use the catalog's texts for the first hop's passages
    texts = {h.title: h for h in [CATALOG.passage(t) for t in hop1] if h}

    class WithTexts(_Ranked):
        def search(self, query, k):
            return [texts.get(h.title, h) for h in super().search(query, k)]

    base = WithTexts(base.rankings)
    hits = TwoHopIndex(base, CATALOG, bridges=2).search("Which woman starred?", 3)
    assert base.queries == ["Which woman starred?", "Which woman starred? Kiss and Tell (1945 film)"]
    # best first hop; then the mentioned titles ranked by hop 2: Shirley Temple (rank 2), Temple (unranked)
    assert [h.title for h in hits] == ["Kiss and Tell (1945 film)", "Shirley Temple", "Temple"]
    assert TwoHopIndex(_Ranked({}), CATALOG).search("nothing", 3) == []


def test_one_mapping_of_modes_to_searches():
    lexical, semantic = _Ranked({}), _Ranked({})
    without_vectors = OpenedIndex(lexical, None, lambda: CATALOG, "embedded")
    assert without_vectors.for_mode("bm25") is lexical
    assert isinstance(without_vectors.for_mode(RetrievalMode.TWO_HOP), TwoHopIndex)
    for mode in ["semantic", "hybrid"]:
        with pytest.raises(ModeUnavailableError, match="needs vectors.*--embedding-model.*\\[semantic\\]"):
            without_vectors.for_mode(mode)
    fused: list = []
    with_vectors = OpenedIndex(lexical, semantic, lambda: CATALOG, "test", lambda a, b: fused.append((a, b)))
    assert with_vectors.for_mode("semantic") is semantic
    with_vectors.for_mode("hybrid")
    assert fused == [(lexical, semantic)]  # the backend's own fusion serves hybrid
    with pytest.raises(ValueError, match="unknown retrieval mode 'bm52'.*bm25, semantic, hybrid, two_hop"):
        RetrievalMode.parse("bm52")


def test_missing_extra_gives_the_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails as if absent
    with pytest.raises(SemanticExtraMissingError, match=r"pip install 'rag-eval-pipeline\[semantic\]'"):
        SentenceTransformerEmbedder("any-model")


def test_minilm_embeds_normalised_and_finds_the_meaning(minilm):
    vectors = minilm.encode(["A cat sat on the mat.", "Stock markets fell sharply."])
    assert vectors.dtype == np.float32 and vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    passages = pd.DataFrame(
        [
            {"passage_id": passage_id(t), "title": t, "passage": p}
            for t, p in [
                ("Feline", "Kittens purr when content."),
                ("Finance", "Shares dropped on Wall Street."),
            ]
        ]
    )
    from rag_eval_pipeline.retrieval.vector_index import DenseIndex

    index = DenseIndex(minilm.encode(passages["passage"].tolist()), passages, minilm)
    assert index.search("equities declined", 1)[0].title == "Finance"  # no shared word
    assert Bm25Index.build(passages).search("equities declined", 1) == []
