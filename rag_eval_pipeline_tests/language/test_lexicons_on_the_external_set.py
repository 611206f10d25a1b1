"""Issue 78's lexicons measured on the linguist's seen set (benchmarks/answer_forms.py --set
external): in every language, wrong, negated, hedged and listed answers are credited at most 0.1;
in every language a lexicon reads, right ones at least 0.8 (a detail the passage holds restated
beside the answer is no claim of its own), and at most 0.1 of them scored 0: the rest absent,
where the rule cannot place a form of the name or weigh the words beside it."""

import pytest

from rag_eval_pipeline.language.inflection import reading
from rag_eval_pipeline_tests.support.answer_forms_external import figures, forms


@pytest.mark.slow  # 880 answers in 44 languages, each language's lemmas read once: about a minute
def test_every_language_a_lexicon_reads_is_right_or_refuses():
    scored = [(f, f.correctness()) for f in forms("seen")]
    found = {g.language: g for g in figures(scored)}
    for code, group in found.items():
        assert group.wrong_credited <= 0.1, code
        if reading(code).lexicon:
            zero = sum(s == 0.0 for f, s in scored if f.language == code and f.right) / group.rights
            assert group.right_credited >= 0.8 and zero <= 0.1, (code, zero)
    with_lexicon = [c for c in found if reading(c).lexicon]
    assert {"pl", "cs", "hu", "fi", "el", "he", "fa", "sw", "ta", "uk"} <= set(with_lexicon)
