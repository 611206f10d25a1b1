"""Correctness in every language: a right answer in a sentence is credited, a wrong one, a
negated one or a hedged one is not; each language's own abstentions decline."""

import pytest

from rag_eval_pipeline.metrics import reference as m
from rag_eval_pipeline.metrics.equivalence import says_answer
from rag_eval_pipeline_tests.support.languages import BY_LANGUAGE


@pytest.mark.parametrize("lang", sorted(BY_LANGUAGE))
def test_right_sentences_are_credited_and_wrong_ones_are_not(lang):
    for case in BY_LANGUAGE[lang]:
        right = m.correctness(case.right, case.answer, True, m.DEFAULT_ABSTENTION, case.question, (), lang)
        wrong = m.correctness(case.wrong, case.answer, True, m.DEFAULT_ABSTENTION, case.question, (), lang)
        assert (right, wrong) == (1.0, 0.0), (case.right, case.wrong)


@pytest.mark.parametrize(
    "lang, question, truth, answer, reason",
    [
        ("zh", "故宫是哪一年建成的？", "1420年", "故宫不是1420年建成的。", "mentioned only to reject it"),
        ("zh", "故宫是哪一年建成的？", "1420年", "可能是1420年。", "hedged"),
        ("zh", "上海最有名的商业街是什么？", "南京", "南京路。", "part of a longer name or a list"),
        ("zh", "中国的首都是哪里？", "北京", "北京和上海。", "part of a longer name or a list"),
        (
            "ja",
            "東京タワーは何年に完成しましたか？",
            "1958年",
            "1958年ではありません。",
            "mentioned only to reject it",
        ),
        ("ja", "日本の首都はどこですか？", "東京", "日本の首都は京都です。", "not mentioned"),
        (
            "es",
            "¿En qué año se construyó la Torre Eiffel?",
            "1889",
            "No fue en 1889.",
            "mentioned only to reject it",
        ),
        ("es", "¿En qué año se construyó la Torre Eiffel?", "1889", "Quizás en 1889.", "hedged"),
        (
            "es",
            "¿Quién pintó la Mona Lisa?",
            "Leonardo da Vinci",
            "Leonardo da Vinci o Rafael.",
            "offered as one option",
        ),
        ("ko", "서울은 어느 나라의 수도입니까?", "한국", "한국이 아닙니다.", "mentioned only to reject it"),
    ],
)
def test_what_each_language_refuses(lang, question, truth, answer, reason):
    assert says_answer(answer, truth, question, (), lang).reason == reason


@pytest.mark.parametrize(
    "lang, answer",
    [
        ("zh", "我不知道。"),
        ("zh", "段落中没有提到这一点"),
        ("ja", "わかりません。"),
        ("ja", "回答できません"),
        ("es", "No lo sé."),
        ("es", "No hay información suficiente."),
        ("fr", "Je ne sais pas."),
        ("de", "Ich weiß es nicht."),
        ("ko", "잘 모르겠습니다"),
        ("ru", "Не знаю."),
        ("zh", "unknown"),
    ],
)
def test_each_languages_abstentions_decline(lang, answer):
    assert m.is_abstention(answer, language=lang)
    assert m.correctness(answer, "x", True, language=lang) == 0.0
    assert m.correctness(answer, "unknown", False, language=lang) == 1.0  # right where unanswerable


def test_answers_are_not_abstentions_by_accident():
    assert not m.is_abstention("1420年", language="zh")
    assert not m.is_abstention("No, fue en 1889.", language="es")  # a "no" that answers
    assert not m.is_abstention("Desconocida por muchos, la ciudad", language="es")


def test_a_language_without_a_lexicon_leaves_a_sentence_it_cannot_read_unjudged_and_says_why():
    verdict = says_answer("Kuala Lumpur ni olú ìlú Malaysia", "Kuala Lumpur", language="yo")
    assert not verdict.credited and not verdict.judged
    assert verdict.reason.startswith("negation, hedges, options and contrasts not read in Yoruba")
    assert m.correctness("Kuala Lumpur ni olú ìlú Malaysia", "Kuala Lumpur", language="yo") is None
    # Swahili has a lexicon (issue 78's second part): the same sentence is judged there
    assert m.correctness("Kuala Lumpur ni mji mkuu wa Malaysia", "Kuala Lumpur", language="sw") == 1.0
    assert m.correctness("Kuala Lumpur si mji mkuu wa Malaysia", "Kuala Lumpur", language="sw") != 1.0


def test_lexical_faithfulness_finds_unspaced_words_inside_the_passages():
    passage = "故宫于明朝永乐十八年（1420年）建成，占地面积约72万平方米。"
    assert m.faithfulness_lexical("故宫于1420年建成。", [passage], language="zh") == 1.0
    assert m.faithfulness_lexical("故宫于1406年建成。", [passage], language="zh") < 1.0
