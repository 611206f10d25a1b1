"""Turn the question table into the knowledge base (passages) and the judgement list."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

# language: the ISO 639-1 code the passage is analysed in (language/table.py)
PASSAGE_COLUMNS = ["passage_id", "title", "passage", "sentences", "language"]
# answerable False: the documents hold no answer, and declining to answer is the right answer;
# language: the case's (its question and reference), and language_source how it was found
JUDGEMENT_COLUMNS = [
    "qid",
    "question",
    "answer",
    "type",
    "level",
    "gold_titles",
    "gold_facts",
    "answerable",
    "language",
    "language_source",
]
# how a case's language was found: set by the row or the configuration, the dataset's own,
# detected from its text, or taken from the rest of the list (too short to tell)
LANGUAGE_SET, LANGUAGE_OF_DATASET, LANGUAGE_DETECTED, LANGUAGE_ASSUMED = (
    "set",
    "dataset",
    "detected",
    "assumed",
)
HOTPOTQA_LANGUAGE = "en"  # HotpotQA's questions and Wikipedia paragraphs are English
# True: the case's reference answer is still to be written (a promoted production case); what
# needs one is absent for it, never scored against an empty answer
REFERENCE_PENDING = "reference_pending"


def passage_id(title: str) -> str:
    """Stable id from the title: in HotpotQA a title identifies a paragraph, so re-runs keep ids."""
    return "p_" + hashlib.sha1(title.encode("utf-8")).hexdigest()[:16]


def flatten_passages(questions: pd.DataFrame) -> pd.DataFrame:
    """Every context paragraph of the questions, one row per distinct title (first seen wins).
    The paragraphs are flattened and joined as Arrow columns: a Python object is made only for
    each distinct passage, not for each of the questions' ten paragraphs."""
    if questions.empty:
        return pd.DataFrame(columns=PASSAGE_COLUMNS)
    context = pa.Table.from_pandas(questions[["context_titles", "context_sentences"]], preserve_index=False)
    titles = pc.list_flatten(context["context_titles"])
    paragraphs = pc.list_flatten(context["context_sentences"])
    first_seen = np.flatnonzero(~titles.to_pandas().duplicated().to_numpy())
    distinct_titles = titles.take(first_seen).to_pylist()
    sentences = paragraphs.take(first_seen)
    return pd.DataFrame(
        {
            "passage_id": [passage_id(title) for title in distinct_titles],
            "title": distinct_titles,
            "passage": pc.binary_join(sentences, "").to_pylist(),  # HotpotQA keeps the leading spaces
            "sentences": sentences.to_pylist(),
            "language": HOTPOTQA_LANGUAGE,
        },
        columns=PASSAGE_COLUMNS,
    )


# what the judgement list takes from a question: all but its paragraphs
QUESTION_FIELDS = ["qid", "question", "answer", "type", "level", "supporting_titles", "supporting_sent_ids"]
IN_SAMPLE = "in_sample"  # hotpotqa_raw with knowledge_base.scope all: the questions to evaluate


def sampled(questions: pd.DataFrame) -> pd.DataFrame:
    """The questions to evaluate: all of them, or those marked ``in_sample`` when the knowledge
    base was built from every question of the file."""
    if IN_SAMPLE not in questions:
        return questions
    return questions[questions[IN_SAMPLE]].drop(columns=[IN_SAMPLE]).reset_index(drop=True)


def build_judgement_list(questions: pd.DataFrame) -> pd.DataFrame:
    """One row per question to evaluate with the ground truth and its gold supporting titles and
    facts."""
    wanted = [*QUESTION_FIELDS, *([IN_SAMPLE] if IN_SAMPLE in questions else [])]
    rows = []  # (the paragraphs are left out before anything is copied: they are most of a row)
    for record in sampled(questions[wanted]).to_dict(orient="records"):
        fact_titles = list(record["supporting_titles"])
        fact_ids = [int(i) for i in record["supporting_sent_ids"]]
        facts = list(dict.fromkeys(zip(fact_titles, fact_ids)))  # dedupe, keep order
        rows.append(
            {
                "qid": record["qid"],
                "question": record["question"],
                "answer": record["answer"],
                "type": record["type"],
                "level": record["level"],
                "gold_titles": list(dict.fromkeys(fact_titles)),
                "gold_facts": [{"title": t, "sent_id": i} for t, i in facts],
                "answerable": True,  # every HotpotQA question has its answer in its paragraphs
                "language": HOTPOTQA_LANGUAGE,
                "language_source": LANGUAGE_OF_DATASET,
            }
        )
    return pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS)
