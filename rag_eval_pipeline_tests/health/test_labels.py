"""Golden cases for each gap label, over a small knowledge base read from a folder as a user
writes it (JSONL with time fields, Markdown with front matter)."""

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_eval_pipeline.data.documents import Chunking, load_documents
from rag_eval_pipeline.health.assess import HealthSettings, assess
from rag_eval_pipeline.health.documents import document_times
from rag_eval_pipeline.health.knowledge import number_term, terms_of
from rag_eval_pipeline.health.labels import (
    CONFLICT,
    COVERED,
    KNOWLEDGE_GAP,
    OUTDATED,
    RETRIEVAL_MISS,
    CaseInput,
)
from rag_eval_pipeline.language.analysis import analyzer

AS_OF = "2025-06-01"
LABELS_ONLY = HealthSettings(as_of=AS_OF, with_topics=False)  # topics: tested with the CLI
RECORDS = [
    {
        "id": "eiffel",
        "title": "Eiffel Tower",
        "passage": "The Eiffel Tower is a wrought-iron tower in Paris. "
        "It opened to the public in 1889 for the World's Fair.",
        "updated_at": "2024-01-01",
    },
    {
        "id": "refund-2023",
        "title": "Refund policy 2023",
        "passage": "Customers may return a product within 14 days of delivery for a full refund.",
        "updated_at": "2023-01-01",
    },
    {
        "id": "refund-2025",
        "title": "Refund policy 2025",
        "passage": "Customers may return a product within 30 days of delivery for a full refund.",
        "updated_at": "2025-01-01",
        "supersedes": "refund-2023",
    },
    {
        "id": "spring",
        "title": "Spring promotion",
        "passage": "The promotion code SPRINGSALE gives a discount of 20 percent on garden furniture.",
        "valid_until": "2024-05-31",
    },
    {
        "id": "louvre-a",
        "title": "Louvre museum",
        "passage": "The Louvre is the world's most visited "
        "museum. It opened its doors in 1793 during the French Revolution. It stands on the Right Bank.",
    },
    {
        "id": "louvre-b",
        "title": "Louvre visitor guide",
        "passage": "The Louvre is the world's most "
        "visited museum. It opened its doors in 1795 during the French Revolution. "
        "It stands on the Right Bank.",
    },
    {
        "id": "nile",
        "title": "Nile",
        "passage": "The Nile is a major river in northeastern Africa, flowing into the Mediterranean Sea.",
    },
]


@pytest.fixture(scope="module")
def passages(tmp_path_factory) -> pd.DataFrame:
    folder = tmp_path_factory.mktemp("docs")
    with (folder / "kb.jsonl").open("w") as handle:
        for record in RECORDS:
            handle.write(json.dumps({**record, "language": "en"}) + "\n")  # no detector to load
    return load_documents(folder, Chunking(size=0)).passages


def _case(qid, question, reference, retrieved, answer="", abstained=False):
    return CaseInput(qid, question, reference, answer, abstained, tuple(retrieved))


CASES = [
    _case("covered", "When did the Eiffel Tower open?", "1889", ["doc_eiffel"], "1889"),
    _case("miss", "When did the Eiffel Tower open to the public?", "1889", ["doc_nile"], "unknown", True),
    _case("gap", "Who designed the Sydney Opera House?", "Jørn Utzon", ["doc_nile"], "I don't know", True),
    _case(
        "outdated_answer",
        "How many days do customers have to return a product?",
        "30 days",
        ["doc_refund-2023"],
        "14 days",
    ),
    _case(
        "expired_only",
        "What discount does the code SPRINGSALE give?",
        "20 percent",
        ["doc_spring"],
        "20 percent",
    ),
    _case("conflict", "When did the Louvre open its doors?", "1793", ["doc_louvre-a"], "1793"),
]


@pytest.fixture(scope="module")
def health(passages):
    return assess(passages, CASES, settings=LABELS_ONLY)


@pytest.mark.parametrize(
    ("qid", "label", "evidence"),
    [
        ("covered", COVERED, "doc_eiffel"),
        ("miss", RETRIEVAL_MISS, "doc_eiffel"),
        ("gap", KNOWLEDGE_GAP, None),
        ("outdated_answer", OUTDATED, "doc_refund-2023"),
        ("expired_only", OUTDATED, "doc_spring"),
        ("conflict", CONFLICT, "doc_louvre-a"),
    ],
)
def test_each_case_gets_its_one_label_with_its_evidence(health, qid, label, evidence):
    row = health.cases.set_index("qid").loc[qid]
    assert row["label"] == label, row["reason"]
    assert row["reason"]
    if evidence is not None:
        assert row["evidence_passage"] == evidence


def test_a_miss_names_the_sentence_that_holds_the_answer(health):
    row = health.cases.set_index("qid").loc["miss"]
    assert "1889" in row["evidence_text"] and row["score"] > 0


def test_a_conflict_quotes_both_documents(health):
    reason = health.cases.set_index("qid").loc["conflict"]["reason"]
    assert "1793" in reason and "1795" in reason


def test_documents_have_a_status_on_the_as_of_day(health):
    status = dict(zip(health.documents["document"], health.documents["status"]))
    assert status["doc_refund-2023"] == "superseded"
    assert status["doc_spring"] == "expired"
    assert {d for d, s in status.items() if s != "current"} == {"doc_refund-2023", "doc_spring"}
    superseded = health.documents.set_index("document").loc["doc_refund-2023"]
    assert superseded["superseded_by"] == "doc_refund-2025"


def test_stale_retrieval_and_never_retrieved(health):
    assert health.rates["stale_retrieval_rate"] == pytest.approx(2 / 6)
    assert health.rates["knowledge_gap_rate"] == pytest.approx(1 / 6)
    assert "doc_refund-2025" in health.never_retrieved and "doc_eiffel" not in health.never_retrieved


def test_asked_as_of_an_earlier_day_nothing_is_out_of_date_yet(passages):
    early = document_times(passages, "2024-03-01")
    assert set(early.table["status"]) == {"current"}  # the 2025 policy is not out, the code still valid


def test_ghosts_are_indexed_documents_the_source_no_longer_has(passages):
    source = [p for p in passages["passage_id"] if p != "doc_nile"]
    found = assess(passages, CASES[:1], source_documents=source, settings=LABELS_ONLY)
    assert found.ghosts == ["doc_nile"]


def test_without_a_reference_a_decline_over_weak_retrieval_is_a_gap(passages):
    cases = [
        _case("declined", "Who designed the Sydney Opera House?", None, ["doc_nile"], "I don't know", True),
        _case("judged", "When did the Eiffel Tower open?", None, ["doc_nile"], "1889"),
        _case("answered", "When did the Eiffel Tower open?", None, ["doc_eiffel"], "1889"),
    ]
    judged = CaseInput(
        **{**cases[1].__dict__, "sufficiency": 0.0, "sufficiency_reason": "the passage is about a river"}
    )
    found = assess(passages, [cases[0], judged, cases[2]], settings=LABELS_ONLY)
    labels = dict(zip(found.cases["qid"], found.cases["label"]))
    assert labels == {"declined": KNOWLEDGE_GAP, "judged": KNOWLEDGE_GAP, "answered": COVERED}
    assert "river" in found.cases.set_index("qid").loc["judged"]["reason"]


def test_time_fields_come_from_front_matter_and_the_files_time(tmp_path):
    (tmp_path / "old.md").write_text(
        "---\nupdated_at: 2022-01-01\nvalid_until: 2023-01-01\n---\n# Old\nText.\n"
    )
    (tmp_path / "plain.md").write_text("Plain text without front matter.\n")
    os.utime(tmp_path / "plain.md", (1_700_000_000, 1_700_000_000))
    loaded = load_documents(tmp_path, Chunking(size=0), declared_language="en").passages.set_index("title")
    assert (
        loaded.loc["old", "updated_at"] == "2022-01-01" and loaded.loc["old", "valid_until"] == "2023-01-01"
    )
    assert loaded.loc["old", "passage"].startswith("# Old")  # the front matter is not text
    assert loaded.loc["plain", "updated_at"].startswith("2023-11-14")
    table = document_times(
        load_documents(tmp_path, Chunking(size=0), declared_language="en").passages, "2024-01-01"
    ).table
    assert dict(zip(table["title"], table["status"])) == {"old": "expired", "plain": "current"}


def test_a_date_that_is_not_one_is_named_never_guessed(passages):
    broken = passages.assign(valid_until=["soon"] + [None] * (len(passages) - 1))
    found = document_times(broken, AS_OF)
    assert any("soon" in p and "not a date" in p for p in found.problems)


@settings(max_examples=30)
@given(
    st.lists(st.sampled_from(["doc_eiffel", "doc_nile", "doc_spring", "doc_refund-2023", "x"]), max_size=6)
)
def test_any_retrieval_gives_exactly_one_label_and_a_stale_list_of_non_current_documents(retrieved):
    frame = pd.DataFrame(
        [
            {
                "passage_id": f"doc_{r['id']}",
                "title": r["title"],
                "passage": r["passage"],
                "language": "en",
                **{k: r.get(k) for k in ("updated_at", "valid_until", "supersedes")},
            }
            for r in RECORDS
        ]
    )
    case = _case("q", "When did the Eiffel Tower open?", "1889", retrieved, "1889")
    found = assess(frame, [case], settings=LABELS_ONLY).cases.iloc[0]
    assert found["label"] in {COVERED, RETRIEVAL_MISS, OUTDATED, CONFLICT, KNOWLEDGE_GAP}
    assert set(found["stale_documents"]) == {d for d in retrieved if d in {"doc_spring", "doc_refund-2023"}}
    assert (found["label"] == COVERED) == ("doc_eiffel" in retrieved)


def test_documents_in_another_language_are_read_by_their_analysis(tmp_path):
    Path(tmp_path / "kb.jsonl").write_text(
        json.dumps(
            {
                "id": "prado",
                "title": "Museo del Prado",
                "language": "es",
                "passage": "El Museo del Prado abrió sus puertas en 1819 en Madrid.",
            }
        )
        + "\n"
        + json.dumps(
            {
                "id": "rio",
                "title": "Río Tajo",
                "language": "es",
                "passage": "El Tajo es el río más largo de la península ibérica.",
            }
        )
        + "\n"
    )
    frame = load_documents(tmp_path, Chunking(size=0)).passages
    cases = [
        CaseInput("es1", "¿Cuándo abrió el Museo del Prado?", "1819", "", False, ("doc_rio",), language="es"),
        CaseInput("es2", "¿Quién pintó Las Meninas?", "Velázquez", "", False, ("doc_rio",), language="es"),
    ]
    labels = dict(zip(*assess(frame, cases, settings=LABELS_ONLY).cases[["qid", "label"]].T.values))
    assert labels == {"es1": RETRIEVAL_MISS, "es2": KNOWLEDGE_GAP}


def test_a_one_digit_answer_and_a_procedure_in_another_order_are_found(tmp_path):
    """Two shapes the first unfitted set had: "5" (English index terms are two characters or
    more) and a procedure the reference words in another order than the passage."""
    Path(tmp_path / "kb.jsonl").write_text(
        json.dumps(
            {
                "id": "homes",
                "title": "Managing several homes",
                "language": "en",
                "passage": "One Lumen account can manage up to 5 homes.",
            }
        )
        + "\n"
        + json.dumps(
            {
                "id": "beta",
                "title": "Lumen app beta program",
                "language": "en",
                "passage": "To join the beta program, open Settings > About and tap the version "
                "number seven times, then accept the beta terms.",
            }
        )
        + "\n"
    )
    frame = load_documents(tmp_path, Chunking(size=0)).passages
    cases = [
        _case("homes", "How many homes can one Lumen account manage?", "5", ["doc_homes"], "5"),
        _case(
            "beta",
            "How do you join the Lumen app beta program?",
            "tap the version number seven times under Settings > About",
            ["doc_beta"],
            "tap it",
        ),
        _case("gap", "How many homes can a guest account see?", "3", ["doc_homes"], "3"),
    ]
    labels = dict(zip(*assess(frame, cases, settings=LABELS_ONLY).cases[["qid", "label"]].T.values))
    assert labels == {"homes": COVERED, "beta": COVERED, "gap": KNOWLEDGE_GAP}


def test_models_over_one_knowledge_base_share_its_reading_and_a_changed_one_is_read_again(passages):
    first = assess(passages, CASES, settings=LABELS_ONLY)
    second = assess(passages, CASES[:2], settings=LABELS_ONLY)  # another model's cases
    assert second.conflicts is first.conflicts  # the conflict scan done once for both
    edited = passages.copy()
    louvre_b = edited["passage_id"] == "doc_louvre-b"
    edited.loc[louvre_b, "passage"] = edited.loc[louvre_b, "passage"].str.replace("1795", "1793")
    agreed = assess(edited, CASES, settings=LABELS_ONLY).cases.set_index("qid")["label"]
    assert agreed["conflict"] != CONFLICT  # the edit is read, not the earlier version's scan
    earlier = assess(passages, CASES, settings=HealthSettings(as_of="2024-03-01", with_topics=False))
    assert earlier.cases.set_index("qid").loc["expired_only", "label"] != OUTDATED
    assert assess(passages, CASES, settings=LABELS_ONLY).cases.equals(first.cases)


def test_a_stored_reading_serves_another_process_and_an_unreadable_one_is_read_again(passages, tmp_path):
    from rag_eval_pipeline.health import assess as assessing

    assessing._READING.clear()  # a process that has not read this knowledge base yet
    first = assess(passages, CASES, settings=LABELS_ONLY, reading_folder=tmp_path)
    stored = list(tmp_path.glob("*.pickle"))
    assert len(stored) == 1
    assessing._READING.clear()  # what another process starts with
    again = assess(passages, CASES, settings=LABELS_ONLY, reading_folder=tmp_path)
    assert again.cases.equals(first.cases) and again.conflicts == first.conflicts
    assessing._READING.clear()
    stored[0].write_bytes(b"not a reading")
    mended = assess(passages, CASES, settings=LABELS_ONLY, reading_folder=tmp_path)
    assert mended.cases.equals(first.cases)
    assessing._READING.clear()
    earlier = HealthSettings(as_of="2024-03-01", with_topics=False)
    assess(passages, CASES[:1], settings=earlier, reading_folder=tmp_path)
    assert len(list(tmp_path.glob("*.pickle"))) == 1  # only the latest version is kept


HELP_CENTER = [
    (
        "schedules",
        "Heating schedules",
        "A heating schedule sets the temperature for each part of the day. "
        "Each day can have up to eight time blocks. The app shows them as coloured bars.",
    ),
    (
        "sensor",
        "Room sensor",
        "The Room Sensor measures temperature and humidity. Its firmware is version 8. "
        "It pairs with the thermostat in the Devices menu.",
    ),
    ("wifi", "Unterstützte WLAN-Netze", "Das Thermostat verbindet sich nur mit WLAN-Netzen im Band 2.4 GHz."),
    (
        "lock",
        "Child lock",
        "The child lock keeps the dial from being turned. To turn it on, hold both side "
        "buttons. Keep them pressed for five seconds until the lock icon shows.",
    ),
    ("price", "Lumen Plus price", "Lumen Plus costs EUR 3,99 per month, billed in advance."),
]


@pytest.fixture(scope="module")
def help_center(tmp_path_factory) -> pd.DataFrame:
    folder = tmp_path_factory.mktemp("help")
    with (folder / "kb.jsonl").open("w") as handle:
        for doc_id, title, passage in HELP_CENTER:
            code = "de" if doc_id == "wifi" else "en"
            handle.write(
                json.dumps({"id": doc_id, "title": title, "passage": passage, "language": code}) + "\n"
            )
    return load_documents(folder, Chunking(size=0)).passages


@pytest.mark.parametrize(
    ("question", "reference", "language", "label"),
    [
        # a number spelled out in the passage, in digits in the reference
        ("How many time blocks per day can a heating schedule have?", "8", "en", COVERED),
        # the same number in passages about something else: not beside the question's words
        ("How many heating zones can the boiler relay control?", "8", "en", KNOWLEDGE_GAP),
        # a decimal comma against a decimal point, in another language
        ("Welches WLAN-Band unterstützt das Thermostat?", "2,4 GHz", "de", COVERED),
        # the price written with its currency first and a decimal comma
        ("How much does Lumen Plus cost per month?", "3.99 EUR", "en", COVERED),
        # a procedure over two sentences, in another order and with one word said otherwise
        (
            "How do you turn on the child lock?",
            "press and hold both side buttons for 5 seconds",
            "en",
            COVERED,
        ),
        # the right words, the wrong number
        (
            "How do you turn on the child lock?",
            "press and hold both side buttons for 3 seconds",
            "en",
            KNOWLEDGE_GAP,
        ),
        # a unit the passage does not say beside the number
        ("How long is the Room Sensor's battery life?", "8 months", "en", KNOWLEDGE_GAP),
    ],
)
def test_short_answers_are_read_by_their_numbers_and_beside_the_question(
    help_center, question, reference, language, label
):
    case = CaseInput("q", question, reference, reference, False, (), language=language)
    found = assess(help_center, [case], settings=LABELS_ONLY).cases.iloc[0]
    assert found["label"] in {label, RETRIEVAL_MISS if label == COVERED else label}, found["reason"]


@settings(max_examples=60)
@given(number=st.integers(min_value=0, max_value=99), language=st.sampled_from(["en", "de", "fr", "es"]))
def test_a_number_is_one_term_however_it_is_written(number, language):
    """Digits, digits with leading zeros and the number spelled out (ICU's words for it, but a
    word that is also a stop word: French "un") read as one term; so do a decimal comma and a
    decimal point."""
    import icu

    rules = icu.RuleBasedNumberFormat(icu.URBNFRuleSetTag.SPELLOUT, icu.Locale(language))
    spelled = rules.format(number).replace("\u00ad", "")  # German writes soft hyphens in it
    expected = [number_term(str(number))]
    assert terms_of(str(number), language) == expected
    assert terms_of(f"0{number}", language) == expected
    stop = analyzer(language).index_stop_words
    if " " not in spelled and "-" not in spelled and spelled not in stop:  # a compound: several words
        assert terms_of(spelled, language) == expected
    assert (
        terms_of(f"{number},5", language) == terms_of(f"{number}.5", language) == [number_term(f"{number}.5")]
    )


def test_a_second_model_over_the_same_questions_looks_nothing_up_again_and_labels_alike(passages):
    from dataclasses import replace

    from rag_eval_pipeline.health import assess as assessing
    from rag_eval_pipeline.health.labels import case_table

    first = assess(passages, CASES, settings=LABELS_ONLY)
    (memo,) = assessing._SUPPORTS.values()
    asked = dict(memo._found)
    # another model: other answers, the same questions, references and retrieval
    other = [replace(case, answer="unknown", abstained=True) for case in CASES]
    second = assess(passages, other, settings=LABELS_ONLY)
    assert memo._found == asked  # each question's support was read from the memo
    view, conflicts = next(iter(assessing._READING.values()))
    for cases, found in ((CASES, first), (other, second)):  # as labelled without any memo
        alone = case_table(cases, view, conflicts, LABELS_ONLY.thresholds)
        assert found.cases.equals(alone)
    titled = replace(CASES[0], retrieved_ids=(), retrieved_titles=("Eiffel Tower",))
    assert memo.retrieved(titled) == memo.retrieved(CASES[0]) != set()
