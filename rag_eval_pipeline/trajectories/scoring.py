"""A session's tool calls against its task's expected calls, and pass^k over a task's trials.
Per-session scoring is separate from aggregation (``trajectories.summary``). Definitions, as
docs/judges-and-statistics.md states them:

- a call *matches* an expected call when the names are equal and the arguments satisfy the
  expected call's rule (exact: the same canonical JSON; subset: every expected key with an equal
  value; ignore: any);
- ``matched`` is the largest one-to-one pairing of made and expected calls (all turns together);
- ``tool_call_f1`` = 2 matched / (made + expected), 1 when both are empty;
- ``match_unordered``: matched = made = expected; ``match_subset``: matched = made (every call made
  was expected, counts included); ``match_superset``: matched = expected;
- ``match_strict``: the calls in order (turns in order, calls by start) match the expected list
  position by position; calls that ran in parallel (overlapping in time) may match their
  positions in any order among themselves.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rag_eval_pipeline.trajectories.reference import ArgMatch, ExpectedCall, MatchMode, Task
from rag_eval_pipeline.trajectories.sessions import Session, ToolCall

MATCH_METRICS = ("match_strict", "match_unordered", "match_subset", "match_superset")
TRAJECTORY_METRICS = ("tool_call_f1", *MATCH_METRICS)
EFFICIENCY_METRICS = ("steps", "repeated_calls", "tool_error_rate", "forbidden_calls")


def _subset(expected: Any, made: Any) -> bool:
    """Every expected key with an equal value, recursively through objects; other values equal."""
    if isinstance(expected, dict):
        return isinstance(made, dict) and all(k in made and _subset(v, made[k]) for k, v in expected.items())
    return expected == made


def call_matches(made: ToolCall, expected: ExpectedCall, made_arguments: Any) -> bool:
    if made.name != expected.name:
        return False
    if expected.arg_match is ArgMatch.IGNORE:
        return True
    if expected.arg_match is ArgMatch.SUBSET:
        return _subset(expected.arguments, made_arguments)
    return made.arguments == expected.canonical_arguments


def _arguments(call: ToolCall) -> Any:
    import json

    return json.loads(call.arguments)


def matched_pairs(made: Sequence[ToolCall], expected: Sequence[ExpectedCall]) -> int:
    """The size of the largest one-to-one pairing of made calls with expected calls they match
    (a maximum bipartite matching: a greedy pairing undercounts when rules overlap)."""
    if not made or not expected:
        return 0
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    decoded = [_arguments(c) for c in made]
    edges = np.array(
        [[call_matches(m, e, a) for e in expected] for m, a in zip(made, decoded)], dtype=np.int8
    )
    if not edges.any():
        return 0
    pairing = maximum_bipartite_matching(csr_matrix(edges), perm_type="column")
    return int((pairing >= 0).sum())


def parallel_groups(calls: Sequence[ToolCall]) -> list[list[ToolCall]]:
    """Calls in start order, grouped where they overlap in time (ran in parallel)."""
    groups: list[list[ToolCall]] = []
    end = -math.inf
    for call in calls:
        if groups and call.start < end:
            groups[-1].append(call)
            end = max(end, call.end)
        else:
            groups.append([call])
            end = call.end
    return groups


def strict_match(session: Session, expected: Sequence[ExpectedCall]) -> bool:
    made = session.tool_calls
    if len(made) != len(expected):
        return False
    position = 0
    for turn in session.turns:
        for group in parallel_groups(turn.tool_calls):
            slice_ = expected[position : position + len(group)]
            if matched_pairs(group, slice_) != len(group):
                return False
            position += len(group)
    return True


@dataclass(frozen=True)
class SessionScore:
    """A session's figures against its task (``None``: not measurable, never 0)."""

    tool_call_f1: float
    tool_call_precision: float | None
    tool_call_recall: float | None
    match_strict: bool
    match_unordered: bool
    match_subset: bool
    match_superset: bool
    steps: int
    repeated_calls: int
    tool_error_rate: float | None
    forbidden_calls: int
    made: int
    expected: int
    matched: int

    def succeeded(self, mode: MatchMode) -> bool:
        return bool(getattr(self, f"match_{mode.value}"))


def score_session(session: Session, task: Task) -> SessionScore:
    """The session's calls (all turns) against the task's expected calls."""
    made = session.tool_calls
    expected = task.expected_calls
    matched = matched_pairs(made, expected)
    total = len(made) + len(expected)
    errors = sum(call.error is not None for call in made)
    return SessionScore(
        tool_call_f1=1.0 if total == 0 else 2 * matched / total,
        tool_call_precision=matched / len(made) if made else None,
        tool_call_recall=matched / len(expected) if expected else None,
        match_strict=strict_match(session, expected),
        match_unordered=matched == len(made) == len(expected),
        match_subset=matched == len(made),
        match_superset=matched == len(expected),
        steps=len(made),
        repeated_calls=len(made) - len({c.key for c in made}),
        tool_error_rate=errors / len(made) if made else None,
        forbidden_calls=sum(c.name in task.forbidden_tools for c in made),
        made=len(made),
        expected=len(expected),
        matched=matched,
    )


def pass_hat_k(successes: int, trials: int, k: int) -> float:
    """tau-bench's pass^k for one task: the chance that k trials drawn without replacement from
    its n all succeed, C(c, k) / C(n, k); needs 1 <= k <= n."""
    if not 1 <= k <= trials:
        raise ValueError(f"pass^{k} needs 1 <= k <= n = {trials}")
    return math.comb(successes, k) / math.comb(trials, k)


def task_pass_hat_k(outcomes: Iterable[tuple[int, int]], k: int) -> list[float]:
    """pass^k of each task (successes, trials) that has at least k trials."""
    return [pass_hat_k(c, n, k) for c, n in outcomes if n >= k]
