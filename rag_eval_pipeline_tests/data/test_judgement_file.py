import json

import pandas as pd
import pytest

from rag_eval_pipeline.data.judgement_file import JudgementFileError, read_judgement_file

PASSAGES = pd.DataFrame(
    {"passage_id": ["doc_refunds", "doc_refunds#1", "p_abc"], "title": ["Refunds", "Refunds", "Shipping"]}
)


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_reads_labels_tags_and_defaults(tmp_path):
    path = _jsonl(
        tmp_path / "q.jsonl",
        [
            {
                "id": "a",
                "question": "How long do refunds take?",
                "answer": "14 days",
                "relevant_ids": ["refunds"],
                "tags": ["billing"],
            },
            {"question": "Do you ship to Peru?", "answer": "Yes", "relevant_titles": ["Shipping"]},
            {"question": "Who founded you?", "answer": "Ada"},
        ],
    )
    cases = read_judgement_file(path, PASSAGES)
    assert cases["qid"].tolist() == ["a", "q0002", "q0003"]
    assert cases["gold_titles"].tolist() == [["Refunds"], ["Shipping"], []]
    assert cases.iloc[0]["gold_facts"] == [{"title": "Refunds", "sent_id": -1}]
    assert cases["tags"].tolist() == [["billing"], [], []]
    assert cases["type"].tolist() == ["billing", "custom", "custom"]


def test_csv_with_semicolon_lists(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text("question,answer,relevant_titles,tags\nShip?,Yes,Shipping;Refunds,ops;faq\n")
    cases = read_judgement_file(path, PASSAGES)
    assert cases.iloc[0]["gold_titles"] == ["Shipping", "Refunds"] and cases.iloc[0]["tags"] == ["ops", "faq"]


def test_every_problem_is_named_with_its_line(tmp_path):
    path = _jsonl(
        tmp_path / "bad.jsonl",
        [
            {"id": "a", "question": "", "answer": "x"},
            {"id": "a", "question": "Q?", "answer": "y", "relevant_ids": ["nope"]},
            {"id": "b", "question": "Q?", "answer": "", "relevant_titles": ["Nowhere"]},
        ],
    )
    with pytest.raises(JudgementFileError) as err:
        read_judgement_file(path, PASSAGES)
    assert err.value.problems == [
        f"{path}, {problem}"
        for problem in [
            "line 1: empty question",
            "line 2: duplicate id 'a' (first at line 1)",
            "line 2: relevant id 'nope' is not in the knowledge base",
            "line 3: empty answer (or answerable: false for a question the documents cannot answer, "
            "or reference_pending: true while it is still to be written)",
            "line 3: relevant title 'Nowhere' is not in the knowledge base",
        ]
    ]
    assert str(path) in str(err.value)
    (tmp_path / "cols.csv").write_text("prompt,reply\nQ?,A\n")
    with pytest.raises(JudgementFileError, match="missing column\\(s\\): answer, question"):
        read_judgement_file(tmp_path / "cols.csv", PASSAGES)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        '{"question": "Q", "answer": "A"}\n{oops\n["a list"]\n"a string"\n{"question": "", "answer": "B"}\n'
    )
    with pytest.raises(JudgementFileError) as err:
        read_judgement_file(broken, PASSAGES)
    # checking goes on past a line it cannot read: every problem, each with file and line
    assert err.value.problems == [
        f"{broken}, line 2: invalid JSON (Expecting property name enclosed in double quotes)",
        f"{broken}, line 3: expected an object with question and answer, got list",
        f"{broken}, line 4: expected an object with question and answer, got str",
        f"{broken}, line 5: empty question",
    ]


def test_what_a_dataset_file_is_is_told_from_its_first_row_alone(tmp_path, shared_hotpotqa):
    """`--dataset FILE` is a judgement list or HotpotQA by its first readable row's columns, in
    every format; nothing after that row is read (a 100,000-case file is not held to tell it),
    so a tail this reader could not even decode changes nothing."""
    from rag_eval_pipeline.data.judgement_file import is_judgement_list

    assert not is_judgement_list(shared_hotpotqa)
    listed = tmp_path / "cases.jsonl"
    listed.write_bytes(b'\nnot json\n{"question": "q", "answer": "a"}\n\xff\xfe not UTF-8 \n')
    assert is_judgement_list(listed)
    frame = pd.DataFrame({"question": ["q"], "answer": ["a"]})
    frame.to_parquet(tmp_path / "cases.parquet")
    frame.to_csv(tmp_path / "cases.csv", index=False)
    assert is_judgement_list(tmp_path / "cases.parquet") and is_judgement_list(tmp_path / "cases.csv")
    (tmp_path / "broken.parquet").write_text("not parquet")
    assert not is_judgement_list(tmp_path / "broken.parquet")


def test_a_csv_row_is_named_by_the_line_it_starts_on_and_never_read_shifted(tmp_path):
    """A quoted answer over two lines moves the next row's line; a row with a cell too many (a
    comma outside quotes) is its line's problem, not a row read one column over; a quote left
    open is said where it opened."""
    path = tmp_path / "q.csv"
    path.write_text('question,answer\n"Where, exactly?","Paris,\nin France"\nWho?,Ada,Lovelace\nWhen?,\n')
    with pytest.raises(JudgementFileError) as err:
        read_judgement_file(path, PASSAGES)
    assert err.value.problems == [
        f"{path}, line 4: 3 cells where the header names 2 (a comma outside quotes?)",
        f"{path}, line 5: empty answer (or answerable: false for a question the documents cannot answer, "
        "or reference_pending: true while it is still to be written)",
    ]
    path.write_text('question,answer\nWhere?,Paris\n"Who?,Ada\nWhen?,1815\n')
    with pytest.raises(JudgementFileError) as err:
        read_judgement_file(path, PASSAGES)
    assert [p.split(" (")[0] for p in err.value.problems] == [f"{path}, line 3: not read as CSV"]
