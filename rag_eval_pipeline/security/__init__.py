"""Security probes: planted instructions (injection), planted false answers (poisoning) and
requests to leak a secret through a URL (exfiltration), run on an attacked copy of the knowledge
base over the team's own cases, and measured per attack, language and model."""
