"""Languages Lingua does not know (Nepali, Cebuano, Kyrgyz, Tajik, Malayalam): recorded as
themselves or ``unknown``, never as a neighbour Lingua knows (Nepali as Hindi); and a case in
such a language has its sentence answers' correctness absent with the reason, never 0."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_eval_pipeline.language.detect import detect_one, resolve_languages
from rag_eval_pipeline.language.table import UNKNOWN, language
from rag_eval_pipeline.metrics.reference import correctness_verdict
from rag_eval_pipeline_tests.support.answer_forms_external import SETS


def _nepali_cases() -> list[str]:
    """The linguist's seen Nepali questions, each with each of its answers, as a judgement file's
    row is detected (question and answer together)."""
    found = []
    for line in (SETS / "seen.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["language"] == "ne":
            found += [f"{row['question']}\n{answer}" for answer in row["right"] + row["wrong"]]
    return found


NEPALI = _nepali_cases()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(NEPALI), min_size=1, max_size=8))
def test_a_set_of_nepali_cases_is_recorded_nepali_never_hindi(texts):
    assert {found.code for found in resolve_languages(texts)} == {"ne"}


@pytest.mark.slow  # Lingua's high-accuracy models for the languages outside the table: about 12 s
def test_languages_lingua_lacks_are_themselves_or_unknown():
    assert detect_one("विश्वको सर्वोच्च शिखर सगरमाथा नेपालको सोलुखुम्बु जिल्लामा पर्छ।")[0] == "ne"
    assert detect_one("Бишкек Кыргызстандын борбору болуп саналат.")[0] == "ky"
    assert detect_one("Душанбе пойтахти Тоҷикистон аст.")[0] == "tg"
    # Cebuano, which only fastText knows, is its ISO 639-3 code (a three-letter code is its
    # language); Malayalam's script is none Lingua writes
    assert detect_one("Ang Sugbo usa ka dakong siyudad sa Bisayas ug daghan kaayog tawo didto.")[0] == "ceb"
    assert detect_one("കേരളത്തിന്റെ തലസ്ഥാനം തിരുവനന്തപുരം ആണ്.")[0] == UNKNOWN
    # the languages Lingua knows stay themselves
    assert detect_one("भारत की राजधानी नई दिल्ली है।")[0] == "hi"
    assert detect_one("Constantin Brâncuși s-a născut în satul Hobița, în Gorj.")[0] == "ro"


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=60))
def test_any_text_is_given_a_code_the_table_reads_or_none(text):
    code, confidence = detect_one(text)
    assert code is None or language(code).code == code
    assert 0.0 <= confidence <= 1.0


def test_a_sentence_in_a_language_the_detector_lacks_is_read_or_absent_with_its_reason_never_zero():
    """Nepali (Lingua lacks it) is read through its stemmer and lexicon: its negation is judged;
    a language recorded as unknown is absent with its reason."""
    score, verdict = correctness_verdict(
        "उनी काठमाडौंमा जन्मिएका थिएनन्।", "काठमाडौं", question="उनी कहाँ जन्मिएका थिए?", language="ne"
    )
    assert score == 0.0 and verdict is not None and verdict.reason == "mentioned only to reject it"
    answer, question = "Natawo siya sa Calamba, dili sa Maynila.", "Asa natawo si Jose Rizal?"
    score, verdict = correctness_verdict(answer, "Calamba", question=question, language=UNKNOWN)
    assert score is None and verdict is not None and not verdict.judged
    assert "not read in" in verdict.reason


# written for these tests, not taken from the answer-form sets: languages neither detector knows
# (Faroese, Hausa), each with letters its neighbours never write (ø, ɗ, ƙ)
NEITHER_KNOWS = {
    "fo": [
        "Hvør er høvuðsstaðurin í Føroyum? Høvuðsstaðurin er Tórshavn.",
        "Hvussu nógvar oyggjar eru í Føroyum? Í Føroyum eru átjan oyggjar.",
        "Hvør skrivaði bókina? Tað gjørdi William Heinesen, ið føddist í Havn.",
    ],
    "ha": [
        "Wane ne ya ci zaɓen? Shugaban ƙasa ne ya ci.",
        "Yaya kake? Lafiya lau, na gode ƙwarai.",
        "Wane ne ya kafa Daular Sakkwato? Usman ɗan Fodiyo ne ya kafa ta.",
    ],
}


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(sorted(NEITHER_KNOWS)).flatmap(
        lambda code: st.tuples(
            st.just(code), st.lists(st.sampled_from(NEITHER_KNOWS[code]), min_size=1, max_size=5)
        )
    )
)
def test_a_language_neither_detector_knows_is_unknown_never_a_neighbour(found):
    code, texts = found
    assert {d.code for d in resolve_languages(texts)} <= {code, UNKNOWN}


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=2, max_value=6), st.sampled_from(["ø", "ɗ", "ƙ"]))
def test_letters_a_language_never_writes_keep_its_code_off_the_text(count, letter):
    icelandic = "Hver er höfuðborg Íslands? Höfuðborgin er Reykjavík, við sjóinn."
    text = icelandic + " " + " ".join(f"h{letter}vn" for _ in range(count))
    assert detect_one(text)[0] != "is"
    assert resolve_languages([icelandic, text])[1].code in ("is", UNKNOWN)
    assert detect_one(icelandic)[0] == "is"


@pytest.mark.parametrize(
    ("code", "text"),
    [
        # a language only fastText knows is recorded as itself where it vouches for it
        ("ast", "¿Ónde vives? Vivo n'Uviéu cola mio familia dende fai munchos años."),
        ("ko", "누가 이 책을 썼나요? 김소월이 썼습니다."),
        ("ar", "من كتب هذه الرواية؟ نجيب محفوظ."),
        ("hi", "यह किताब किसने लिखी? प्रेमचंद ने।"),
        ("de", "Wer hat den Faust geschrieben? Goethe schrieb ihn."),
        ("zh", "这本书是谁写的？是鲁迅写的。"),
        ("es", "¿Quién escribió el Quijote? Lo escribió Cervantes."),
        ("en", "Who wrote Hamlet? Shakespeare wrote it."),
        ("es", "¿Quién escribió Solaris? Stanisław Lem."),  # one foreign letter is a name's
    ],
)
def test_languages_both_detectors_vouch_for_stay_themselves(code, text):
    assert detect_one(text)[0] == code
    assert [d.code for d in resolve_languages([text])] == [code]
