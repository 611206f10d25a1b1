"""Case shards: one answer model's cases split into N parts that N workers answer and judge at
once. A case's shard depends on its id alone, so it is the same in every run, on every machine,
whatever the order or size of the judgement list."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import pandas as pd

MAX_SHARDS = 256
_KEY = re.compile(r"^(\d+)of(\d+)$")


class ShardKeyError(ValueError):
    """A shard key that is not ``<number>of<count>`` with 1 <= number <= count <= MAX_SHARDS."""


@dataclass(frozen=True)
class CaseShard:
    number: int  # 1-based, as said to people: shard 2 of 4
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_SHARDS or not 1 <= self.number <= self.count:
            raise ShardKeyError(
                f"shard {self.number} of {self.count}: needs 1 <= number <= count <= {MAX_SHARDS}"
            )

    @property
    def key(self) -> str:
        """The partition key: ``2of4`` (no separator Dagster's multi-partition keys use)."""
        return f"{self.number}of{self.count}"

    @classmethod
    def parse(cls, key: str) -> CaseShard:
        match = _KEY.match(key)
        if match is None:
            raise ShardKeyError(f"shard key {key!r} is not <number>of<count> (2of4, say)")
        return cls(int(match.group(1)), int(match.group(2)))

    def holds(self, case_id: str) -> bool:
        return shard_of(case_id, self.count) == self.number


def shard_of(case_id: str, count: int) -> int:
    """The 1-based shard of a case: a hash of its id (stable across processes, unlike hash())."""
    digest = hashlib.blake2b(str(case_id).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count + 1


def all_shards(count: int) -> list[CaseShard]:
    return [CaseShard(number, count) for number in range(1, count + 1)]


def cases_of(judgement_list: pd.DataFrame, shard: CaseShard, id_column: str = "qid") -> pd.DataFrame:
    """The shard's rows of a judgement list, in the list's order."""
    held = judgement_list[id_column].astype(str).map(shard.holds).astype(bool)
    return judgement_list.loc[held]
