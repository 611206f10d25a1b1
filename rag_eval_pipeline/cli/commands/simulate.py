"""`simulate`: simulated users talk to the team's agent, scored with pass^k."""

from __future__ import annotations

from rag_eval_pipeline.cli.arguments import positive
from rag_eval_pipeline.cli.commands import Commands, Handler
from rag_eval_pipeline.cli.options import add_fail_on_regression, add_session_output, add_verbose


def register(commands: Commands) -> None:
    simulate = commands.add_parser(
        "simulate",
        help="simulated users talk to your agent over several trials, scored with pass^k",
        description="""Runs every scenario (a user with a goal, scripted or played by an LLM) --trials times
        against --agent, each conversation until the user's ###STOP###, max turns, an agent error or a loop;
        scores each session (task success, the trajectory figures) and prints a table per scenario, pass^k and
        the worst session's transcript. Calls are cached by scenario, trial and turn: a re-run makes none
        unless --rerun. Exit 1 when a threshold fails or a scenario line is refused; 2 on input that cannot be
        used.""",
    )
    simulate.add_argument(
        "--scenarios", metavar="FILE", help="JSONL, a scenario per line (default: simulation.scenarios)"
    )
    simulate.add_argument("--agent", metavar="NAME", help="an http or python entry of answer_models")
    simulate.add_argument("--trials", type=positive, help="conversations per scenario (default 3)")
    simulate.add_argument(
        "--user", metavar="MODEL", help="the LLM playing users without user_turns (claude-haiku-4-5, ...)"
    )
    simulate.add_argument("--judge", metavar="MODEL", help="the LLM answering the scenarios' rubrics")
    simulate.add_argument(
        "--tool-calls", metavar="JSONPATH", help="the tool calls in the agent's reply (name, arguments)"
    )
    simulate.add_argument("--rerun", action="store_true", help="ask the agent and the simulated user again")
    add_session_output(
        simulate,
        "e.g. task_success=0.8 or pass^3=0.5; repeatable (default: simulation.thresholds)",
        judge_flag="--session-judge",
        judges_default="simulation.session_judges",
    )
    simulate.add_argument(
        "--diff",
        metavar="BEFORE",
        help="compare with agent version BEFORE's stored simulation, trial by trial",
    )
    add_fail_on_regression(simulate, "with --diff: exit 1 when this version is significantly worse")
    add_verbose(simulate)
    simulate.set_defaults(handler=Handler("simulate"))
