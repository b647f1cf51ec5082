"""The cluster from Python, against one `kvchaos node` on loopback: cluster_info, LeaderDiscovery
and a CacheClient whose meta is the node (meta.nodes)."""
import pytest

import kvchaos
from conftest import BLOCK_SIZE, store_keys


def test_cluster_info_names_the_leader(node):
    discovery = kvchaos.LeaderDiscovery([node["admin"]])
    leader = discovery.leader()
    assert leader == node["meta"], "the only node leads; its meta port is the leader endpoint"
    info = kvchaos.cluster_info(node["admin"])
    assert info["self_id"] == node["node_id"] and info["leader_id"] == node["node_id"], info
    assert info["is_leader"] is True and info["fencing_token"] >= 1, "the admin port adds the elector's view"
    assert [n["node_id"] for n in info["nodes"]] == [node["node_id"]], info["nodes"]


def test_call_leader_returns_the_answer_as_a_dict(node):
    discovery = kvchaos.LeaderDiscovery([node["meta"]])
    answer = discovery.call_leader("ListStorages")
    assert answer["code"] == "OK" and answer["storages"] == [], answer
    assert discovery.discoveries >= 1


def test_an_unreachable_cluster_is_unavailable():
    discovery = kvchaos.LeaderDiscovery(["127.0.0.1:1"], max_attempts=2, initial_backoff_ms=1, max_backoff_ms=1)
    with pytest.raises(kvchaos.Error) as e:
        discovery.leader()
    assert e.value.code == "Unavailable", str(e.value)


def test_a_client_on_the_node_saves_and_loads(node, tmp_path):
    config = store_keys(tmp_path) + (
        "meta:\n"
        "  storage: nodes\n"
        f"  nodes: ['{node['meta']}']\n"
        "  register: {checksum: crc64_full}\n")
    with kvchaos.CacheClient.from_yaml(config, "client.yaml") as client:
        block = bytearray(b"\x5a" * BLOCK_SIZE)
        assert client.save(["x"], [block]).written == [True]
        out = bytearray(BLOCK_SIZE)
        loaded = client.load(["x"], [out])
        assert loaded.ok and loaded.verified == [True]
        assert out == block
