"""Writers of one stored value at once (two runs of one home) each replace it with their own
whole file: none fails, and a reader only ever sees a complete one."""

import threading

import pandas as pd
from upath import UPath

from rag_eval_pipeline.storage import formats
from rag_eval_pipeline.storage.snapshots import SnapshotStore


def _at_once(writers: list) -> list[BaseException]:
    failures: list[BaseException] = []
    start = threading.Barrier(len(writers))

    def run(write) -> None:
        start.wait()
        try:
            for _ in range(30):
                write()
        except BaseException as err:  # noqa: BLE001 (what the test reports)
            failures.append(err)

    threads = [threading.Thread(target=run, args=(w,)) for w in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures


def test_two_writers_of_one_asset_each_replace_it_whole(tmp_path):
    path = UPath(tmp_path) / "human_labels"
    frames = [pd.DataFrame({"label": [n] * 2_000}) for n in range(4)]
    failures = _at_once([lambda f=f: formats.write(f, path, "human_labels") for f in frames])
    assert failures == []
    stored = formats.read(path, "remedy")
    assert len(stored) == 2_000 and stored["label"].nunique() == 1  # one writer's, whole
    assert [p.name for p in UPath(tmp_path).iterdir()] == ["human_labels.parquet"]  # no leftovers


def test_two_rebuilds_publishing_at_once_leave_a_readable_live_pointer(tmp_path):
    store = SnapshotStore(UPath(tmp_path))
    runs = [f"run-{n}" for n in range(3)]
    for run in runs:
        store.path("kb_index", run).parent.mkdir(parents=True)
        formats.write({"documents": 1}, store.path("kb_index", run), "kb_index")
    failures = _at_once([lambda r=r: store.publish(r) for r in runs])
    assert failures == []
    assert store.live()["kb_index"] in runs


def test_arrow_columns_are_stored_and_read_back_as_arrow_columns(tmp_path, shared_hotpotqa):
    """The question table's paragraphs stay Arrow columns through the store (pandas alone cannot
    read an Arrow list column back from its own metadata); other tables read back as before."""
    from rag_eval_pipeline.data.hotpotqa import read_hotpotqa_file

    questions = read_hotpotqa_file(shared_hotpotqa).head(50)
    path = UPath(tmp_path) / "hotpotqa_raw"
    formats.write(questions, path, "hotpotqa_raw")
    back = formats.read(path, "remedy")
    assert all(isinstance(dtype, pd.ArrowDtype) for dtype in back.dtypes)
    pd.testing.assert_frame_equal(back, questions, check_dtype=False)
    assert back["context_sentences"].iloc[3] == questions["context_sentences"].iloc[3]
    # and any reader reads the file: plain pandas, with numpy objects
    plain_read = pd.read_parquet(str(path) + ".parquet")
    assert list(plain_read["context_titles"].iloc[3]) == questions["context_titles"].iloc[3]
    # a reader of some columns (the judgement list: not the paragraphs) reads those it has
    part = formats.read(path, "remedy", columns=["qid", "supporting_titles", "in_sample"])
    assert list(part.columns) == ["qid", "supporting_titles"]
    assert part["supporting_titles"].tolist() == questions["supporting_titles"].tolist()

    plain = pd.DataFrame({"qid": ["a", "b"], "values": [[1.0], [0.5, 0.0]]})
    formats.write(plain, path, "table")
    assert not any(isinstance(dtype, pd.ArrowDtype) for dtype in formats.read(path, "remedy").dtypes)
