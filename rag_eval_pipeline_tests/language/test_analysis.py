"""How each language's text is analysed: segmented by its dictionary, indexed as its terms,
detected without being told; English exactly as bm25s's tokenizer and HotpotQA read it."""

import bm25s.tokenization
import pytest
import Stemmer

from rag_eval_pipeline.data.hotpotqa import BUNDLED, load_questions
from rag_eval_pipeline.data.knowledge_base import flatten_passages
from rag_eval_pipeline.language.analysis import analyzer, split_sentences
from rag_eval_pipeline.language.detect import release_models, resolve_languages
from rag_eval_pipeline.language.table import LANGUAGES, UnknownLanguageError, language


def test_english_terms_are_bm25s_own():
    """The embedded index's English terms are bm25s's tokenizer's, passage for passage, so the
    English index (and every figure measured on it) is what it was."""
    texts = [
        f"{t}\n{p}"
        for t, p in zip(*flatten_passages(load_questions(BUNDLED).head(60))[["title", "passage"]].T.values)
    ]
    tokenizer = bm25s.tokenization.Tokenizer(stopwords="en", stemmer=Stemmer.Stemmer("english"))
    ids = tokenizer.tokenize(texts, update_vocab=True, show_progress=False, return_as="ids")
    stems = {i: s for s, i in tokenizer.get_vocab_dict().items()}
    for text, expected in zip(texts, ids):
        assert analyzer("en").terms(text) == [stems[i] for i in expected]


def test_each_language_is_segmented_by_its_dictionary():
    assert analyzer("zh").words("故宫于1420年建成。") == ["故宫", "于", "1420", "年", "建成"]
    assert "北京大学" in analyzer("zh").terms("北京大学位于海淀区")  # search mode adds the parts
    assert {"北京", "大学"} <= set(analyzer("zh").terms("北京大学位于海淀区"))
    assert analyzer("ja").words("東京タワーは1958年に完成した")[:3] == ["東京", "タワー", "は"]
    assert "為る" in analyzer("ja").terms("完成した")  # Sudachi's normalised forms: Japanese's stems
    assert analyzer("ko").terms("서울은") == ["서울", "울은"]  # syllable bigrams, as Lucene's CJK filter
    assert analyzer("th").words("กรุงเทพมหานครเป็นเมืองหลวง")[:2] == ["กรุงเทพมหานคร", "เป็น"]  # ICU
    assert analyzer("es").terms("¿En qué año se construyó la Torre?") == ["año", "constru", "torr"]
    # a Hindi vowel sign stays in its word (Python's \w would split there)
    hindi = analyzer("hi")
    assert hindi.words("हिन्दी भाषा") == [hindi.compared("हिन्दी"), hindi.compared("भाषा")]
    assert hindi.terms("हिन्दी भाषा") == ["हिन्द", "भाष"]  # each word whole, then Snowball's stem


def test_a_long_unspaced_document_is_chunked_at_word_boundaries_as_written():
    from rag_eval_pipeline.data.documents import Chunking, chunk_words

    text = "故宫于1420年建成，是明清两代的皇家宫殿。" * 20
    chunks = chunk_words(text, Chunking(size=30, overlap=5), "zh")
    assert len(chunks) > 1 and all(chunk in text for chunk in chunks)
    assert chunk_words("uno dos tres", Chunking(size=2, overlap=0), "es") == ["uno dos", "tres"]


def test_sentences_end_at_full_width_marks_too():
    assert split_sentences("故宫于1420年建成。它是皇宫！Yes. (Yahoo!) No") == [
        "故宫于1420年建成。",
        "它是皇宫！",
        "Yes.",
        "(Yahoo!) No",
    ]


def test_languages_are_detected_per_text_and_a_setting_wins():
    found = resolve_languages(
        [
            "故宫是哪一年建成的？ 1420年",
            "¿En qué año fue redescubierta Machu Picchu? 1911",
            "東京タワーは何年に完成しましたか？ 1958年",
            "Which year was it built? 1889",
            "42",
        ]
    )
    assert [d.code for d in found[:4]] == ["zh", "es", "ja", "en"]
    assert not found[4].told  # digits only: taken from the rest of the list
    assert [d.code for d in resolve_languages(["hello there", "bonjour"], declared="es")] == ["es", "es"]
    own = resolve_languages(["hello there", "故宫"], per_text=["fr", None])
    assert [d.code for d in own] == ["fr", "zh"]


def test_released_models_load_again_and_tell_the_same_languages():
    """A run drops the detectors' models once its cases have their languages (0.4 GB): a later
    detection in the same process loads them again and finds what it found before."""
    texts = ["Which year was it built? 1889", "W którym roku zbudowano most? 1889", "Tämä on kysymys."]
    before = resolve_languages(texts)
    release_models()
    release_models()  # nothing held: nothing to do
    assert resolve_languages(texts) == before
    assert [d.code for d in before] == ["en", "pl", "fi"]


def test_an_unknown_language_names_the_supported_ones():
    with pytest.raises(UnknownLanguageError) as raised:
        language("klingon")
    for code in LANGUAGES:
        assert code in str(raised.value)
    assert language("zh-CN").code == "zh" and language("ES").code == "es"
    fallback = language("yo")  # no row of its own: ICU's word break, no lexicon
    assert not fallback.own_row and fallback.lexicon is None
    assert not language("sw").own_row and language("sw").lexicon is not None  # a lexicon, no row
    assert analyzer("sw").words("Kuala Lumpur ni mji mkuu") == ["kuala", "lumpur", "ni", "mji", "mkuu"]
