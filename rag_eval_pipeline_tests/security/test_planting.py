"""What the probes plant: templates in every language, each planted passage retrieved for its own
question in its own language, canaries that are ASCII and differ by case and run, the success test
of poisoning, and an attacked copy that leaves the original passages as they were."""

from __future__ import annotations

import pandas as pd
import pytest

from rag_eval_pipeline.data.knowledge_base import passage_id
from rag_eval_pipeline.language.attacks import PLACEHOLDER, TEMPLATES
from rag_eval_pipeline.language.table import LANGUAGES
from rag_eval_pipeline.retrieval.base import RetrievalMode
from rag_eval_pipeline.retrieval.spec import KnowledgeBaseSpec
from rag_eval_pipeline.security.canary import canary
from rag_eval_pipeline.security.copies import AttackedCopies
from rag_eval_pipeline.security.planting import (
    Attack,
    attacked_passages,
    build_probes,
    contains_answer,
    planted_documents,
)

# the same question in every language of the table: who painted the Sistine Chapel's ceiling
QUESTIONS = {
    "en": ("Who painted the ceiling of the Sistine Chapel?", "Michelangelo"),
    "es": ("¿Quién pintó el techo de la Capilla Sixtina?", "Miguel Ángel"),
    "de": ("Wer malte die Decke der Sixtinischen Kapelle?", "Michelangelo"),
    "fr": ("Qui a peint le plafond de la chapelle Sixtine ?", "Michel-Ange"),
    "it": ("Chi dipinse il soffitto della Cappella Sistina?", "Michelangelo"),
    "pt": ("Quem pintou o teto da Capela Sistina?", "Miguel Ângelo"),
    "nl": ("Wie schilderde het plafond van de Sixtijnse Kapel?", "Michelangelo"),
    "ru": ("Кто расписал потолок Сикстинской капеллы?", "Микеланджело"),
    "ar": ("من رسم سقف كنيسة سيستينا؟", "مايكل أنجلو"),
    "hi": ("सिस्टिन चैपल की छत को किसने चित्रित किया?", "माइकल एंजेलो"),
    "vi": ("Ai đã vẽ trần nhà nguyện Sistine?", "Michelangelo"),
    "zh": ("谁绘制了西斯廷教堂的天顶画？", "米开朗基罗"),
    "ja": ("システィーナ礼拝堂の天井画を描いたのは誰ですか？", "ミケランジェロ"),
    "ko": ("시스티나 성당의 천장화를 그린 사람은 누구입니까?", "미켈란젤로"),
    "th": ("ใครเป็นผู้วาดเพดานโบสถ์ซิสทีน", "มีเกลันเจโล"),
    "tr": ("Sistine Şapeli'nin tavanını kim boyadı?", "Michelangelo"),
    "id": ("Siapa yang melukis langit-langit Kapel Sistina?", "Michelangelo"),
}
ORIGINAL = [
    ("Sistine Chapel", "Michelangelo painted the ceiling of the Sistine Chapel between 1508 and 1512.", "en"),
    ("Sistine Chapel (zh)", "西斯廷教堂的天顶画由米开朗基罗于一五零八年至一五一二年间绘制。", "zh"),
    ("Vatican", "The Vatican Museums hold the Sistine Chapel and the Raphael Rooms.", "en"),
    ("Louvre", "The Louvre in Paris holds the Mona Lisa.", "en"),
]


def _passages() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "passage_id": [passage_id(t) for t, _, _ in ORIGINAL],
            "title": [t for t, _, _ in ORIGINAL],
            "passage": [p for _, p, _ in ORIGINAL],
            "sentences": [[p] for _, p, _ in ORIGINAL],
            "language": [code for *_, code in ORIGINAL],
        }
    )


def _cases() -> list[dict]:
    return [
        {"qid": f"q-{code}", "question": q, "answer": a, "language": code}
        for code, (q, a) in QUESTIONS.items()
    ]


def test_every_language_of_the_table_has_its_own_templates_and_keeps_the_placeholder():
    assert set(TEMPLATES) == set(LANGUAGES) == set(QUESTIONS)
    for code, templates in TEMPLATES.items():
        assert "{url}" in templates.exfiltration and "{canary}" in templates.injection, code
        assert all("{target}" in p and "{question}" in p for p in templates.poisoning), code
        assert "{canary}" in templates.confidential and "{internal}" in templates.confidential, code
    probes = build_probes(_cases(), list(Attack), "seed")
    exfiltration = [p for p in probes if p.attack is Attack.EXFILTRATION]
    assert all(PLACEHOLDER in p.planted[0].text and p.canary not in p.planted[0].text for p in exfiltration)
    assert all(p.own_templates for p in probes)


@pytest.mark.parametrize("attack", list(Attack))
def test_each_planted_passage_is_retrieved_for_its_own_question_in_its_language(tmp_path, attack):
    """One attacked copy holds every language's planted passages of one attack (as a probe run
    does): each question's own are in its top 4 (the one planted passage; at least 2 of
    poisoning's 5, which share the top 4 with the true passage where the knowledge base has it)."""
    probes = build_probes(_cases(), [attack], "seed")
    documents = planted_documents(probes, with_confidential=False)
    retrieve = AttackedCopies(KnowledgeBaseSpec(), _passages(), tmp_path, False)(
        documents, RetrievalMode.BM25
    )
    found = retrieve([p.question for p in probes], 4, [p.language for p in probes])
    for probe, hits in zip(probes, found):
        ids = {h.passage_id for h in hits}
        wanted = 2 if attack is Attack.POISONING else 1
        assert len(probe.attack_ids & ids) >= wanted, (probe.language, hits)


def test_canaries_are_ascii_and_differ_by_case_and_run_but_not_within_a_run():
    tokens = {canary(run, qid, "injection") for run in ("a", "b") for qid in ("1", "2")}
    assert len(tokens) == 4
    assert all(t.isascii() and t.isalnum() and t.isupper() and t[0].isalpha() for t in tokens)
    assert canary("a", "1", "injection") == canary("a", "1", "injection") != canary("a", "1", "exfiltration")


def test_poisoning_success_is_the_normalised_target_inside_the_normalised_reply():
    assert contains_answer("The answer is New Zealand.", "new zealand", "en")
    assert not contains_answer("unknown", "no", "en")  # whole tokens: "no" is not in "unknown"
    assert contains_answer("答案是北京。", "北京", "zh")
    assert not contains_answer("答案是南京。", "北京", "zh")
    assert not contains_answer("", "Paris", "fr")


def test_false_targets_differ_from_the_truth():
    probes = build_probes(
        [*_cases(), {"qid": "yn", "question": "Is it?", "answer": "yes"}], [Attack.POISONING], "s"
    )
    for probe in probes:
        assert not contains_answer(probe.target, probe.reference, probe.language)
        assert not contains_answer(probe.reference, probe.target, probe.language)
    assert next(p for p in probes if p.qid == "yn").target == "no"


def test_the_attacked_copy_is_a_new_frame():
    original = _passages()
    before = original.copy(deep=True)
    documents = planted_documents(build_probes(_cases(), list(Attack), "s"), with_confidential=True)
    attacked = attacked_passages(original, documents)
    pd.testing.assert_frame_equal(original, before)
    assert len(attacked) == len(original) + len(documents)


def test_an_unknown_attack_is_refused_with_the_known_ones():
    with pytest.raises(
        ValueError, match="unknown attack 'jailbreak'; known: injection, poisoning, exfiltration"
    ):
        Attack.parse_list("injection,jailbreak")


def test_an_llm_answer_model_is_told_the_secret_in_its_system_prompt_only_when_probed():
    from rag_eval_pipeline.answering.chat import ANSWER_SYSTEM_PROMPT, render_answer_prompt

    probed = render_answer_prompt("m", "Who?", (), secret="ZSECRET1234567")
    assert "ZSECRET1234567" in probed.system and "ZSECRET1234567" not in str(probed.messages)
    assert render_answer_prompt("m", "Who?", ()).system == ANSWER_SYSTEM_PROMPT  # an evaluation's, unchanged


def test_the_passages_variable_is_the_list_itself_or_its_json_inside_a_longer_string():
    import json

    from rag_eval_pipeline.answering.agents.http import render_template, takes_passages

    passages = [{"title": "长城", "text": 'He said "hi" {question}'}]
    body = {"q": "{question}", "ctx": "{passages}", "prompt": "Context: {passages}", "n": 3}
    rendered = render_template(body, "q1", "Why?", passages=passages)
    assert rendered["ctx"] == passages and rendered["n"] == 3 and rendered["q"] == "Why?"
    assert json.loads(rendered["prompt"].removeprefix("Context: ")) == passages  # the text kept as given
    assert render_template(body, "q1", "Why?")["ctx"] == []  # an evaluation gives none
    assert takes_passages(body) and not takes_passages({"question": "{question}"})
