"""kvchaos.PosixStore: setup probes each backend path; health() reports every path's state and
window; a path that cannot be used is an error naming it."""
import pytest

import kvchaos
from conftest import BLOCK_SIZE, store_keys


def test_health_lists_every_backend_available(tmp_path):
    store = kvchaos.PosixStore.from_yaml(store_keys(tmp_path), "store.yaml")
    health = store.health()
    assert health["ok"] and health["code"] == "OK", health
    assert [b["path"] for b in health["backends"]] == [str(tmp_path / "p0"), str(tmp_path / "p1")]
    assert all(b["available"] for b in health["backends"])
    assert store.config["block_size"] == BLOCK_SIZE
    store.check_health()


def test_a_missing_backend_path_is_refused_by_name(tmp_path):
    text = store_keys(tmp_path).replace(str(tmp_path / "p1"), str(tmp_path / "absent"))
    with pytest.raises(kvchaos.Error) as e:
        kvchaos.PosixStore.from_yaml(text, "store.yaml")
    assert str(tmp_path / "absent") in e.value.message, str(e.value)


def test_the_client_reports_its_store_health(client):
    health = client.store_health()
    assert health["ok"]
    assert len(health["backends"]) == 2
