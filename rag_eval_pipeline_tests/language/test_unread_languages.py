"""Issue 78, third part: in a language the rule cannot read (no lexicon, often no lemmatizer,
a script the tests never had), a right answer is credited or absent, never 0, whatever shape
it takes: inflected at either end, a mutation or class prefix in front, glued to particles in a
script without spaces, written in another script; a different name stays 0, judged. Where
lemmas or stems know the language (Esperanto), the rule reads it and the case's note says which
checks it did not make."""

import dataclasses
import difflib

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rag_eval_pipeline.judges.base import JudgeCase
from rag_eval_pipeline.judges.reference import ReferenceJudge
from rag_eval_pipeline.language.inflection import ABSENT_NOTE, reading
from rag_eval_pipeline.metrics import reference as m
from rag_eval_pipeline.retrieval.base import SearchHit

# letters of scripts the table has no lexicon in, split in two halves: a right answer is made of
# the first half, a different name of the second, so the two share no letter
SCRIPTS = {
    "zu": "abdefghiklmnopqrstuvwyz",  # Zulu, Latin: class prefixes (iGoli, eGoli)
    "so": "abcdefghijklmnoqrstuwxy",  # Somali
    "ml": "കഖഗഘങചജഞടഡണതദധനപബമയരലവശസഹളഴറ",  # Malayalam
    "am": "ሀለሐመሠረሰቀበተኀነአከወዐዘየደገጠጰጸፀፈፐ",  # Amharic, Ethiopic
    "unknown": "ႠႡႢႣႤႥႦႧႨႩႪႫႬႭႮႯႰႱႲႳႴႵ",  # Georgian capitals: a case no detector named
}


def _halves(code: str) -> tuple[str, str]:
    letters = SCRIPTS[code]
    return letters[: len(letters) // 2], letters[len(letters) // 2 :]


@st.composite
def _case(draw, right: bool):  # type: ignore[no-untyped-def]
    code = draw(st.sampled_from(sorted(SCRIPTS)))
    own, other = _halves(code)
    name = draw(st.text(own, min_size=4, max_size=10))
    frame = draw(st.lists(st.text(other, min_size=2, max_size=7), max_size=3))
    if right:
        onset = draw(st.text(own, max_size=2))
        ending = draw(st.text(own, max_size=4))
        cut = draw(st.integers(0, 1))  # a final vowel replaced by the ending
        said = onset + name[: len(name) - cut] + ending
    else:
        said = draw(st.text(other, min_size=4, max_size=10))
    position = draw(st.integers(0, len(frame)))
    return code, name, " ".join([*frame[:position], said, *frame[position:]]) + "."


@settings(max_examples=60, deadline=None)
@given(_case(right=True))
def test_a_right_answer_in_a_language_the_rule_cannot_read_is_credited_or_absent(case):
    code, name, answer = case
    found = m.correctness(answer, name, question="?", language=code)
    assert found in (1.0, None), (code, name, answer, found)


@settings(max_examples=80, deadline=None)
@given(_case(right=False))
def test_a_different_name_is_judged_zero_not_absent(case):
    code, name, answer = case
    assume(difflib.SequenceMatcher(None, name, answer).find_longest_match().size < 2)
    assert m.correctness(answer, name, question="?", language=code) == 0.0, (code, name, answer)


@pytest.mark.parametrize(
    ("code", "question", "truth", "right", "wrong"),
    [
        ("zu", "Uhlala kuphi uThabo?", "iThekwini", "UThabo uhlala eThekwini.", "UThabo uhlala eGoli."),
        ("zu", "Yiliphi idolobha?", "iGoli", "Idolobha elikhulu yiGoli.", "Idolobha elikhulu yiTheku."),
        # the reference in another script than the answer's (a name transliterated): absent
        ("am", "ዋና ከተማዋ የት ናት?", "Addis Ababa", "ዋና ከተማዋ አዲስ አበባ ናት።", None),
        # glued to particles in a script without spaces: credited or absent
        ("my", "သူ ဘယ်မှာ မွေးသလဲ။", "ရန်ကုန်", "သူ ရန်ကုန်မှာ မွေးတယ်။", None),
        ("lo", "ນະຄອນຫຼວງແມ່ນຫຍັງ?", "ວຽງຈັນ", "ນະຄອນຫຼວງແມ່ນວຽງຈັນ", None),
    ],
)
def test_a_mutated_prefixed_or_transliterated_reference_is_never_zero(code, question, truth, right, wrong):
    assert m.correctness(right, truth, question=question, language=code) in (1.0, None), right
    if wrong is not None:
        assert m.correctness(wrong, truth, question=question, language=code) == 0.0, wrong


@pytest.mark.slow  # simplemma reads Welsh, Irish, Galician, German lemmas: seconds on a busy machine
def test_a_mutated_onset_or_a_dropped_article_is_the_reference_and_a_compound_another_place():
    for code, question, truth, right, wrong in (
        ("cy", "Ble mae'r senedd?", "Caerdydd", "Mae'r senedd yng Nghaerdydd.", "Mae'r senedd yn Abertawe."),
        ("ga", "Cár rugadh í?", "Corcaigh", "Rugadh í i gCorcaigh.", "Rugadh í i nGaillimh."),
        # a reference's article contracted or elided; "que" is no contrast (the split "aínda que")
        ("gl", "Onde está a Torre de Hércules?", "A Coruña", "A torre está na Coruña.", "Está en Lugo."),
        ("gl", "Que río separa Galicia?", "O Miño", "O río que os separa é o Miño.", "É o Douro."),
        ("cy", "Beth yw mynydd uchaf Cymru?", "Yr Wyddfa", "Mynydd uchaf Cymru yw'r Wyddfa.", "Y Berwyn."),
    ):
        assert m.correctness(right, truth, question=question, language=code) == 1.0, right
        assert m.correctness(wrong, truth, question=question, language=code) == 0.0, wrong
    assert m.correctness("Es liegt in Südafrika.", "Afrika", question="Wo liegt es?", language="de") != 1.0
    assert m.correctness("Er lebte in Ostberlin.", "Berlin", question="Wo lebte er?", language="de") != 1.0


@pytest.mark.slow  # simplemma reads Esperanto's lemmas: seconds on a busy machine
def test_esperanto_is_read_by_its_lemmas_and_its_lexicon():
    """Esperanto's lemmas meet the inflected name and its lexicon (issue 78's fifth part) reads the
    negation, the hedge and the option: each judged, none absent, no note of checks not made."""
    sentence = reading("eo")
    assert sentence.covered and sentence.lexicon and sentence.unread_phrase == ""
    question, passage = "Kie naskiĝis Zamenhof?", "Zamenhof naskiĝis en Bjalistoko en 1859."
    judge = ReferenceJudge()
    hit = SearchHit("p1", "Zamenhof", passage, 1.0)
    answer = "Zamenhof naskiĝis en Bjalistoko, en 1859."
    right = JudgeCase(question, "Bjalistoko", answer, (hit,), qid="q", language="eo")
    notes: list[str] = []
    assert judge.score(right, notes)["correctness"] == 1.0
    assert not any(note.startswith(ABSENT_NOTE) or "not read" in note for note in notes), notes
    for said, expected in (("Li ne naskiĝis en Bjalistoko.", 0.0), ("Eble en Bjalistoko.", 0.5)):
        notes = []
        case = dataclasses.replace(right, answer=said)
        assert judge.score(case, notes)["correctness"] == expected, said
        assert not any(note.startswith(ABSENT_NOTE) for note in notes), said


@pytest.mark.parametrize("code", ["unknown", "zu", "ml", "am"])
def test_every_absence_reason_reads_well_for_any_language(code):
    reason = reading(code).absence_reason
    assert "a an " not in reason and " a unknown" not in reason and "  " not in reason
    assert reason.startswith("correctness absent where an answer in ")
    assert f"not read in {reading(code).name}" in reason


def test_a_three_letter_iso_code_is_its_language():
    """Asturian has no two-letter code: "ast" is read by ICU's word break and simplemma's
    lemmas; a three-letter code of a language with a row ("deu") is that row."""
    from rag_eval_pipeline.language.table import UnknownLanguageError, language

    assert language("ast").name == "Asturian" and language("deu").code == "de"
    with pytest.raises(UnknownLanguageError, match="another ISO 639 code"):
        language("zzz")
    answer, passage = "Pelayu foi'l primer rei d'Asturies.", "Pelayu foi'l primer rei d'Asturies nel 718."
    assert m.correctness(answer, "Pelayu", question="¿Quién foi?", language="ast", passages=[passage]) == 1.0
