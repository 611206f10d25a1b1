"""Issue 78, fifth part: seven languages a lemmatizer or stemmer reads (Esperanto, Latin,
Asturian, Scottish Gaelic, Luxembourgish, Yiddish, Nepali) have their closed word classes, from
their grammars. A right sentence is credited, its negation scores 0, and a hedge or an "X or Y"
half (mentioned, not asserted), as in every language the rule reads; before, each of these
sentences was absent ("negation, hedges, options and contrasts not read")."""

import pytest

from rag_eval_pipeline.language.inflection import reading
from rag_eval_pipeline.metrics.reference import correctness_verdict

# language, reference, passage, question, right, negated, hedged, listed
SENTENCES = [
    (
        "eo", "Parizo", "Parizo estas la ĉefurbo de Francio.", "Kio estas la ĉefurbo de Francio?",
        "La ĉefurbo de Francio estas Parizo.", "La ĉefurbo ne estas Parizo.",
        "Eble Parizo, eble Liono.", "Parizo aŭ Liono",
    ),
    (
        "la", "Roma", "Roma caput Italiae est.", "Quae urbs caput Italiae est?",
        "Caput Italiae est Roma.", "Caput Italiae Roma non est.",
        "Fortasse Roma, fortasse Mediolanum.", "Roma aut Mediolanum",
    ),
    (
        "ast", "Uviéu", "Uviéu ye la capital d'Asturies.", "¿Cuál ye la capital d'Asturies?",
        "La capital d'Asturies ye Uviéu.", "La capital d'Asturies nun ye Uviéu.",
        "Quiciás Uviéu, o quiciás Xixón.", "Uviéu o Xixón",
    ),
    (
        "lb", "Lëtzebuerg", "D'Haaptstad vum Land ass Lëtzebuerg.", "Wat ass d'Haaptstad vum Land?",
        "D'Haaptstad ass Lëtzebuerg.", "D'Haaptstad ass net Lëtzebuerg.",
        "Vläicht Lëtzebuerg, vläicht Esch.", "Lëtzebuerg oder Esch",
    ),
    (
        "yi", "ווילנע", "ווילנע איז די הויפּטשטאָט פֿון ליטע.", "וואָס איז די הויפּטשטאָט פֿון ליטע?",
        "די הויפּטשטאָט פֿון ליטע איז ווילנע.", "די הויפּטשטאָט איז נישט ווילנע.",
        "אפֿשר ווילנע, אפֿשר קאָוונע.", "ווילנע אָדער קאָוונע",
    ),
    (
        "ne", "काठमाडौं", "नेपालको राजधानी काठमाडौं हो।", "नेपालको राजधानी कुन हो?",
        "नेपालको राजधानी काठमाडौं हो।", "नेपालको राजधानी काठमाडौं होइन।",
        "सायद काठमाडौं, सायद पोखरा।", "काठमाडौं वा पोखरा",
    ),
    (
        "gd", "Glaschu", "Tha Glaschu air bruaichean Chluaidh.", "Dè am baile a tha air Cluaidh?",
        "Tha Glaschu air Cluaidh.", "Chan eil Glaschu air Cluaidh.",
        "'S dòcha Glaschu, 's dòcha Peairt.", "Glaschu no Peairt",
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", SENTENCES, ids=[c[0] for c in SENTENCES])
def test_a_right_sentence_is_credited_and_its_negation_hedge_and_options_are_judged(case):
    code, reference, passage, question, right, negated, hedged, listed = case
    assert reading(code).lexicon and not reading(code).unread

    def score(answer: str) -> float | None:
        return correctness_verdict(answer, reference, question=question, language=code, passages=[passage])[0]

    assert score(right) == 1.0
    assert [score(negated), score(hedged), score(listed)] == [0.0, 0.5, 0.5]
