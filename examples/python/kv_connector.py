#!/usr/bin/env python3
"""A KV-cache connector skeleton on kvchaos: what the storage connector of an LLM serving stack
(vLLM's KVConnector, SGLang's HiCache storage backend, LMCache's remote backend) does around a block
store, without depending on any of them.

The paged KV cache of one layer is a pair of arrays, K and V, of shape
[num_blocks, block_tokens, kv_heads, head_dim]. One stored block is one (token block, layer): its K
and V pages as two IOVs, saved and loaded in place (no copies) with end-to-end checksums. A token
block's key chains the hashes of every token before it (prefix caching): two requests sharing a
prefix share its blocks.

    connector = KvConnector("client.yaml", num_layers=2, block_tokens=16, kv_heads=8, head_dim=64)
    keys = connector.block_keys(token_ids)               # one per full token block
    connector.save_layer(layer, keys, k_cache, v_cache, pages)    # pages: where each block sits
    hits = connector.load_layer(layer, keys, k_cache, v_cache, pages)  # leading blocks found, verified

Run it as a program for a demo on a temporary store: /usr/bin/python3 examples/python/kv_connector.py
(PYTHONPATH at the kvchaos module: build/default/python, or the install's dist-packages).
"""
import hashlib
import os
import sys
import tempfile

import numpy as np

import kvchaos


class KvConnector:
    def __init__(self, config_path, *, num_layers, block_tokens, kv_heads, head_dim, dtype=np.float16):
        self.client = kvchaos.CacheClient.open(config_path)
        self.num_layers = num_layers
        self.block_tokens = block_tokens
        page_bytes = block_tokens * kv_heads * head_dim * np.dtype(dtype).itemsize
        if self.client.block_size != 2 * page_bytes:
            raise ValueError(f"the store's block_size is {self.client.block_size} bytes; a K and V page pair of this "
                             f"model is {2 * page_bytes}: set block_size (and shard_size) to it")

    def close(self):
        self.client.close()

    def block_keys(self, token_ids):
        """One key per full token block, each binding every token before it."""
        keys, prefix = [], b""
        for start in range(0, len(token_ids) - self.block_tokens + 1, self.block_tokens):
            tokens = np.asarray(token_ids[start:start + self.block_tokens], dtype=np.int64).tobytes()
            prefix = hashlib.sha256(prefix + tokens).digest()
            keys.append(prefix.hex())
        return keys

    def _layer_keys(self, layer, keys):
        return [f"{k}/L{layer}" for k in keys]

    def save_layer(self, layer, keys, k_cache, v_cache, pages):
        """Saves the blocks at `pages` of one layer; returns how many were written now (others were cached)."""
        blocks = [[k_cache[p], v_cache[p]] for p in pages]
        return sum(self.client.save(self._layer_keys(layer, keys), blocks).written)

    def load_layer(self, layer, keys, k_cache, v_cache, pages):
        """Loads one layer's blocks into `pages`; returns how many leading blocks are usable. A block
        that is missing or failed its checksum ends the usable prefix: the serving stack recomputes
        from there (its pages hold garbage and must not be attended to)."""
        result = self.client.load(self._layer_keys(layer, keys), [[k_cache[p], v_cache[p]] for p in pages])
        bad = sorted(set(result.missing) | set(result.faulty) | set(result.layout_mismatch))
        for event in result.mismatches:
            print(f"kv_connector: checksum mismatch of {event['key']} ({event['algo']}, stage {event['stage']})",
                  file=sys.stderr)
        return bad[0] if bad else len(keys)


def demo(workdir):
    """Saves two layers of a prompt's KV pages and loads them into a fresh cache."""
    block_tokens, kv_heads, head_dim, layers = 16, 4, 32, 2
    block_bytes = 2 * block_tokens * kv_heads * head_dim * 2
    for p in ("p0", "p1"):
        os.makedirs(os.path.join(workdir, p), exist_ok=True)
    config = os.path.join(workdir, "client.yaml")
    with open(config, "w") as f:
        f.write(f'storage_backends: "{workdir}/p0:{workdir}/p1"\n'
                f"block_size: {block_bytes}\nshard_size: {block_bytes}\ntensor_size: {block_bytes}\n"
                f"meta:\n  storage: demo\n  indexer: local://{workdir}/meta.json\n"
                "  register: {checksum: crc64_full}\n")
    connector = KvConnector(config, num_layers=layers, block_tokens=block_tokens, kv_heads=kv_heads,
                            head_dim=head_dim)
    try:
        rng = np.random.default_rng(7)
        shape = (8, block_tokens, kv_heads, head_dim)  # 8 pages per layer in the paged cache
        prompt = rng.integers(0, 32000, 3 * block_tokens + 5)  # 3 full token blocks
        keys = connector.block_keys(prompt)
        pages = [5, 1, 6]  # where the prompt's blocks sit in the paged cache
        cache = [(rng.standard_normal(shape).astype(np.float16), rng.standard_normal(shape).astype(np.float16))
                 for _ in range(layers)]
        written = sum(connector.save_layer(layer, keys, k, v, pages) for layer, (k, v) in enumerate(cache))

        fresh = [(np.zeros(shape, np.float16), np.zeros(shape, np.float16)) for _ in range(layers)]
        new_pages = [0, 2, 3]
        hits = [connector.load_layer(layer, keys, k, v, new_pages) for layer, (k, v) in enumerate(fresh)]
        same = all(np.array_equal(fresh[layer][i][new], cache[layer][i][old])
                   for layer in range(layers) for i in (0, 1) for old, new in zip(pages, new_pages))
        print(f"kv_connector: saved {written} blocks of {len(keys)} token blocks x {layers} layers; "
              f"loaded {sum(hits)} verified, {'identical' if same else 'DIFFERENT'}")
        return 0 if same and hits == [len(keys)] * layers else 1
    finally:
        connector.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="kv_connector.") as tmp:
        sys.exit(demo(sys.argv[1] if len(sys.argv) > 1 else tmp))
