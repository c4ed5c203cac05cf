#!/usr/bin/env python3
"""Tests of check_merged.py (the check of two_host_test.sh's step 2) on hand-built records of the
shapes in the shared multi-host spec: a right set passes, and each way a merged record can be
wrong for two hosts is found. Needs no root and no MPI. Python 3 standard library only."""
import contextlib
import copy
import io
import json
import pathlib
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_merged  # noqa: E402

JOB = "20261202T170000Z-ab12"
HOSTS = ["mh-a", "mh-b"]


def rank_record(k):
    return {"schema": "drivelab.run/1", "run_id": f"{JOB}-r{k}", "status": "complete",
            "cohort": {"job_id": JOB, "rank": k, "size": 2, "hosts": HOSTS,
                       "clock_offset_ns": 0 if k == 0 else 1234, "clock_offset_uncertainty_ns": 50}}


def merged_record():
    return {"schema": "drivelab.run/1", "run_id": JOB, "status": "complete",
            "cohort": {"job_id": JOB, "size": 2, "ranks": [0, 1]},
            "target": {"kind": "hosts", "hosts": 2, "description": "2 hosts"},
            "hosts": [{"rank": k, "name": HOSTS[k], "run_id": f"{JOB}-r{k}", "status": "complete",
                       "reason": "", "clock_offset_ns": 0, "tests": []} for k in range(2)]}


class CheckMergedTest(unittest.TestCase):
    def run_check(self, files):
        with tempfile.TemporaryDirectory() as d:
            for name, rec in files.items():
                (pathlib.Path(d) / name).write_text(json.dumps(rec))
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                rc = check_merged.main(["check_merged.py", d, *HOSTS])
            return rc, err.getvalue()

    def expect_found(self, files, *texts):
        rc, err = self.run_check(files)
        self.assertEqual(rc, 1, err)
        for t in texts:
            self.assertIn(t, err)

    def files(self):
        return {f"{JOB}-r0.json": rank_record(0), f"{JOB}-r1.json": rank_record(1),
                f"{JOB}.json": merged_record()}

    def test_records_of_two_hosts_pass(self):
        self.assertEqual(self.run_check(self.files()), (0, ""))

    def test_no_merged_record(self):
        files = self.files()
        del files[f"{JOB}.json"]
        self.expect_found(files, f"no merged record {JOB}.json")

    def test_one_rank_record_missing(self):
        files = self.files()
        del files[f"{JOB}-r1.json"]
        self.expect_found(files, "want ranks 0 and 1")

    def test_hosts_with_one_entry(self):
        files = self.files()
        files[f"{JOB}.json"]["hosts"].pop()
        self.expect_found(files, "want two entries")

    def test_both_hosts_with_one_name(self):
        files = self.files()
        files[f"{JOB}.json"]["hosts"][1]["name"] = HOSTS[0]
        self.expect_found(files, "not two distinct host names", "hosts[1]")

    def test_rank_record_with_wrong_hosts(self):
        files = self.files()
        files[f"{JOB}-r1.json"] = copy.deepcopy(files[f"{JOB}-r1.json"])
        files[f"{JOB}-r1.json"]["cohort"]["hosts"] = [HOSTS[0], HOSTS[0]]
        self.expect_found(files, f"{JOB}-r1.json: cohort.hosts")

    def test_merged_not_complete(self):
        files = self.files()
        files[f"{JOB}.json"]["status"] = "interrupted"
        files[f"{JOB}.json"]["hosts"][1]["status"] = "missing"
        self.expect_found(files, "status 'interrupted'", "'missing'")

    def test_single_host_target(self):
        files = self.files()
        files[f"{JOB}.json"]["target"] = {"kind": "directory"}
        self.expect_found(files, "want kind 'hosts' and hosts 2")


if __name__ == "__main__":
    unittest.main()
