"""The daily sample: seeded, uniform, proportional to each agent version's traffic, filtered,
and stable under late rows (bottom-k by a hash of seed, day and id)."""

import collections

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_eval_pipeline.production.sampling import allocation, draw_sample, filtered
from rag_eval_pipeline.production.settings import ProductionFilters


def _interactions(count: int, versions: tuple[str, ...] = ("v1",), start: int = 0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "interaction_id": [f"i{n:05d}" for n in range(start, start + count)],
            "agent_version": [versions[n % len(versions)] for n in range(start, start + count)],
            "user_feedback": ["down" if n % 5 == 0 else None for n in range(start, start + count)],
            "metadata": [
                '{"channel": "web"}' if n % 2 else '{"channel": "app"}' for n in range(start, start + count)
            ],
        }
    )


def test_the_same_seed_draws_the_same_sample_and_another_seed_another():
    day = _interactions(500)
    first = draw_sample(day, "2026-11-27", 50, seed=7)
    assert list(first["interaction_id"]) == list(
        draw_sample(day.sample(frac=1, random_state=3), "2026-11-27", 50, 7)["interaction_id"]
    )
    other = draw_sample(day, "2026-11-27", 50, seed=8)
    assert len(first) == len(other) == 50 and set(first["interaction_id"]) != set(other["interaction_id"])
    assert set(draw_sample(day, "2026-11-28", 50, 7)["interaction_id"]) != set(
        first["interaction_id"]
    )  # per day


def test_late_rows_displace_only_what_they_outrank():
    day = _interactions(300)
    before = draw_sample(day, "2026-11-27", 50, seed=1)
    late = pd.concat([day, _interactions(30, start=300)], ignore_index=True)
    after = draw_sample(late, "2026-11-27", 50, seed=1)
    kept = set(before["interaction_id"]) & set(after["interaction_id"])
    entered = set(after["interaction_id"]) - set(before["interaction_id"])
    assert entered <= set(_interactions(30, start=300)["interaction_id"])  # only late rows come in
    assert len(kept) == 50 - len(entered) and len(entered) < 15  # about 30/330 of the sample


@pytest.mark.slow  # over 10 s: a whole run or a module fixture of its own (CI runs it)
def test_a_uniform_sample_over_many_seeds():
    """Each interaction is drawn about n/N of the time: no position or id is favoured."""
    day = _interactions(40)
    draws = 1000  # seeded: the same counts on every run
    counts = collections.Counter(
        i for seed in range(draws) for i in draw_sample(day, "d", 10, seed)["interaction_id"]
    )
    shares = [counts[i] / draws for i in day["interaction_id"]]
    assert min(shares) > 0.2 and max(shares) < 0.3  # 0.25 each: binomial sd about 0.014


def test_versions_sampled_in_proportion_to_their_traffic():
    day = pd.concat([_interactions(900, ("v1",)), _interactions(100, ("v2",), start=900)], ignore_index=True)
    sample = draw_sample(day, "2026-11-27", 50, seed=0)
    assert sample["agent_version"].value_counts().to_dict() == {"v1": 45, "v2": 5}
    assert set(sample["stratum_size"]) == {900, 100} and set(sample["population"]) == {1000}
    unstratified = draw_sample(day, "2026-11-27", 50, seed=0, stratify=False)
    assert len(unstratified) == 50 and set(unstratified["stratum_size"]) == {1000}


@given(
    st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 400), min_size=1),
    st.integers(1, 300),
)
def test_allocation_is_proportional_and_whole(sizes, n):
    counts = allocation(sizes, n)
    assert sum(counts.values()) == min(n, sum(sizes.values()))
    total = sum(sizes.values())
    for key, count in counts.items():
        assert 0 <= count <= sizes[key]
        if total > n:  # largest remainder: within one case of the exact share
            assert abs(count - n * sizes[key] / total) < 1


def test_filters_keep_versions_feedback_and_metadata():
    day = _interactions(20, ("v1", "v2"))
    assert set(filtered(day, ProductionFilters(agent_versions=["v2"]))["agent_version"]) == {"v2"}
    assert set(filtered(day, ProductionFilters(user_feedback=["down"]))["user_feedback"]) == {"down"}
    web = filtered(day, ProductionFilters(metadata={"channel": "web"}))
    assert len(web) == 10 and all('"web"' in m for m in web["metadata"])
    assert len(filtered(day, ProductionFilters())) == 20


def test_an_empty_day_is_an_empty_sample():
    assert draw_sample(_interactions(0), "d", 50, 0).empty
