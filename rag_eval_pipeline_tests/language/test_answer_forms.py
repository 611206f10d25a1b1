"""The offline correctness beyond the languages its rule was written from: answers as people
write them in fifteen languages (support/answer_forms_languages.py), right ones credited and
wrong, negated, hedged and listed ones refused, on the development set and on the held-out set
written before the rule ran on it; the issue's own sentences; exact match and F1 untouched."""

import unicodedata

import pytest

from rag_eval_pipeline.metrics import reference as m
from rag_eval_pipeline.metrics.equivalence import says_answer
from rag_eval_pipeline_tests.support.answer_forms_languages import DEVELOPMENT, HELD_OUT, LANGUAGES, forms


@pytest.fixture(scope="module")
def scored():
    return {
        name: [
            (f, m.correctness(f.answer, f.truth, question=f.question, language=f.language)) for f in forms(qs)
        ]
        for name, qs in (("development", DEVELOPMENT), ("held-out", HELD_OUT))
    }


@pytest.mark.parametrize("name", ["development", "held-out"])
def test_each_language_credits_right_sentences_and_refuses_wrong_ones(scored, name):
    assert len(LANGUAGES) >= 15
    for code in LANGUAGES:
        right = [s for f, s in scored[name] if f.language == code and f.right]
        wrong = [s for f, s in scored[name] if f.language == code and not f.right]
        assert right and wrong, code
        credited = sum(s == 1.0 for s in right) / len(right)
        falsely = sum(s == 1.0 for s in wrong) / len(wrong)
        assert credited >= 0.9 and falsely <= 0.1, (code, credited, falsely)
        # a wrong answer earns at most the partial 0.5 of a shared token ("1911年" for "1949年")
        plainly_wrong = [s for f, s in scored[name] if f.language == code and f.kind == "wrong"]
        assert sum(plainly_wrong) / len(plainly_wrong) <= 0.25, code


@pytest.mark.parametrize(
    "lang, question, truth, answer",
    [
        ("ko", "경복궁의 정문은 무엇입니까?", "광화문", "경복궁의 정문은 광화문입니다."),
        ("ko", "조선의 첫 수도는 어디였습니까?", "한양", "조선의 첫 수도는 한양이었습니다."),
        ("hi", "कौन सा शहर गुलाबी शहर के नाम से जाना जाता है?", "जयपुर", "गुलाबी शहर के नाम से जयपुर प्रसिद्ध है।"),
        ("ar", "ما هي عاصمة الخلافة في عهد علي؟", "الكوفة", "الكُوفَة"),
        ("ar", "من هو أول خليفة؟", "أبو بكر", "ابو بكر"),
        ("de", "Wo wird das Porzellan hergestellt?", "Meißen", "Meissen"),
        (
            "de",
            "Wer entwarf das Brandenburger Tor?",
            "Carl Gotthard Langhans",
            "Das Brandenburger Tor wurde nach Plänen des Architekten Carl Gotthard Langhans erbaut.",
        ),
        ("th", "แม่น้ำสายหลักที่ไหลผ่านกรุงเทพมหานครคือแม่น้ำอะไร", "เจ้าพระยา", "แม่น้ำเจ้าพระยาครับ"),
        ("tr", "Ayasofya hangi şehirdedir?", "İstanbul", "Ayasofya, İstanbul'un Fatih ilçesindedir."),
    ],
)
def test_the_issues_sentences_are_credited(lang, question, truth, answer):
    assert m.correctness(answer, truth, question=question, language=lang) == 1.0, says_answer(
        answer, truth, question, (), lang
    )


def test_a_longer_name_is_one_the_passages_hold_where_the_script_has_no_capitals():
    question, truth, answer = "लाल किला किस शहर में है?", "दिल्ली", "लाल किला पुरानी दिल्ली में है।"
    assert says_answer(answer, truth, question, (), "hi").credited  # no passage says otherwise
    passages = ["लाल किला पुरानी दिल्ली के केंद्र में स्थित है, जो दिल्ली का ऐतिहासिक हिस्सा है।"]
    verdict = says_answer(answer, truth, question, (), "hi", passages)
    assert not verdict.credited and verdict.reason == "part of a longer name or a list"
    assert m.correctness(answer, truth, question=question, language="hi", passages=passages) < 1.0


def test_exact_match_and_f1_stay_the_official_scripts():
    """Only correctness and the proxies fold: MLQA's EM and F1 lower-case and drop punctuation,
    and nothing more (no case folding of ß, no Arabic vowel marks dropped)."""
    assert m.exact_match("Meissen", "Meißen", "de") == 0.0
    assert m.exact_match("الكُوفَة", "الكوفة", "ar") == 0.0 and m.f1("الكُوفَة", "الكوفة", "ar") == 0.0
    assert m.normalize_answer("Die Brücke", "de") == "brücke"
    assert m.f1("ابو بكر", "أبو بكر", "ar") == 0.5  # one token of two, as the script counts it


MARKED = (
    lambda a: f"**{a}**",  # markdown
    lambda a: f"“{a}”",  # quoted
    lambda a: f"{a} [1]",  # cited
    lambda a: unicodedata.normalize("NFD", a),  # decomposed, as macOS writes
    lambda a: f"{a}\n\nSources: [1], [2]",
)


def test_marks_and_unicode_forms_do_not_change_a_verdict(scored):
    """Every answer of the development set, marked up, quoted, cited or decomposed, keeps its
    verdict: the analysis reads text, not its wrapping."""
    changed = []
    for form, score in scored["development"]:
        for mark in MARKED:
            marked = m.correctness(
                mark(form.answer), form.truth, question=form.question, language=form.language
            )
            if (marked == 1.0) != (score == 1.0):
                changed.append((form.language, mark(form.answer), score, marked))
    assert not changed, changed[:5]
