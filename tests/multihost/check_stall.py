#!/usr/bin/env python3
"""Checks the merged record of a multi-host run in which one rank stalled (tests/multihost/stall_test.sh).

    check_stall.py OUT_DIR VICTIM_RANK

OUT_DIR holds every rank's record <job>-r<k>.json, its journal <job>-r<k>.journal.jsonl and the
merged record <job>.json. For each test and each merged interval (a window [t_s - duration_s, t_s]
on the merged record's time scale, the lowest unstalled rank's measured phase), what every rank
delivered in it is read from the rank's journal: the I/Os of its intervals that overlap the window,
placed on rank 0's clock by the rank's `run` barrier less its clock offset (docs/results.md,
"Intervals by time"). The merged interval must hold no more I/Os than their sum, nor a rate times
the window above it. The merged test must carry the stall: a warning naming the victim, and the
status `failed` when the stall is beyond the 3 s tolerance. Prints every window; exits 1 on
a mismatch. Python 3 standard library only.
"""
import json
import pathlib
import sys


def value(iv, name):
    return iv.get("values", {}).get(name)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    out = pathlib.Path(argv[1])
    victim = int(argv[2])
    errors = []
    ranks = {}
    merged = None
    for p in sorted(out.glob("*.json")):
        if p.is_symlink():
            continue
        rec = json.loads(p.read_text())
        cohort = rec.get("cohort") or {}
        if "rank" in cohort:
            ranks[cohort["rank"]] = rec
        elif "ranks" in cohort:
            merged = rec
    if merged is None or len(ranks) < 2:
        print(f"check_stall: want the ranks' records and a merged one in {out}: {sorted(p.name for p in out.iterdir())}",
              file=sys.stderr)
        return 1
    journals = {}
    for k, rec in ranks.items():
        path = out / f"{rec['run_id']}.journal.jsonl"
        by_test = {}
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            e = json.loads(line)
            if e.get("event") == "interval":
                by_test.setdefault(e["test"], []).append(e["interval"])
        journals[k] = by_test

    for ti, t in enumerate(merged["tests"]):
        name = t["name"]
        details = t.get("details", {}).get("intervals", {})
        stalls = {s["rank"]: s for s in details.get("stalls", [])}
        if details.get("merged_by") != "time":
            errors.append(f"test {name}: intervals merged by {details.get('merged_by')!r}, want time")
        ref = min(k for k in ranks if k not in stalls)

        def start(k):
            r = ranks[k]
            return r["tests"][ti]["barriers"]["run"] - r["cohort"].get("clock_offset_ns", 0)

        shift = {k: (start(k) - start(ref)) / 1e9 for k in ranks}
        print(f"check_stall: test {name}: windows of rank {ref}; rank starts on its scale: "
              + ", ".join(f"r{k} {shift[k]:+.4f} s" for k in sorted(ranks)))
        print("check_stall:   window [a, b] s   merged ios  " + "  ".join(f"r{k} delivered" for k in sorted(ranks))
              + "  sum")
        for iv in t["intervals"]:
            b = iv["t_s"]
            a = b - iv["duration_s"]
            got = {}
            for k in sorted(ranks):
                n = 0
                for j in journals[k].get(name, []):
                    jb = shift[k] + j["t_s"]
                    ja = jb - j["duration_s"]
                    if min(jb, b) > max(ja, a):
                        n += value(j, "ios") or 0
                got[k] = n
            total = sum(got.values())
            ios = value(iv, "ios")
            iops = value(iv, "iops")
            print(f"check_stall:   [{a:6.2f}, {b:6.2f}]  {ios:11.0f}  "
                  + "  ".join(f"{got[k]:12.0f}" for k in sorted(ranks)) + f"  {total:.0f}")
            if ios is None or iops is None:
                errors.append(f"test {name}: window ending {b:.2f}: no ios or iops value")
                continue
            if ios > total + 0.5:
                errors.append(f"test {name}: window [{a:.2f}, {b:.2f}]: merged {ios:.0f} I/Os, the ranks "
                              f"delivered {total:.0f}")
            if iops * iv["duration_s"] > total * (1 + 1e-9) + 0.5:
                errors.append(f"test {name}: window [{a:.2f}, {b:.2f}]: merged {iops:.0f} IOPS x "
                              f"{iv['duration_s']:.3f} s, the ranks delivered {total:.0f} I/Os")
        if len(t["intervals"]) < 5:
            errors.append(f"test {name}: only {len(t['intervals'])} merged intervals (want the windows before "
                          "and after the stall)")
        if victim not in stalls:
            errors.append(f"test {name}: details.intervals.stalls {list(stalls)} does not name rank {victim}")
            continue
        s = stalls[victim]
        print(f"check_stall: test {name}: rank {victim} stalled {s['stalled_s']:.2f} s, "
              f"{s['outside_common_window_s']:.2f} s outside the common window; status {t['status']}")
        if not any(f"rank {victim} (host" in w and "stalled" in w for w in t.get("warnings", [])):
            errors.append(f"test {name}: no warning names the stall of rank {victim}: {t.get('warnings')}")
        if s["stalled_s"] > 3 and (t["status"] != "failed" or merged["status"] != "failed"):
            errors.append(f"test {name}: stalled {s['stalled_s']:.2f} s but test {t['status']}, run "
                          f"{merged['status']}")
    for e in errors:
        print(f"check_stall: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
