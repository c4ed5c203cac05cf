#!/usr/bin/env python3
"""Checks the records of one drivelab run under mpirun across two hosts (tests/multihost/).

    check_merged.py OUT_DIR HOST_RANK0 HOST_RANK1

OUT_DIR is the run's --out, shared by both ranks. The shapes are those of the shared multi-host
spec (issue 16): every rank k writes <job_id>-r<k>.json whose `cohort` is
{"job_id", "rank": k, "size": 2, "hosts": [host of rank 0, host of rank 1], ...}; rank 0 writes the
merged record <job_id>.json with run_id = job_id, target {"kind": "hosts", "hosts": 2} and `hosts`,
one entry per rank: {"rank", "name", "run_id", "status", ...}. Prints every mismatch found and exits
1 if there is one, 0 otherwise. Python 3 standard library only.
"""
import json
import pathlib
import sys


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    out = pathlib.Path(argv[1])
    names = [argv[2], argv[3]]
    errors = []

    records = {}
    for path in sorted(out.glob("*.json")):
        if path.is_symlink() or path.name == "latest.json":
            continue
        try:
            records[path.name] = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            errors.append(f"{path.name}: not a JSON record: {e}")

    per_rank = {n: r for n, r in records.items() if "rank" in (r.get("cohort") or {})}
    by_rank = {r["cohort"]["rank"]: (n, r) for n, r in per_rank.items()}
    if sorted(by_rank) != [0, 1] or len(per_rank) != 2:
        errors.append(f"per-rank records (a cohort with a rank): want ranks 0 and 1, found "
                      f"{ {n: r['cohort']['rank'] for n, r in per_rank.items()} } among {sorted(records)}")
        report(errors)
        return 1

    job_id = by_rank[0][1]["cohort"].get("job_id")
    for k, (name, rec) in sorted(by_rank.items()):
        cohort = rec["cohort"]
        if cohort.get("job_id") != job_id:
            errors.append(f"{name}: cohort.job_id {cohort.get('job_id')!r}, rank 0 has {job_id!r}")
        if rec.get("run_id") != f"{job_id}-r{k}":
            errors.append(f"{name}: run_id {rec.get('run_id')!r}, want {job_id}-r{k}")
        if name != f"{job_id}-r{k}.json":
            errors.append(f"{name}: the record of rank {k} is not named {job_id}-r{k}.json")
        if cohort.get("size") != 2:
            errors.append(f"{name}: cohort.size {cohort.get('size')!r}, want 2")
        if cohort.get("hosts") != names:
            errors.append(f"{name}: cohort.hosts {cohort.get('hosts')!r}, want {names}")

    merged_name = f"{job_id}.json"
    merged = records.get(merged_name)
    if merged is None:
        errors.append(f"no merged record {merged_name} (files: {sorted(records)})")
        report(errors)
        return 1
    if merged.get("run_id") != job_id:
        errors.append(f"{merged_name}: run_id {merged.get('run_id')!r}, want {job_id!r}")
    target = merged.get("target") or {}
    if target.get("kind") != "hosts" or target.get("hosts") != 2:
        errors.append(f"{merged_name}: target {target!r}, want kind 'hosts' and hosts 2")
    hosts = merged.get("hosts")
    if not isinstance(hosts, list) or len(hosts) != 2:
        errors.append(f"{merged_name}: hosts {hosts!r}, want two entries")
    else:
        for k, h in enumerate(hosts):
            want = {"rank": k, "name": names[k], "run_id": f"{job_id}-r{k}", "status": "complete"}
            got = {key: h.get(key) for key in want}
            if got != want:
                errors.append(f"{merged_name}: hosts[{k}] {got!r}, want {want!r}")
        if len({h.get("name") for h in hosts}) != 2:
            errors.append(f"{merged_name}: hosts are not two distinct host names: {[h.get('name') for h in hosts]}")
    if merged.get("status") != "complete":
        errors.append(f"{merged_name}: status {merged.get('status')!r} ({merged.get('reason')!r}), want complete")

    if errors:
        report(errors)
        return 1
    print(f"check_merged: {merged_name}: hosts {names}, ranks' records {sorted(per_rank)}")
    return 0


def report(errors):
    for e in errors:
        print(f"check_merged: {e}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
