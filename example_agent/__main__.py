"""The example agent from the command line:

python -m example_agent [serve] [--port 8080] [--latency 0.5]   # over HTTP until Ctrl-C
python -m example_agent export answers.jsonl [--n 35]            # its answers, as a log export
python -m example_agent traffic logs/ [--days 3] [--per-day 40]  # days of production logs
"""

import argparse
import datetime as dt
import json
import os
import threading
from pathlib import Path

from example_agent.agent import DEFAULT_DATA, answer, default_agent
from example_agent.server import serve

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
commands = parser.add_subparsers(dest="command")
served = commands.add_parser("serve", help="the agent over HTTP (the default)")
exported = commands.add_parser("export", help="its answers to the first N questions, as JSONL")
exported.add_argument("path")
exported.add_argument("--n", type=int, default=35)
traffic = commands.add_parser(
    "traffic", help="days of its production traffic as interaction logs, one JSONL file a day"
)
traffic.add_argument("folder")
traffic.add_argument("--days", type=int, default=3, help="days ending 2026-11-29")
traffic.add_argument("--per-day", type=int, default=60)
traffic.add_argument("--canary", type=float, default=1 / 3, help="share served by build v4 (buggy)")
for options in (parser, served):
    options.add_argument("--port", type=int, default=8080)
    options.add_argument("--latency", type=float, default=0.0, help="seconds each answer takes")
    options.add_argument("--hang", type=float, default=30.0, help="seconds a 'hang' fault holds its request")
    options.add_argument(
        "--traced", action="store_true", help="a traceparent response header, as an instrumented agent sends"
    )
args = parser.parse_args()

if args.command == "traffic":
    data = Path(os.environ.get("EXAMPLE_AGENT_DATA", str(DEFAULT_DATA)))
    questions = [json.loads(line)["question"] for line in data.read_text(encoding="utf-8").splitlines()]
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    last = dt.date(2026, 11, 29)
    for offset in range(args.days):
        day = last - dt.timedelta(days=args.days - 1 - offset)
        with open(folder / f"{day}.jsonl", "w") as out:
            for n in range(args.per_day):
                question = questions[(offset * args.per_day + n) % len(questions)]
                # the canary build v4 goes live on the second day, for a share of the traffic
                canary = offset > 0 and (n % round(1 / args.canary) == 0 if args.canary else False)
                reply = default_agent().reply(question, buggy=canary)
                out.write(
                    json.dumps(
                        {
                            "ts": f"{day}T{8 + n * 12 // args.per_day:02d}:{(n * 37) % 60:02d}:00Z",
                            "session": f"s-{day}-{n}",
                            "request": {"query": question},
                            "reply": {"text": reply["answer"]},
                            "retrieved": [
                                {"doc": {"id": i, "title": t, "body": text}}
                                for text, i, t in zip(
                                    reply["contexts"], reply["context_ids"], reply["context_titles"]
                                )
                            ],
                            "build": "v4" if canary else "v3",
                            "feedback": "down" if n % 9 == 0 else None,
                        }
                    )
                    + "\n"
                )
    print(f"{args.days} days of {args.per_day} interactions written to {folder}")
elif args.command == "export":
    data = Path(os.environ.get("EXAMPLE_AGENT_DATA", str(DEFAULT_DATA)))
    with open(args.path, "w") as out:
        for line in data.read_text(encoding="utf-8").splitlines()[: args.n]:
            row = json.loads(line)
            reply = answer(row["question"])
            sources = [
                {"content": t, "source": s} for t, s in zip(reply["contexts"], reply["context_titles"])
            ]
            out.write(
                json.dumps(
                    {
                        "id": row["id"],
                        "user_query": row["question"],
                        "response": reply["answer"],
                        "retrieved": sources,
                        "cites": [reply["context_titles"][n - 1] for n in reply["citations"]],
                    }
                )
                + "\n"
            )
    print(f"{args.n} answers written to {args.path}")
else:
    server = serve(args.port, args.latency, args.hang, traced=args.traced)
    print(f"example agent at http://127.0.0.1:{server.server_address[1]}/chat", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()
