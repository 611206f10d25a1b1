"""Two CI runs on one machine: each checkout's .ci/elasticsearch.sh starts its own node in a
fresh folder on free ports, and stopping one never stops the other."""

import shutil
import subprocess
from pathlib import Path

import pytest
from elasticsearch import ConnectionError, Elasticsearch

pytestmark = pytest.mark.slow  # two Elasticsearch nodes started by the CI script


SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "elasticsearch.sh"


def _checkout(root: Path) -> Path:
    (root / ".ci").mkdir(parents=True)
    shutil.copy(SCRIPT, root / ".ci" / "elasticsearch.sh")
    return root / ".ci" / "elasticsearch.sh"


def _start(script: Path) -> str:
    result = subprocess.run(["bash", str(script), "start"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


def test_two_checkouts_get_two_nodes_and_stop_only_their_own(tmp_path, es_url):
    first, second = _checkout(tmp_path / "a"), _checkout(tmp_path / "b")
    try:
        url_a, url_b = _start(first), _start(second)
        assert url_a != url_b and es_url not in (url_a, url_b)  # free ports, not the suite's node
        state_a = (tmp_path / "a" / ".ci" / "elasticsearch" / "state").read_text()
        state_b = (tmp_path / "b" / ".ci" / "elasticsearch" / "state").read_text()
        assert state_a.splitlines()[0] != state_b.splitlines()[0]  # fresh state folders
        subprocess.run(["bash", str(first), "stop"], check=True, timeout=120)
        assert Elasticsearch(url_b, request_timeout=5).cluster.health()["status"] in ("green", "yellow")
        assert Elasticsearch(es_url, request_timeout=5).cluster.health()  # the suite's node too
        with pytest.raises(ConnectionError):  # the stopped node no longer answers
            Elasticsearch(url_a, request_timeout=2, max_retries=0).cluster.health()
        assert list((tmp_path / "a" / ".ci" / "elasticsearch" / "logs").glob("*.log"))  # kept in the checkout
    finally:
        for script in (first, second):
            subprocess.run(["bash", str(script), "stop"], timeout=120)
