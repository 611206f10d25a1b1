import pandas as pd

from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.knowledge_base import build_judgement_list, flatten_passages, passage_id


def _questions() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "qid": "q1",
                "question": "Q1?",
                "answer": "A",
                "type": "bridge",
                "level": "hard",
                "context_titles": ["Alpha", "Beta"],
                "context_sentences": [["Alpha is first.", " It leads."], ["Beta is second."]],
                "supporting_titles": ["Alpha", "Beta", "Alpha"],
                "supporting_sent_ids": [0, 0, 0],
            },
            {
                "qid": "q2",
                "question": "Q2?",
                "answer": "B",
                "type": "comparison",
                "level": "hard",
                "context_titles": ["Beta", "Gamma"],
                "context_sentences": [["Beta is second."], ["Gamma is third."]],
                "supporting_titles": ["Gamma"],
                "supporting_sent_ids": [0],
            },
        ]
    )


def test_passages_deduplicated_by_title_with_sentences_joined_as_they_are():
    passages = flatten_passages(_questions())
    assert passages["title"].tolist() == ["Alpha", "Beta", "Gamma"]
    alpha = passages.iloc[0]
    assert alpha["passage"] == "Alpha is first. It leads."
    assert list(alpha["sentences"]) == ["Alpha is first.", " It leads."]
    assert alpha["passage_id"] == passage_id("Alpha")


def test_passage_id_is_stable_and_distinct():
    assert passage_id("Shirley Temple") == passage_id("Shirley Temple")
    assert passage_id("Shirley Temple") != passage_id("Shirley Temple Black")
    assert passage_id("Shirley Temple").startswith("p_")


def test_judgement_list_dedupes_gold_facts_and_titles():
    cases = build_judgement_list(_questions())
    q1 = cases.iloc[0]
    assert q1["gold_titles"] == ["Alpha", "Beta"]
    assert q1["gold_facts"] == [{"title": "Alpha", "sent_id": 0}, {"title": "Beta", "sent_id": 0}]
    assert cases["type"].tolist() == ["bridge", "comparison"]


def test_shared_file_passage_counts(shared_hotpotqa):
    passages = flatten_passages(read_hotpotqa_file(shared_hotpotqa))
    assert len(passages) == 4943  # 4,976 paragraphs, 4,943 distinct titles
    assert passages["passage_id"].is_unique
