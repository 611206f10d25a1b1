"""The simulated user: a script (its messages in order) or any configured LLM playing a person
with a goal. The LLM's prompt is a versioned constant: persona, goal and the facts it may
reveal only when asked, and ``###STOP###`` once the goal is reached or cannot be. Each trial
has its own seed, written into the prompt (so trials differ at temperature 0) and into the
cache key with the scenario and the turn (the history): three trials are three conversations,
and a re-run of them asks nothing."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rag_eval_pipeline.language.analysis import analyzer
from rag_eval_pipeline.llm.cache import CachedClient, is_complete
from rag_eval_pipeline.llm.client import LLMRequest
from rag_eval_pipeline.trajectories.simulation.scenarios import Scenario
from rag_eval_pipeline.trajectories.simulation.settings import SCRIPTED

STOP = "###STOP###"
USER_PROMPT_VERSION = "simulated-user-v1"
# a first message holding this share of the goal's content words states the whole goal at once
GOAL_LEAK_SHARE = 0.6
GOAL_LEAK_MIN_WORDS = 3
OPENING = "(The conversation starts. Write your first message to the support agent.)"

USER_PROMPT = """You are playing a user talking to a support agent, to test the agent. Stay in your role.
<persona>{persona}</persona>
<goal>{goal}</goal>
<known_info>{known_info}</known_info>
Rules:
- Start with a short message about your need, in your own words; do not state every detail at once.
- Reveal a fact of known_info only when the agent asks for it; never invent facts you were not given.
- Write one message per turn, as the user would, in {language}.
- When your goal is reached, or the agent clearly cannot reach it, write {stop} at the end of your
  last message (a thank-you before it is kept as your last message).
<variation seed="{seed}">This is conversation {trial}: phrase your messages your own way.</variation>"""


@dataclass(frozen=True)
class Message:
    """One chat message, as the agent receives the history: role user or assistant."""

    role: str
    content: str

    def as_chat(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class UserTurn:
    """What the user says next: the message (possibly empty), whether they stopped, and whether
    a model was asked for it (None: a script) and answered from the cache."""

    text: str
    stopped: bool
    from_cache: bool | None = None
    cut_off: bool = False  # the model's message ended at its token limit, unfinished


def split_stop(text: str) -> UserTurn:
    """A message with ``###STOP###``: the text before the marker is kept, the session ends."""
    if STOP not in text:
        return UserTurn(text.strip(), False)
    return UserTurn(text.split(STOP, 1)[0].strip(), True)


def trial_seed(task_id: str, trial: int) -> int:
    """A trial's seed: fixed by scenario and trial, different between trials."""
    return int(hashlib.sha256(f"{task_id}/{trial}".encode()).hexdigest()[:8], 16)


def leaks_goal(scenario: Scenario, first_message: str) -> bool:
    """Whether the first message restates most of the goal's content words (a user who tells
    everything at once does not test whether the agent asks)."""
    analysis = analyzer(scenario.language)
    goal = set(analysis.terms(scenario.goal))
    if len(goal) < GOAL_LEAK_MIN_WORDS:
        return False
    said = set(analysis.terms(first_message))
    return len(goal & said) / len(goal) >= GOAL_LEAK_SHARE


class SimulatedUser(Protocol):
    """Says the next user message of a conversation, given everything said so far."""

    name: str

    async def next_turn(self, scenario: Scenario, trial: int, history: Sequence[Message]) -> UserTurn: ...


class ScriptedUser:
    """The scenario's ``user_turns`` in order; after the last one the user stops."""

    name = SCRIPTED

    async def next_turn(self, scenario: Scenario, trial: int, history: Sequence[Message]) -> UserTurn:
        said = sum(m.role == "user" for m in history)
        turns = scenario.user_turns or ()
        if said >= len(turns):
            return UserTurn("", True)
        return split_stop(turns[said])


def _known_info(scenario: Scenario) -> str:
    """What the user may reveal: a plain string (tau-bench's form) as written, an object as JSON."""
    if isinstance(scenario.known_info, str):
        return scenario.known_info
    return json.dumps(scenario.known_info, ensure_ascii=False, sort_keys=True)


def user_note(scenarios: Sequence[Scenario], user: str) -> str | None:
    """What a model given as the simulated user plays, said in one line when some scenarios do
    not ask it: a scenario with ``user_turns`` plays its script (the turns its author wrote, the
    same in every trial and run); the model plays the scenarios without. None when it plays all
    of them or no model was given."""
    scripted = [s.task_id for s in scenarios if s.user_turns is not None]
    if user == SCRIPTED or not scripted:
        return None
    named = ", ".join(scripted[:3]) + (f" and {len(scripted) - 3} more" if len(scripted) > 3 else "")
    played = len(scenarios) - len(scripted)
    if not played:
        return (
            f"--user {user} is not asked: every scenario has user_turns ({named}) and plays its script "
            "(leave user_turns out of a scenario for the model to play its user)"
        )
    return (
        f"--user {user} plays the {played} scenario(s) without user_turns; the {len(scripted)} with "
        f"user_turns ({named}) play their script and ask it nothing"
    )


def render_user_request(model: str, scenario: Scenario, trial: int, history: Sequence[Message]) -> LLMRequest:
    """The simulator's call: the versioned prompt as system, the conversation with roles
    swapped (the agent's messages are what the simulator reads, its own what it wrote)."""
    system = USER_PROMPT.format(
        persona=scenario.persona or "a customer",
        goal=scenario.goal,
        known_info=_known_info(scenario),
        language=scenario.language,
        stop=STOP,
        seed=trial_seed(scenario.task_id, trial),
        trial=trial,
    )
    swapped = [{"role": "assistant" if m.role == "user" else "user", "content": m.content} for m in history]
    messages = ({"role": "user", "content": OPENING}, *swapped)
    if messages[-1]["role"] == "assistant":  # cannot happen in a well-formed turn; kept valid anyway
        messages = (*messages, {"role": "user", "content": "(continue)"})
    return LLMRequest(
        model=model, system=system, messages=tuple(messages), max_tokens=300, temperature=0.0, sample=trial
    )


class LLMUser:
    """A model playing the user through any LLM client (cached by the client: the request holds
    the scenario, the trial's seed and the history)."""

    def __init__(self, name: str, client: CachedClient, model_id: str) -> None:
        self.name = name
        self._client = client
        self._model_id = model_id

    async def next_turn(self, scenario: Scenario, trial: int, history: Sequence[Message]) -> UserTurn:
        request = render_user_request(self._model_id, scenario, trial, history)
        # a message cut off is kept (and cached): the conversation ends on it as the simulator's
        # fault, and a re-run ends there again without a call
        response = await self._client.complete(
            request, accept=lambda r: bool(r.text.strip()), cut_off_ok=True
        )
        turn = split_stop(response.text)
        return UserTurn(turn.text, turn.stopped, response.from_cache, not is_complete(response))
