"""A model's cases split into shards: every case in exactly one shard, the same one whatever the
list's order or the process, and shard keys that read back."""

import subprocess
import sys

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_eval_pipeline.data.case_shards import CaseShard, ShardKeyError, all_shards, cases_of, shard_of


@given(st.lists(st.text(min_size=1, max_size=12), unique=True, max_size=60), st.integers(1, 9))
def test_every_case_is_in_exactly_one_shard_whatever_the_order(ids, count):
    cases = pd.DataFrame({"qid": ids, "question": [f"q {i}" for i in range(len(ids))]})
    parts = [cases_of(cases, shard) for shard in all_shards(count)]
    assert sorted(q for part in parts for q in part["qid"]) == sorted(ids)
    reversed_parts = [cases_of(cases.iloc[::-1], shard) for shard in all_shards(count)]
    assert [set(p["qid"]) for p in parts] == [set(p["qid"]) for p in reversed_parts]


def test_a_case_has_the_same_shard_in_another_process():
    ids = [f"5a8b57f25542995d1e6f1371-{n}" for n in range(40)]
    here = [shard_of(i, 4) for i in ids]
    code = (
        f"from rag_eval_pipeline.data.case_shards import shard_of\nprint([shard_of(i, 4) for i in {ids!r}])"
    )
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert str(here) == there.strip() and set(here) == {1, 2, 3, 4}


def test_shard_keys_read_back_and_bad_ones_are_named():
    assert CaseShard.parse("2of4") == CaseShard(2, 4) and CaseShard(2, 4).key == "2of4"
    for bad in ("5of4", "0of2", "2/4", "of", "1of300"):
        with pytest.raises(ShardKeyError):
            CaseShard.parse(bad)
