"""A command's runs share what they read: its three evaluations read the judgement list once and
open the index once, and the comparison reads the scores the evaluations read. Counted, not timed."""

from collections import Counter

from rag_eval_pipeline import cli
from rag_eval_pipeline.retrieval.bm25_index import Bm25Index
from rag_eval_pipeline.storage import formats
from rag_eval_pipeline.storage.read_once import file_version


def test_a_commands_runs_read_each_stored_file_once_and_open_the_index_once(
    tmp_path, shared_hotpotqa, monkeypatch
):
    reads: Counter = Counter()
    names: dict = {}
    read = formats.read

    parts = []

    def counted(path, remedy, columns=None):
        found = formats.stored_file(path)
        if found is not None and columns is None:
            reads[file_version(found)] += 1
            names[file_version(found)] = found.name
        elif found is not None:  # a part of a table: the judgement list's, of the questions
            parts.append((found.name, tuple(columns)))
        return read(path, remedy, columns)

    loads = []
    load = Bm25Index.load.__func__
    monkeypatch.setattr(formats, "read", counted)
    monkeypatch.setattr(
        Bm25Index, "load", classmethod(lambda cls, folder: loads.append(folder) or load(cls, folder))
    )
    arguments = ["--dagster-home", str(tmp_path / "home"), "run", "--dataset", str(shared_hotpotqa)]
    assert cli.main([*arguments, "--sample", "8"]) == 0
    assert len(loads) == 1  # built by the knowledge-base run, opened by the first evaluation
    # five runs read each stored file once together (before: the judgement list 7 times, the
    # index's manifest 5, the passages 4, each model's scores 3 times over two paths); the command
    # itself reads the judgement list again for its case count and the paired table to print it
    twice = sorted(names[version] for version, count in reads.items() if count > 1)
    assert max(reads.values()) == 2 and twice == ["judgement_list.parquet", "paired_comparison.parquet"]
    assert len(reads) > 15  # the knowledge base, three models, the review and the comparison
    assert [(name, "context_sentences" in columns) for name, columns in parts] == [
        ("hotpotqa_raw.parquet", False)
    ]
