"""Stored values read once per version of their file, each reader with its own copy."""

import os

import pandas as pd

from rag_eval_pipeline.storage import formats
from rag_eval_pipeline.storage.read_once import ReadOnce


def _reader(path, reads: list):
    def read():
        reads.append(path)
        return formats.read(path, "remedy")

    return read


def test_a_file_is_read_once_until_it_is_written_again(tmp_path):
    path = tmp_path / "scores"
    found = formats.write(pd.DataFrame({"x": [1, 2]}), path, "scores")
    kept, reads = ReadOnce(), []
    first = kept.read(found, _reader(path, reads))
    first.loc[0, "x"] = 99  # a step changing its input changes no other step's
    second = kept.read(found, _reader(path, reads))
    assert reads == [path] and second["x"].tolist() == [1, 2]

    found = formats.write(pd.DataFrame({"x": [3]}), path, "scores")  # a new file renamed over it
    assert kept.read(found, _reader(path, reads))["x"].tolist() == [3] and len(reads) == 2


def test_a_runs_kept_hard_link_is_the_same_version(tmp_path):
    path = tmp_path / "scores"
    found = formats.write({"a": [1]}, path, "scores")
    link = tmp_path / "run-1.json"
    os.link(found, link)
    kept, reads = ReadOnce(), []
    kept.read(found, _reader(path, reads))
    value = kept.read(link, _reader(tmp_path / "run-1", reads))
    value["a"].append(2)  # JSON's lists are copied too
    assert reads == [path] and kept.read(link, _reader(path, reads)) == {"a": [1]}


def test_the_oldest_values_go_past_the_count_and_a_file_over_the_bytes_is_not_kept(tmp_path):
    kept, reads = ReadOnce(kept=2, kept_bytes=20_000), []
    paths = [tmp_path / f"v{n}" for n in range(3)]
    files = [formats.write({"n": n}, path, "v") for n, path in enumerate(paths)]
    for found, path in zip(files, paths):
        kept.read(found, _reader(path, reads))
    assert len(kept) == 2
    kept.read(files[0], _reader(paths[0], reads))  # the first went: read again
    assert reads.count(paths[0]) == 2

    big = tmp_path / "big"
    found = formats.write(pd.DataFrame({"x": [f"case {n}" for n in range(5_000)]}), big, "big")
    assert found.stat().st_size > 20_000
    kept.read(found, _reader(big, reads))
    kept.read(found, _reader(big, reads))
    assert reads.count(big) == 2 and len(kept) == 2


def test_the_same_inode_size_and_time_with_other_bytes_is_another_version(tmp_path):
    path = tmp_path / "scores"
    found = formats.write({"x": 1}, path, "scores")
    kept, reads = ReadOnce(), []
    kept.read(found, _reader(path, reads))
    written = os.stat(found)
    found.write_text(found.read_text().replace("1", "2"))  # in place: same inode and size
    os.utime(found, ns=(written.st_atime_ns, written.st_mtime_ns))  # and the same time
    assert kept.read(found, _reader(path, reads)) == {"x": 2} and len(reads) == 2


def test_a_file_replaced_while_it_is_read_is_not_kept_as_the_old_version(tmp_path):
    path = tmp_path / "scores"
    found = formats.write({"x": 1}, path, "scores")
    history = tmp_path / "run-1.json"
    os.link(found, history)  # the first run's own copy: the old inode

    def replaced_then_read():
        formats.write({"x": 2}, path, "scores")  # another process's run writes meanwhile
        return formats.read(path, "remedy")

    kept = ReadOnce()
    assert kept.read(found, replaced_then_read) == {"x": 2}
    # the first run's copy still reads as what it holds, not as what the latest became
    assert kept.read(history, lambda: formats.read(tmp_path / "run-1", "remedy")) == {"x": 1}
