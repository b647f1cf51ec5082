"""examples/python/kv_connector.py: its demo runs, and a block corrupted on disk ends the usable
prefix (the serving stack recomputes from there) instead of being loaded."""
import os
import subprocess
import sys

import numpy as np

from conftest import SOURCE_DIR, block_files

EXAMPLE_DIR = os.path.join(SOURCE_DIR, "examples", "python")
sys.path.insert(0, EXAMPLE_DIR)
import kv_connector  # noqa: E402


def test_the_demo_saves_and_loads_identical_pages(tmp_path):
    run = subprocess.run([sys.executable, os.path.join(EXAMPLE_DIR, "kv_connector.py"), str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "saved 6 blocks of 3 token blocks x 2 layers; loaded 6 verified, identical" in run.stdout, run.stdout


def test_a_corrupt_block_ends_the_usable_prefix(tmp_path):
    assert kv_connector.demo(str(tmp_path)) == 0
    connector = kv_connector.KvConnector(str(tmp_path / "client.yaml"), num_layers=2, block_tokens=16, kv_heads=4,
                                         head_dim=32)
    try:
        prompt = np.random.default_rng(7).integers(0, 32000, 3 * 16 + 5)
        keys = connector.block_keys(prompt)
        assert keys == connector.block_keys(prompt[:48]), "the partial last token block has no key"
        # Damage every stored block: the first one loaded already fails its checksum.
        for path in block_files(tmp_path):
            with open(path, "r+b") as f:
                f.write(b"\xff\xff\xff\xff")
        k = np.zeros((8, 16, 4, 32), np.float16)
        v = np.zeros_like(k)
        assert connector.load_layer(0, keys, k, v, [0, 1, 2]) == 0
    finally:
        connector.close()
