"""Scenario runs from Python: the result dicts of `kvchaos run --out`, for suites that assert on them."""
import os
import subprocess
import sys

import pytest

import kvchaos
from conftest import SOURCE_DIR

# A `mode: both` file: these tests run its sim copy (the real one needs nodes, Redis and minutes).
ROLLING = os.path.join(SOURCE_DIR, "scenarios", "ci", "rolling-restart.yaml")


def test_run_scenario_returns_the_result_dict():
    result = kvchaos.run_scenario(ROLLING, seed=3, mode="sim")
    assert result["format"] == "kvchaos-result/1"
    assert result["passed"] is True, result["verdicts"]
    assert result["seed"] == 3 and result["mode"] == "sim"
    assert result["counters"]["failovers"] >= 1
    assert result["counters"]["corrupt_reads_returned"] == 0


def test_a_seed_replays_to_the_same_trace():
    first = kvchaos.run_scenario(ROLLING, seed=5, mode="sim")
    assert first["trace_hash"] == kvchaos.run_scenario(ROLLING, seed=5, mode="sim")["trace_hash"]


def test_shards_split_a_seed_range():
    seeds = lambda results: sorted(r["seed"] for r in results)  # noqa: E731
    first = kvchaos.run([ROLLING], seeds="1..3", shard="1/2", mode="sim")
    second = kvchaos.run([ROLLING], seeds="1..3", shard="2/2", jobs=2, mode="sim")
    assert sorted(seeds(first) + seeds(second)) == [1, 2, 3], "the two shards together run each seed once"
    assert len(first) == 2 and len(second) == 1, "round-robin: shard sizes differ by at most one"


def test_bad_arguments_raise_before_anything_runs():
    with pytest.raises(kvchaos.Error) as e:
        kvchaos.run([ROLLING], shard="3/2")
    assert e.value.code == "InvalidArgument"
    with pytest.raises(kvchaos.Error) as e:
        kvchaos.run_scenario(os.path.join(SOURCE_DIR, "no-such.yaml"))
    assert "no-such.yaml" in e.value.message


def test_runs_are_quiet_unless_kvchaos_log_asks():
    # As `kvchaos run`: simulated elections would drown a test's output.
    code = f"import kvchaos; kvchaos.run_scenario({ROLLING!r}, seed=2, mode='sim')"
    env = {k: v for k, v in os.environ.items() if k != "KVCHAOS_LOG"}
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == "", quiet.stderr[:2000]
    loud = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(env, KVCHAOS_LOG="info"), timeout=60)
    assert "won term" in loud.stderr, "KVCHAOS_LOG=info shows the elections"
