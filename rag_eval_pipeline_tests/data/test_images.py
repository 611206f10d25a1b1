"""Images as documents: the catalog of a documents folder, captions as passages, and
`rag-eval images check`, each problem on its own line and none fatal to the others."""

from __future__ import annotations

import hashlib
import json

from rag_eval_pipeline.data.documents import document_versions, load_documents
from rag_eval_pipeline.data.images import image_catalog
from rag_eval_pipeline_tests.support.cli import rag_eval
from rag_eval_pipeline_tests.support.images import draw


def _folder(tmp_path):
    docs = tmp_path / "docs"
    draw(docs / "plan.png", (80, 60), "white", [((10, 10, 30, 20), "red")])
    draw(docs / "photos/cat.jpg", (40, 30), "orange", format="JPEG")
    draw(docs / "anim.gif", (20, 20), "blue", format="GIF")
    draw(docs / "shot.webp", (30, 20), "green", format="WEBP")
    (docs / "copy.png").write_bytes((docs / "plan.png").read_bytes())
    (docs / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    (docs / "notes.md").write_text("The kitchen is next to the hall.", encoding="utf-8")
    (docs / "images.jsonl").write_text(
        "\n".join(
            [
                json.dumps(
                    {"file": "plan.png", "caption": "Floor plan of the ground floor", "title": "Plan"}
                ),
                json.dumps(
                    {"file": "photos/cat.jpg", "caption": "A cat on a sofa", "alt_text": "orange cat"}
                ),
                json.dumps({"file": "missing.png", "caption": "no such file"}),
                "{not json",
                json.dumps({"file": "broken.png", "caption": "a broken file"}),
            ]
        ),
        encoding="utf-8",
    )
    return docs


def test_catalog_lists_each_image_with_hash_size_type_and_its_problems(tmp_path):
    docs = _folder(tmp_path)
    catalog = image_catalog(docs)
    plan = catalog.images["plan.png"]
    assert (plan.width, plan.height, plan.type) == (80, 60, "PNG")
    assert plan.sha256 == hashlib.sha256((docs / "plan.png").read_bytes()).hexdigest()
    assert catalog.images["photos/cat.jpg"].type == "JPEG"
    assert catalog.images["anim.gif"].type == "GIF" and catalog.images["shot.webp"].type == "WEBP"
    assert catalog.images["plan.png"].problems == ("duplicate of copy.png",)  # copy.png sorts first
    assert catalog.images["broken.png"].problems[0].startswith("unreadable")
    problems = catalog.all_problems()
    assert any("line 3: missing.png is not an image of the folder" in p for p in problems)
    assert any("line 4: invalid JSON" in p for p in problems)
    assert catalog.size("plan.png") == (80, 60) and catalog.size("broken.png") is None


def test_captions_become_passages_carrying_the_image_id_beside_text_documents(tmp_path):
    docs = _folder(tmp_path)
    loaded = load_documents(docs)
    by_id = loaded.passages.set_index("passage_id")
    assert by_id.loc["image:plan.png", "passage"] == "Floor plan of the ground floor"
    assert by_id.loc["image:plan.png", "title"] == "Plan"
    assert by_id.loc["image:photos/cat.jpg", "passage"] == "A cat on a sofa orange cat"
    assert by_id.loc["image:photos/cat.jpg", "source_file"] == "photos/cat.jpg"
    assert "image:broken.png" not in by_id.index  # an unreadable image is not a passage
    assert any("The kitchen" in p for p in loaded.passages["passage"])
    assert not any("unsupported file type" in p for p in loaded.problems)
    assert any(p.startswith("broken.png: unreadable") for p in loaded.problems)
    assert "plan.png" in document_versions(docs)  # a changed image refreshes the knowledge base


def test_images_check_prints_one_line_per_problem_and_fails(tmp_path):
    docs = _folder(tmp_path)
    result = rag_eval("images", "check", str(docs), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("plan.png\tPNG\t80x60\t") for line in lines)
    problems = [line for line in lines if line.startswith("problem: ")]
    assert len(problems) == 4, problems  # missing.png, the bad line, broken.png, the duplicate
    assert lines[-1] == "(5 of 6 images usable; 4 problems)"
    good = tmp_path / "good"
    draw(good / "a.png")
    assert rag_eval("images", "check", str(good), cwd=tmp_path).returncode == 0
    missing = rag_eval("images", "check", str(tmp_path / "nope"), cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.startswith("error: ")


def test_judgement_list_image_labels_are_checked_against_each_image_size(tmp_path):
    import pandas as pd
    import pytest

    from rag_eval_pipeline.data.judgement_file import JudgementFileError, read_judgement_file
    from rag_eval_pipeline.metrics.grounding import boxes_of_json

    docs = _folder(tmp_path)
    loaded = load_documents(docs)
    sizes = {i: s for i in loaded.images.images if (s := loaded.images.size(i)) is not None}
    rows = [
        {
            "id": "q1",
            "question": "Where is the red room?",
            "answer": "top left",
            "gold_images": ["plan.png"],
            "gold_boxes": {"plan.png": [[10, 10, 30, 20], [0, 0, 80, 60]]},
        },
        {"id": "q2", "question": "What is in the kitchen?", "answer": "a table"},
        {"id": "q3", "question": "Which cat?", "answer": "orange", "gold_images": "photos/cat.jpg"},
    ]
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    cases = read_judgement_file(good, loaded.passages, image_sizes=sizes).set_index("qid")
    assert cases.loc["q1", "gold_images"] == ["plan.png"]
    assert boxes_of_json(cases.loc["q1", "gold_boxes"]) == {"plan.png": ((10, 10, 30, 20), (0, 0, 80, 60))}
    assert json.loads(cases.loc["q1", "gold_image_sizes"]) == {"plan.png": [80, 60]}
    assert cases.loc["q2", "gold_images"] == [] and pd.isna(cases.loc["q2", "gold_boxes"])
    assert cases.loc["q3", "gold_images"] == ["photos/cat.jpg"]

    bad_rows = [
        {"question": "a", "answer": "b", "gold_boxes": {"plan.png": [[10, 10, 81, 20]]}},  # past the width
        {"question": "c", "answer": "d", "gold_boxes": {"plan.png": [[30, 10, 10, 20]]}},  # x0 > x1
        {"question": "e", "answer": "f", "gold_images": ["nowhere.png"]},
        {"question": "g", "answer": "h", "gold_boxes": {"broken.png": [[0, 0, 1, 1]]}},
        {"question": "i", "answer": "j", "gold_boxes": {"plan.png": [[0, 0, 1.5, 1]]}},
        {"question": "k", "answer": "l", "gold_images": ["plan.png"]},  # fine
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in bad_rows), encoding="utf-8")
    with pytest.raises(JudgementFileError) as caught:
        read_judgement_file(bad, loaded.passages, image_sizes=sizes)
    problems = caught.value.bare_problems
    assert len(problems) == 5, problems
    assert [p.split(":")[0] for p in problems] == ["line 1", "line 2", "line 3", "line 4", "line 5"]
    assert "not inside its 80x60 pixels" in problems[0]
