"""Prometheus metrics, checked by `promtool check metrics` (Debian's prometheus package): a node's
/metrics on its admin port, and what an embedding service renders for its client and store."""
import shutil
import subprocess
import urllib.request

import pytest

import kvchaos
from conftest import BLOCK_SIZE, block_files, store_keys

PROMTOOL = shutil.which("promtool")


def promtool_check(text):
    if PROMTOOL is None:
        pytest.fail("promtool is not installed (Debian package prometheus, in ci/packages.txt)")
    run = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, f"promtool check metrics:\n{run.stdout}{run.stderr}\n--- metrics ---\n{text}"


def sample(text, line_start):
    """The value of the one sample whose line starts with `line_start` (name and labels)."""
    values = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(line_start + " ")]
    assert len(values) == 1, f"{len(values)} samples '{line_start}' in:\n{text}"
    return values[0]


def scrape(endpoint):
    with urllib.request.urlopen(f"http://{endpoint}/metrics", timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return answer.read().decode()


def test_the_node_serves_metrics_promtool_accepts(node):
    kvchaos.LeaderDiscovery([node["meta"]]).call_leader("ListStorages")  # one meta request to count
    text = scrape(node["admin"])
    promtool_check(text)
    self = f'{{node_id="{node["node_id"]}"}}'
    assert sample(text, "kvchaos_node_is_leader" + self) == 1
    assert sample(text, f'kvchaos_node_elector_state{{node_id="{node["node_id"]}",state="LEADER"}}') == 1
    assert sample(text, "kvchaos_node_fencing_token" + self) >= 1
    assert sample(text, "kvchaos_node_lease_remaining_seconds" + self) > 0
    assert sample(text, "kvchaos_node_leader_terms_total" + self) == 1
    assert sample(text, 'kvchaos_node_requests_total{port="meta",route="ListStorages",status="200"}') == 1
    assert sample(text, 'kvchaos_node_request_duration_seconds_count{port="meta",route="ListStorages"}') == 1
    assert sample(text, 'kvchaos_node_coordination_requests_total{call="TryLock",code="OK"}') >= 1, "it won a term"
    assert sample(text, 'kvchaos_node_coordination_request_duration_seconds_count{call="TryLock"}') >= 1


def test_the_meta_port_has_no_metrics(node):
    with pytest.raises(urllib.error.HTTPError) as e:
        scrape(node["meta"])
    assert e.value.code == 404


def test_client_and_store_metrics_count_mismatches_and_health(client, tmp_path):
    client.save(["k"], [bytearray(BLOCK_SIZE)])
    for path in block_files(tmp_path):
        with open(path, "r+b") as f:
            f.write(b"\x01")
    assert client.load(["k"], [bytearray(BLOCK_SIZE)]).code == "ChecksumMismatch"
    text = client.metrics()
    promtool_check(text)
    assert sample(text, 'kvchaos_client_checksum_mismatches_total{storage="local"}') == 1
    assert sample(text, "kvchaos_store_healthy") == 1
    assert sample(text, f'kvchaos_store_backend_available{{backend="{tmp_path / "p0"}"}}') == 1


def test_store_metrics_alone(tmp_path):
    store = kvchaos.PosixStore.from_yaml(store_keys(tmp_path))
    text = store.metrics()
    promtool_check(text)
    assert sample(text, f'kvchaos_store_backend_transitions_total{{backend="{tmp_path / "p1"}",to="unavailable"}}') == 0
