#!/usr/bin/env bash
# The real CI scenarios (scenarios/ci, mode real and both) as CI runs them: fails on any violated
# expectation, or when a `mode: both` file gets different verdicts in the two modes. Exit 77
# (skipped, with the reason) when this machine lacks redis-server or FUSE.
# Usage: real_mode_ci_test.sh KVCHAOS SOURCE_DIR
set -u
kvchaos=$1
src=$2
if ! command -v redis-server >/dev/null && [[ ! -x /usr/bin/redis-server ]]; then
  echo "SKIP: real scenarios need redis-server, which is not installed"; exit 77
fi
if [[ ! -w /dev/fuse ]] || ! command -v fusermount3 >/dev/null; then
  echo "SKIP: real scenarios need FUSE (/dev/fuse and fusermount3), which this machine lacks"; exit 77
fi
out=$(mktemp -d /tmp/kvchaos-ci-real-XXXXXX)
trap 'rm -rf "$out"' EXIT
"$kvchaos" run "$src/scenarios/ci" --mode real --jobs 1 --out "$out/real"
real_status=$?

# The files of `mode: both` are twins: the same timeline in each mode must get the same verdicts.
mapfile -t both < <(grep -l '^mode: both' "$src"/scenarios/ci/*.yaml)
"$kvchaos" run "${both[@]}" --mode sim --seeds 1 --jobs 1 --out "$out/sim" >/dev/null
/usr/bin/python3 - "$out" <<'PY' || real_status=1
import glob, json, os, sys
out = sys.argv[1]
def verdicts(mode):
    runs = {}
    for path in glob.glob(os.path.join(out, mode, "*.json")):
        r = json.load(open(path))
        if r.get("scenario", {}).get("both_modes"):
            runs[r["scenario"]["name"]] = {v["name"]: v for v in r["verdicts"]}
    return runs
real, sim = verdicts("real"), verdicts("sim")
disagree = 0
compared = 0
for name in sorted(set(real) | set(sim)):
    if name not in real or name not in sim:
        print(f"twin {name}: no {'real' if name not in real else 'sim'} result to compare")
        disagree += 1
        continue
    # A verdict only one mode gives (a check the other cannot make) has nothing to agree with.
    for key in sorted(set(real[name]) & set(sim[name])):
        a, b = sim[name][key], real[name][key]
        compared += 1
        if a["passed"] != b["passed"]:
            show = lambda v: ("passed" if v["passed"] else "FAILED") + f" ({v['detail']})"
            print(f"twin {name}: {key} sim {show(a)} but real {show(b)}")
            disagree += 1
# Every real run that saved blocks checked its history of meta calls and wrote it beside the result.
histories, unchecked, longest_ms = 0, 0, 0.0
for path in sorted(glob.glob(os.path.join(out, "real", "*.json"))):
    r = json.load(open(path))
    if r.get("counters", {}).get("saves", 0) == 0:
        continue
    h = r.get("history") or {}
    if not h.get("verdict") or not os.path.exists(os.path.join(out, "real", h.get("file", ""))):
        print(f"{os.path.basename(path)}: saved blocks but has no checked history written beside it: {h}")
        unchecked += 1
        continue
    histories += 1
    longest_ms = max(longest_ms, h.get("check_ms", 0))
print(f"histories: {histories} real run(s) checked, the longest check took {longest_ms:.1f} ms")
print(f"twins: {len(set(real) & set(sim))} scenario(s), {compared} verdict(s) judged in both modes, "
      f"{disagree} disagreement(s)")
sys.exit(1 if disagree or unchecked else 0)
PY
exit $real_status
