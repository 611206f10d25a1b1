"""The example agent from the command line:

python -m example_agent [serve] [--port 8080] [--latency 0.5]   # over HTTP until Ctrl-C
python -m example_agent export answers.jsonl [--n 35]            # its answers, as a log export
"""

import argparse
import json
import os
import threading
from pathlib import Path

from example_agent.agent import DEFAULT_DATA, answer
from example_agent.server import serve

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
commands = parser.add_subparsers(dest="command")
served = commands.add_parser("serve", help="the agent over HTTP (the default)")
exported = commands.add_parser("export", help="its answers to the first N questions, as JSONL")
exported.add_argument("path")
exported.add_argument("--n", type=int, default=35)
for options in (parser, served):
    options.add_argument("--port", type=int, default=8080)
    options.add_argument("--latency", type=float, default=0.0, help="seconds each answer takes")
    options.add_argument("--hang", type=float, default=30.0, help="seconds a 'hang' fault holds its request")
args = parser.parse_args()

if args.command == "export":
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
                    }
                )
                + "\n"
            )
    print(f"{args.n} answers written to {args.path}")
else:
    server = serve(args.port, args.latency, args.hang)
    print(f"example agent at http://127.0.0.1:{server.server_address[1]}/chat", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()
