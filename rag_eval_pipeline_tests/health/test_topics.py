"""Topics of the flagged questions and the judgement list against production, over the shapes of
input: none, one, many, several languages; the same data in any order gives the same ids."""

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_eval_pipeline.health.topics import TOPIC_COLUMNS, topic_table
from rag_eval_pipeline.health.traffic import compare_traffic, production_questions

QUESTIONS = [
    ("How long is the warranty on the drill?", "en"),
    ("What warranty covers a cordless drill?", "en"),
    ("Does the drill warranty cover the battery?", "en"),
    ("When are refunds paid after a return?", "en"),
    ("How many days until a refund is paid?", "en"),
    ("Wie lange dauert die Rückerstattung?", "de"),
    ("Wann wird die Rückerstattung gezahlt?", "de"),
    ("¿Cuánto tarda el reembolso?", "es"),
]
LABELS = ["knowledge_gap", "retrieval_miss", "outdated", "conflict", "covered"]


def _cases(rows):
    return pd.DataFrame(
        [
            {"qid": f"q{n}", "question": q, "language": code, "label": label, "correct": correct}
            for n, ((q, code), label, correct) in enumerate(rows)
        ],
        columns=["qid", "question", "language", "label", "correct"],
    )


case_rows = st.lists(
    st.tuples(st.sampled_from(QUESTIONS), st.sampled_from(LABELS), st.sampled_from([None, 0.0, 1.0])),
    max_size=8,
)


@settings(max_examples=8)
@given(case_rows, st.randoms(use_true_random=False))
def test_every_flagged_case_is_in_one_topic_and_ids_do_not_depend_on_order(rows, random):
    cases = _cases(rows)
    table = topic_table(cases, max_topics=4)
    assert list(table.columns) == TOPIC_COLUMNS
    flagged = {
        qid
        for qid, label, correct in zip(cases["qid"], cases["label"], cases["correct"])
        if label != "covered" or correct == 0.0
    }
    members = [q for qids in table["qids"] for q in qids]
    assert sorted(members) == sorted(flagged)  # each once, the covered and right ones nowhere
    assert table["topic"].is_unique and (table["size"] == table["qids"].map(len)).all()
    assert list(table["rank_score"]) == sorted(table["rank_score"], reverse=True)
    shuffled = cases.sample(frac=1, random_state=random.randint(0, 1000))
    assert list(topic_table(shuffled, max_topics=4)["topic"]) == list(table["topic"])


def test_a_topic_says_what_to_do_in_one_line():
    rows = [(QUESTIONS[i], "knowledge_gap", None) for i in range(3)] + [
        (QUESTIONS[i], "retrieval_miss", None) for i in (3, 4)
    ]
    table = topic_table(_cases(rows), max_topics=3)
    gap = table.iloc[0]  # the gaps rank first: severity 1.0 against 0.6
    assert "warranty" in " ".join(gap["terms"]) and "what" not in gap["terms"]
    assert gap["finding"].startswith("3 question(s), 100% knowledge_gap: no document answers these")
    assert len(gap["representatives"]) == 3


@pytest.mark.slow  # 11 s on the shared machine (scipy's clustering and distances loaded cold)
def test_production_like_the_list_diverges_little_and_a_new_subject_is_a_blind_spot():
    cases = _cases([(q, "covered", 1.0) for q in QUESTIONS[:5]])[["qid", "question", "language"]]
    alike = production_questions([{"question": q, "language": "en"} for q, _ in QUESTIONS[:5]])
    assert compare_traffic(cases, alike, max_topics=3).divergence == pytest.approx(0.0, abs=1e-9)
    other = production_questions(
        [
            {"id": f"p{n}", "question": q}
            for n, q in enumerate(
                [
                    "Can I pay an invoice by credit card?",
                    "Which credit cards are accepted for an invoice?",
                    "Is an invoice payable by credit card?",
                    "How long is the warranty on the drill?",
                ]
            )
        ]
    )
    traffic = compare_traffic(cases, other)
    assert 0 < traffic.divergence <= 1
    blind = traffic.topics[traffic.topics["blind_spot"]]
    assert len(blind) >= 1 and set(traffic.proposals["topic"]) <= set(blind["topic"])
    assert {p for p in traffic.proposals["question"]} <= {
        "Can I pay an invoice by credit card?",
        "Which credit cards are accepted for an invoice?",
        "Is an invoice payable by credit card?",
    }


def test_without_production_or_cases_the_divergence_is_absent_not_zero():
    empty = production_questions([{"question": "  "}, {"text": "no question"}])
    assert empty.empty
    cases = _cases([(QUESTIONS[0], "covered", 1.0)])[["qid", "question", "language"]]
    assert compare_traffic(cases, empty).divergence is None


def test_the_daily_samples_are_read_newest_first_up_to_the_bound_and_none_is_absent_with_why():
    from rag_eval_pipeline.health.traffic import compare_traffic, sampled_production

    def day(n: int, count: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "interaction_id": [f"d{n}-{i}" for i in range(count)],
                "question": ["Where is the library?"] * count,
            }
        )

    samples = {
        "2026-11-26": day(26, 3),
        "2026-11-27": day(27, 3),
        "2026-11-28": day(28, 3),
        "2026-11-29": day(29, 0),
    }
    questions, source = sampled_production(samples, limit=5)
    assert list(questions["id"]) == ["d28-0", "d28-1", "d28-2", "d27-0", "d27-1"]
    assert (
        source
        == "the daily production samples of 2026-11-27 to 2026-11-28 (2 day(s) of the 3 held, 5 questions)"
    )
    none, why = sampled_production({})
    assert none.empty and why.startswith("none: no production day sampled yet")
    cases = pd.DataFrame({"qid": ["a"], "question": ["Where is the library?"], "language": ["en"]})
    assert compare_traffic(cases, none).divergence is None  # absent, not 0
