#!/usr/bin/env python3
"""Offline checks of the sharded-suite definitions, which cannot run here (no cluster, no Actions
runner): the Kubernetes manifests of deploy/k8s/, the workflow .github/workflows/suite.yml and
deploy/Dockerfile. A real server would validate the manifests' schema (`kubectl apply
--dry-run=server`); this checks what would make a suite silently wrong instead: every manifest a
well-formed object of a known kind; the Indexed Job's completions = parallelism = SHARDS and each pod
running `--shard $((JOB_COMPLETION_INDEX + 1))/$SHARDS` (1-based shards); the volume claims naming
the PVC; the matrix listing shards 1..SHARDS and the merge job needing it and reading every
shard's artifact; every package of the image's runtime stage a Debian package (when apt lists are
present). Usage: check_manifests.py SOURCE_DIR. Exit 0 when all hold; 1 and every problem otherwise."""
import glob
import os
import re
import subprocess
import sys

import yaml

KNOWN_KINDS = {("batch/v1", "Job"), ("v1", "PersistentVolumeClaim")}
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)
    return cond


def env_of(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def check_k8s(src):
    docs = {}
    for path in sorted(glob.glob(os.path.join(src, "deploy", "k8s", "*.yaml"))):
        for doc in yaml.safe_load_all(open(path)):
            name = os.path.relpath(path, src)
            if not check(isinstance(doc, dict), f"{name}: not a mapping"):
                continue
            kind = (doc.get("apiVersion"), doc.get("kind"))
            check(kind in KNOWN_KINDS, f"{name}: unknown apiVersion/kind {kind}")
            check(re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", str(doc.get("metadata", {}).get("name", ""))),
                  f"{name}: metadata.name is not a DNS-1123 label")
            docs[doc["metadata"]["name"]] = (name, doc)
    pvcs = {n for n, (_, d) in docs.items() if d.get("kind") == "PersistentVolumeClaim"}
    suite = docs.get("kvchaos-suite")
    if not check(suite is not None, "deploy/k8s: no Job kvchaos-suite"):
        return
    name, job = suite
    spec = job["spec"]
    pod = spec["template"]["spec"]
    container = pod["containers"][0]
    shards = env_of(container).get("SHARDS")
    check(spec.get("completionMode") == "Indexed", f"{name}: completionMode is not Indexed")
    check(str(spec.get("completions")) == shards == str(spec.get("parallelism")),
          f"{name}: completions {spec.get('completions')}, parallelism {spec.get('parallelism')} and SHARDS {shards} "
          "must be equal")
    command = " ".join(container.get("command", []) + container.get("args", []))
    check("k=$((JOB_COMPLETION_INDEX + 1))" in command and '--shard "$k/$SHARDS"' in command,
          f"{name}: the pod must run --shard $((JOB_COMPLETION_INDEX + 1))/$SHARDS (shards are 1-based)")
    check('--out "/results/shard-$k"' in command, f"{name}: each shard must write its own /results/shard-K")
    for n, (path, doc) in docs.items():
        if doc.get("kind") != "Job":
            continue
        template = doc["spec"]["template"]["spec"]
        check(template.get("restartPolicy") == "Never", f"{path}: restartPolicy must be Never (a rerun shard hides a failure)")
        for volume in template.get("volumes", []):
            claim = volume.get("persistentVolumeClaim", {}).get("claimName")
            check(claim in pvcs, f"{path}: volume {volume.get('name')} claims '{claim}', which no manifest defines")
    report = docs.get("kvchaos-suite-report")
    if check(report is not None, "deploy/k8s: no Job kvchaos-suite-report"):
        args = " ".join(report[1]["spec"]["template"]["spec"]["containers"][0].get("args", []))
        check("report failover /results/shard-*" in args, f"{report[0]}: the report must read every /results/shard-*")


def check_workflow(src):
    path = os.path.join(src, ".github", "workflows", "suite.yml")
    wf = yaml.safe_load(open(path))
    jobs = wf.get("jobs", {})
    shards = int(wf["env"]["SHARDS"])
    matrix = jobs["shard"]["strategy"]["matrix"]["shard"]
    check(matrix == list(range(1, shards + 1)), f"{path}: matrix {matrix} is not 1..SHARDS ({shards})")
    check(f"/{shards}" in jobs["shard"]["name"], f"{path}: the shard job's name does not say /{shards}")
    run = " ".join(step.get("run", "") for step in jobs["shard"]["steps"])
    check('--shard "${{ matrix.shard }}/$SHARDS"' in run, f"{path}: the shard job must run --shard MATRIX/$SHARDS")
    uploads = [s for s in jobs["shard"]["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    check(uploads and uploads[0]["with"]["name"] == "results-shard-${{ matrix.shard }}",
          f"{path}: each shard must upload artifact results-shard-<K>")
    check(jobs["report"].get("needs") == "shard", f"{path}: the report job must need the shard job")
    downloads = [s for s in jobs["report"]["steps"] if str(s.get("uses", "")).startswith("actions/download-artifact")]
    check(downloads and downloads[0]["with"].get("pattern") == "results-shard-*",
          f"{path}: the report job must download every results-shard-* artifact")


def check_dockerfile(src):
    path = os.path.join(src, "deploy", "Dockerfile")
    text = open(path).read()
    stages = text.split("\nFROM ")
    runtime = stages[-1]
    after = runtime.split("--no-install-recommends", 1)[1].split("&&", 1)[0] if "--no-install-recommends" in runtime else ""
    names = [p for p in re.split(r"[\s\\]+", after) if p]
    check(names, f"{path}: no packages found in the runtime stage")
    have_lists = subprocess.run(["apt-cache", "show", "libc6"], capture_output=True).returncode == 0
    if not have_lists:
        print(f"check_manifests: apt lists absent; {path}'s package names not checked")
        return
    # One query; it succeeds when any name is known, so compare the packages it lists.
    shown = subprocess.run(["apt-cache", "show", "--no-all-versions", *names], capture_output=True, text=True).stdout
    found = set(re.findall(r"^Package: (\S+)$", shown, re.MULTILINE))
    for name in names:
        check(name in found, f"{path}: runtime package '{name}' is not a Debian package")


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    check_k8s(src)
    check_workflow(src)
    check_dockerfile(src)
    for p in problems:
        print(f"check_manifests: {p}")
    if not problems:
        print("check_manifests: deploy/k8s, .github/workflows/suite.yml and deploy/Dockerfile agree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
