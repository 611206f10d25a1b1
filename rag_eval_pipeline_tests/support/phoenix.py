"""Reading back what a real Phoenix ingested, for tests that exported spans to it."""

import json
import time
import urllib.error
import urllib.request


def phoenix_root_spans(url: str, project: str, expected: int, timeout_s: float = 120) -> list[dict]:
    """The project's root spans, once Phoenix has ingested all ``expected`` of them (it writes
    what the exporter sent in the background); fewer after ``timeout_s``, for the caller's
    assertion to name."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(
                f"{url}/v1/projects/{project}/spans?limit=1000", timeout=30
            ) as response:
                roots = [s for s in json.loads(response.read())["data"] if not s.get("parent_id")]
        except urllib.error.HTTPError as err:
            if err.code != 404:
                raise
            roots = []  # the project is made when its first span is written
        if len(roots) >= expected or time.monotonic() > deadline:
            return roots
        time.sleep(0.5)  # Phoenix is still writing the spans it received
