"""kvchaos.CacheClient against an in-process meta service: save/load with end-to-end checksums on
caller buffers (bytearray, memoryview slices, numpy arrays; blocks of one or several IOVs), the
per-block results, mismatch events after on-disk corruption, and errors as kvchaos.Error."""
import threading

import numpy as np
import pytest

import kvchaos
from conftest import BLOCK_SIZE, block_files


def pattern(seed, size=BLOCK_SIZE):
    return np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)


def test_save_then_load_returns_the_bytes_and_verifies_every_block(client):
    assert client.block_size == BLOCK_SIZE
    keys = ["k0", "k1", "k2"]
    blocks = [bytearray(pattern(i).tobytes()) for i in range(3)]
    saved = client.save(keys, blocks)
    assert saved.written == [True, True, True]
    assert saved.checksums == [kvchaos.crc64_full(b) for b in blocks], "checksums are crc64_full of each block"
    assert client.save(keys, blocks).written == [False, False, False], "a second save finds them cached"

    out = [bytearray(BLOCK_SIZE) for _ in keys]
    loaded = client.load(keys, out)
    assert loaded.ok and loaded.code == "OK", loaded.message
    assert loaded.verified == [True, True, True]
    assert loaded.faulty == [] and loaded.missing == [] and loaded.mismatches == []
    assert out == blocks
    loaded.check()


def test_buffers_are_used_in_place_without_copies(client):
    # One arena, blocks as memoryview slices of it (as a paged KV cache is laid out).
    arena = bytearray(np.concatenate([pattern(10), pattern(11)]).tobytes())
    view = memoryview(arena)
    client.save(["a", "b"], [view[:BLOCK_SIZE], view[BLOCK_SIZE:]])
    target = np.zeros((2, BLOCK_SIZE // 2), dtype=np.float16)  # any dtype: the bytes are what count
    assert client.load(["a", "b"], [target[0], target[1]]).ok
    assert target.tobytes() == bytes(arena), "load wrote into the numpy array itself"


def test_a_block_may_be_several_iovs(client):
    k, v = pattern(20, BLOCK_SIZE // 2), pattern(21, BLOCK_SIZE // 2)
    saved = client.save(["kv"], [[k, v]])
    assert saved.checksums == [kvchaos.crc64_full([k, v])]
    k_out, v_out = np.zeros_like(k), np.zeros_like(v)
    assert client.load(["kv"], [[k_out, v_out]]).ok
    assert (k_out == k).all() and (v_out == v).all()


def test_a_key_not_cached_is_a_miss_in_the_result(client):
    client.save(["here"], [pattern(1)])
    out = [bytearray(BLOCK_SIZE), bytearray(BLOCK_SIZE)]
    loaded = client.load(["here", "absent"], out)
    assert loaded.code == "NotFound"
    assert loaded.missing == [1]
    assert loaded.verified == [True, False]
    with pytest.raises(kvchaos.Error) as e:
        loaded.check()
    assert e.value.code == "NotFound"


def test_corruption_on_disk_is_a_mismatch_event_never_good_data(client, tmp_path):
    client.save(["victim"], [pattern(2)])
    files = block_files(tmp_path)
    assert files, "the store wrote no block file"
    for path in files:
        with open(path, "r+b") as f:
            f.seek(100)
            byte = f.read(1)
            f.seek(100)
            f.write(bytes([byte[0] ^ 0xFF]))
    loaded = client.load(["victim"], [bytearray(BLOCK_SIZE)])
    assert loaded.code == "ChecksumMismatch", loaded.message
    assert loaded.faulty == [0]
    assert len(loaded.mismatches) == 1, loaded.mismatches
    event = loaded.mismatches[0]
    assert event["key"] == "victim" and event["storage"] == "local" and event["algo"] == "crc64_full"
    assert event["expected"] != event["actual"]
    assert client.mismatch_counts() == {"local": 1}


def test_bad_buffers_and_shapes_raise_naming_the_problem(client):
    with pytest.raises(TypeError, match="block 0: a writable C-contiguous buffer is needed"):
        client.load(["k"], [bytes(BLOCK_SIZE)])
    with pytest.raises(kvchaos.Error) as e:
        client.save(["k"], [bytearray(100)])
    assert e.value.code == "InvalidArgument", str(e.value)
    with pytest.raises(TypeError, match="keys"):
        client.save("k", [bytearray(BLOCK_SIZE)])


def test_a_bad_config_names_file_line_and_key(tmp_path):
    with pytest.raises(kvchaos.Error) as e:
        kvchaos.CacheClient.from_yaml("storage_backends: /nowhere\nblock_size: banana\n", "bad.yaml")
    assert e.value.code == "InvalidConfig"
    assert "bad.yaml:2" in e.value.message and "block_size" in e.value.message, e.value.message


def test_threads_share_one_client(client):
    # Each call runs without the GIL; concurrent calls from Python threads all complete correctly.
    errors = []

    def worker(t):
        try:
            keys = [f"t{t}-{i}" for i in range(4)]
            blocks = [pattern(100 * t + i) for i in range(4)]
            assert all(client.save(keys, blocks).written)
            out = [np.zeros(BLOCK_SIZE, dtype=np.uint8) for _ in keys]
            assert client.load(keys, out).ok
            assert all((o == b).all() for o, b in zip(out, blocks))
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_closed_client_refuses_calls(client_yaml):
    c = kvchaos.CacheClient.from_yaml(client_yaml)
    c.close()
    with pytest.raises(kvchaos.Error, match="after close"):
        c.save(["k"], [bytearray(BLOCK_SIZE)])
