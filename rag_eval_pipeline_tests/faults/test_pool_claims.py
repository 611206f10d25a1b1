"""The instance's pool holds its limit when many calls claim at once. Dagster's own claim takes a
free slot with SELECT ... FOR UPDATE and then UPDATE on an autocommit connection, so two
claimants at once could both take one slot (4 holders of a pool of 2 before the fix); every
claim is now made under the pool's advisory lock."""

import asyncio
import threading

import dagster as dg
import pytest

from rag_eval_pipeline.instance.home import InstanceStorage, prepare_instance
from rag_eval_pipeline.limits.pools import InstancePool

pytestmark = pytest.mark.slow  # 60 claims through PostgreSQL, about 10 s

LIMIT = 2


def test_many_calls_of_two_runs_never_hold_more_slots_than_the_pool_has(postgres_url, tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_PG_URL", postgres_url)
    home = tmp_path / "home"
    prepare_instance(str(home), InstanceStorage("DAGSTER_PG_URL", required=True))
    holding = {"now": 0, "most": 0, "holds": 0}
    turn = threading.Lock()

    async def call(pool: InstancePool) -> None:
        async with pool.hold():
            with turn:
                holding["now"] += 1
                holding["most"] = max(holding["most"], holding["now"])
                holding["holds"] += 1
            await asyncio.sleep(0.05)
            with turn:
                holding["now"] -= 1

    async def two_runs(first: dg.DagsterInstance, second: dg.DagsterInstance) -> None:
        pools = [
            InstancePool(instance, "rag_eval_llm_test", LIMIT, run_id, "llm call")
            for instance, run_id in ((first, "run-a"), (second, "run-b"))
        ]
        await asyncio.gather(*(call(pools[n % 2]) for n in range(60)))

    with (
        dg.DagsterInstance.from_config(str(home)) as first,
        dg.DagsterInstance.from_config(str(home)) as second,
    ):
        asyncio.run(two_runs(first, second))
        info = first.event_log_storage.get_concurrency_info("rag_eval_llm_test")
    assert holding["holds"] == 60 and holding["most"] <= LIMIT
    assert info.slot_count == LIMIT and info.claimed_slots == [] and info.pending_steps == []
