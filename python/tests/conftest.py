"""Fixtures of the kvchaos Python tests: a store of two backend paths in a temp dir, client configs
over it, and a metadata node (the `kvchaos` binary, memory coordination, free ports) that is
always stopped, even when a test fails. CTest runs these with PYTHONPATH at the built module and
KVCHAOS_CLI / KVCHAOS_SOURCE_DIR set (python/CMakeLists.txt)."""
import json
import os
import subprocess
import sys
import time

import pytest

import kvchaos

BLOCK_SIZE = 64 * 1024
SOURCE_DIR = os.environ.get("KVCHAOS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def store_keys(tmp_path, block_size=BLOCK_SIZE):
    """The store keys of a config with two backend paths under tmp_path."""
    paths = [tmp_path / "p0", tmp_path / "p1"]
    for p in paths:
        p.mkdir(exist_ok=True)
    size = f"{block_size // 1024}KiB"
    return (f'storage_backends: "{paths[0]}:{paths[1]}"\n'
            f"block_size: {size}\nshard_size: {size}\ntensor_size: {size}\n")


@pytest.fixture
def client_yaml(tmp_path):
    """A client config over an in-process meta service (a local index file), crc64_full."""
    return store_keys(tmp_path) + (
        "meta:\n"
        "  storage: local\n"
        f"  indexer: local://{tmp_path / 'meta.json'}\n"
        "  register: {checksum: crc64_full}\n")


@pytest.fixture
def client(client_yaml):
    with kvchaos.CacheClient.from_yaml(client_yaml, "client.yaml") as c:
        yield c


@pytest.fixture
def node(tmp_path):
    """One metadata node; yields {"meta": "127.0.0.1:P", "admin": "127.0.0.1:Q", "node_id": ...}."""
    cli = os.environ.get("KVCHAOS_CLI")
    if not cli:
        pytest.fail("KVCHAOS_CLI is not set: run these tests through ctest (python/CMakeLists.txt)")
    config = tmp_path / "node.yaml"
    config.write_text(
        "kvcm:\n"
        "  coordination: {uri: 'memory://'}\n"
        "  leader_elector: {node_id: py-node, lease_ms: 2000, loop_interval_ms: 50}\n"
        "  service: {listen_host: 127.0.0.1, meta_http_port: 0, admin_http_port: 0}\n"
        "  meta: {indexer_uri: 'memory://'}\n")
    proc = subprocess.Popen([cli, "node", "--config", str(config)], stdout=subprocess.PIPE,
                            stderr=sys.stderr, text=True, env=dict(os.environ, KVCHAOS_LOG="warn"))
    try:
        line = proc.stdout.readline()
        if not line:
            pytest.fail(f"kvchaos node exited with {proc.wait()} before it was up")
        up = json.loads(line)
        assert up["event"] == "up", f"first line of kvchaos node is not its 'up' event: {line!r}"
        wait_until_leading(f"127.0.0.1:{up['admin_http_port']}")
        yield {"meta": f"127.0.0.1:{up['meta_http_port']}", "admin": f"127.0.0.1:{up['admin_http_port']}",
               "node_id": up["node_id"]}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_until_leading(admin):
    """Until the node has won its first term (a busy machine may take a while: bounded by attempts,
    not asserted on time)."""
    for _ in range(1200):
        if kvchaos.cluster_info(admin).get("is_leader"):
            return
        time.sleep(0.05)
    pytest.fail(f"the node at {admin} did not become leader")


def block_files(tmp_path):
    """Every block file the store wrote under tmp_path's backend paths."""
    out = []
    for p in ("p0", "p1"):
        for root, _, files in os.walk(tmp_path / p):
            out.extend(os.path.join(root, f) for f in files)
    return sorted(out)
