"""Tests of the test command's own scripts: scripts/ci-checkout.py (a fixed checkout that
keeps the times of unchanged files), scripts/test-binaries.py (test binaries several at a
time) and scripts/steps.sh (step times).

    python3 -m unittest discover -s scripts/tests -v

Everything here runs on files and programs the test makes; nothing is timed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(*args, cwd=None, env=None):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)


class CiCheckout(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.src = os.path.join(self.tmp, "src")
        self.dest = os.path.join(self.tmp, "dest")
        os.makedirs(os.path.join(self.src, "crates/a/src"))
        self.write("Cargo.toml", "[workspace]\n")
        self.write(".gitignore", "/target\n/.venv\n__pycache__/\n")
        self.write("crates/a/src/lib.rs", "pub fn a() {}\n")
        self.write("crates/a/build.sh", "#!/bin/sh\n", mode=0o755)
        self.write("untracked.txt", "not yet added\n")
        os.symlink("crates/a", os.path.join(self.src, "link"))
        for cmd in (["init", "-q"], ["add", "Cargo.toml", ".gitignore", "crates", "link"]):
            self.assertEqual(run("git", "-C", self.src, *cmd).returncode, 0)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, rel, text, mode=0o644, root=None):
        p = os.path.join(root or self.src, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, mode)

    def sync(self):
        r = run(sys.executable, os.path.join(SCRIPTS, "ci-checkout.py"), self.src, self.dest)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def age(self, rel):
        """Sets a file of the checkout to an old time, as an earlier run would have left it."""
        os.utime(os.path.join(self.dest, rel), (1_000_000_000, 1_000_000_000), follow_symlinks=False)

    def mtime(self, rel):
        return os.lstat(os.path.join(self.dest, rel)).st_mtime

    def test_copies_tracked_and_untracked_files_links_and_modes(self):
        self.assertIn("6 files, 6 written, 0 removed", self.sync())
        with open(os.path.join(self.dest, "untracked.txt")) as f:
            self.assertEqual(f.read(), "not yet added\n")
        self.assertEqual(os.readlink(os.path.join(self.dest, "link")), "crates/a")
        self.assertTrue(os.access(os.path.join(self.dest, "crates/a/build.sh"), os.X_OK))
        self.assertFalse(os.access(os.path.join(self.dest, "crates/a/src/lib.rs"), os.X_OK))

    def test_an_unchanged_file_keeps_its_time_and_a_changed_one_is_new(self):
        self.sync()
        for rel in ("Cargo.toml", "crates/a/src/lib.rs", "crates/a/build.sh"):
            self.age(rel)
        self.write("crates/a/src/lib.rs", "pub fn a() { /* changed */ }\n")
        # The same bytes, a new time in the source (a fresh clone): not rewritten.
        os.utime(os.path.join(self.src, "Cargo.toml"))
        self.assertIn("1 written", self.sync())
        self.assertEqual(self.mtime("Cargo.toml"), 1_000_000_000)
        self.assertEqual(self.mtime("crates/a/build.sh"), 1_000_000_000)
        self.assertGreater(self.mtime("crates/a/src/lib.rs"), 1_000_000_000)
        with open(os.path.join(self.dest, "crates/a/src/lib.rs")) as f:
            self.assertIn("changed", f.read())

    def test_a_changed_mode_or_same_size_content_is_written(self):
        self.sync()
        self.age("crates/a/build.sh")
        self.age("crates/a/src/lib.rs")
        os.chmod(os.path.join(self.src, "crates/a/build.sh"), 0o644)
        self.write("crates/a/src/lib.rs", "pub fn b() {}\n")  # as long as before
        self.assertIn("2 written", self.sync())
        self.assertFalse(os.access(os.path.join(self.dest, "crates/a/build.sh"), os.X_OK))
        self.assertGreater(self.mtime("crates/a/src/lib.rs"), 1_000_000_000)

    def test_what_the_tree_lacks_is_removed_unless_ignored(self):
        self.sync()
        self.write("stray.rs", "left by an earlier tree\n", root=self.dest)
        self.write("crates/old/src/lib.rs", "a crate since deleted\n", root=self.dest)
        self.write(".venv/bin/python", "kept\n", root=self.dest)
        self.write("target/release/x", "kept\n", root=self.dest)
        self.write("crates/a/__pycache__/m.pyc", "kept\n", root=self.dest)
        os.unlink(os.path.join(self.src, "untracked.txt"))
        self.assertIn("3 removed", self.sync())
        for gone in ("stray.rs", "crates/old", "untracked.txt"):
            self.assertFalse(os.path.lexists(os.path.join(self.dest, gone)), gone)
        for kept in (".venv/bin/python", "target/release/x", "crates/a/__pycache__/m.pyc"):
            self.assertTrue(os.path.exists(os.path.join(self.dest, kept)), kept)

    def test_a_file_that_became_a_directory(self):
        self.sync()
        os.unlink(os.path.join(self.src, "untracked.txt"))
        self.write("untracked.txt/inner", "now a directory\n")
        self.sync()
        with open(os.path.join(self.dest, "untracked.txt/inner")) as f:
            self.assertEqual(f.read(), "now a directory\n")

    def test_refuses_a_destination_inside_the_source(self):
        r = run(sys.executable, os.path.join(SCRIPTS, "ci-checkout.py"), self.src, os.path.join(self.src, "x"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("inside", r.stderr)


class TestBinaries(unittest.TestCase):
    """scripts/test-binaries.py on fake test binaries (shell scripts) named in cargo's JSON."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.log = os.path.join(self.tmp, "order")
        self.msgs = os.path.join(self.tmp, "msgs.json")
        self.binaries = []

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def binary(self, name, body, package_id=None):
        pkg = os.path.join(self.tmp, name)
        os.makedirs(pkg, exist_ok=True)
        exe = os.path.join(self.tmp, name + "-bin")
        with open(exe, "w") as f:
            f.write(f"#!/bin/sh\necho start {name} >>{self.log}\n{body}\necho end {name} >>{self.log}\n")
        os.chmod(exe, 0o755)
        self.binaries.append({
            "reason": "compiler-artifact",
            "package_id": package_id or f"path+file://{pkg}#{name}@1.2.3",
            "manifest_path": os.path.join(pkg, "Cargo.toml"),
            "target": {"kind": ["test"], "name": name, "src_path": os.path.join(pkg, "tests", name + ".rs")},
            "profile": {"test": True},
            "executable": exe,
        })

    def run_them(self, *args, env=None):
        with open(self.msgs, "w") as f:
            for m in self.binaries:
                f.write(json.dumps(m) + "\n")
            # Not test binaries: skipped.
            f.write(json.dumps({"reason": "compiler-artifact", "profile": {"test": False}, "executable": "/bin/false"}) + "\n")
            f.write("not JSON: a line cargo printed\n")
        # Not the step file of a test command running this test.
        base = {k: v for k, v in os.environ.items() if k not in ("CRYPTOSCOPE_STEP_TIMES", "CRYPTOSCOPE_TEST_JOBS")}
        return run(sys.executable, os.path.join(SCRIPTS, "test-binaries.py"), self.msgs, *args, env=dict(base, **(env or {})))

    def order(self):
        with open(self.log) as f:
            return f.read().split("\n")[:-1]

    def test_runs_each_as_cargo_would_and_prints_its_output_whole(self):
        self.binary("alpha", 'echo "dir=$(basename "$PWD") pkg=$CARGO_PKG_NAME $CARGO_PKG_VERSION crate=$CARGO_CRATE_NAME"\n'
                    'echo "test result: ok. 1 passed; 0 failed; 0 ignored"')
        self.binary("beta", 'echo "test result: ok. 2 passed; 0 failed; 0 ignored"',
                    package_id="beta 0.9.0 (path+file:///somewhere)")
        r = self.run_them("--jobs", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("dir=alpha pkg=alpha 1.2.3 crate=alpha", r.stdout)
        self.assertIn("Running tests/alpha.rs", r.stdout)
        self.assertIn("Started beta tests/beta.rs", r.stderr)

    def test_a_crash_without_a_result_line_is_counted_as_a_failure(self):
        self.binary("ok", 'echo "test result: ok. 1 passed; 0 failed; 0 ignored"')
        self.binary("crash", "kill -SEGV $$")
        self.binary("fail", 'echo "test result: FAILED. 0 passed; 1 failed; 0 ignored"; exit 101')
        r = self.run_them("--jobs", "2")
        self.assertEqual(r.returncode, 1)
        self.assertIn("test result: FAILED. 0 passed; 1 failed (crash tests/crash.rs: killed by signal 11", r.stdout)
        self.assertEqual(r.stdout.count("test result: FAILED"), 2, r.stdout)

    def test_longest_first_by_the_last_times_and_new_ones_before(self):
        for n in ("short", "long", "new"):
            self.binary(n, "true")
        times = os.path.join(self.tmp, "times")
        with open(times, "w") as f:
            f.write("short tests/short.rs\t1.0\nlong tests/long.rs\t50.0\n")
        steps = os.path.join(self.tmp, "steps")
        r = self.run_them("--jobs", "1", "--times", times, env={"CRYPTOSCOPE_STEP_TIMES": steps})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([l.split()[1] for l in self.order() if l.startswith("start")], ["new", "long", "short"])
        with open(times) as f:
            self.assertEqual(sorted(l.split("\t")[0] for l in f), ["long tests/long.rs", "new tests/new.rs", "short tests/short.rs"])
        with open(steps) as f:
            lines = f.read().split("\n")
        self.assertIn("  new tests/new.rs\t-\t-", lines)
        self.assertTrue(any(l.startswith("  short tests/short.rs\t") and l.endswith("\t0") for l in lines), lines)

    def wait_for(self, flag, tries):
        """Shell that polls for `flag` up to `tries` times 10 ms: a job that ends once
        another job has started, or after that bound when none starts beside it."""
        return f"for i in $(seq {tries}); do [ -e {flag} ] && break; sleep 0.01; done"

    def test_extras_of_one_group_run_one_after_another(self):
        self.binary("t", "true")
        mark, flag = self.log, os.path.join(self.tmp, "second-started")
        # Were the group's jobs run side by side, the second would start before the first
        # ends (the first waits for it); run one after another, the first ends at its bound.
        r = self.run_them("--jobs", "3",
                          "--extra", f"g:first=echo start first >>{mark}; {self.wait_for(flag, 100)}; echo end first >>{mark}",
                          "--extra", f"g:second=touch {flag}; echo start second >>{mark}; echo end second >>{mark}")
        self.assertEqual(r.returncode, 0, r.stderr)
        o = self.order()
        self.assertLess(o.index("end first"), o.index("start second"), o)

    def test_a_name_with_a_colon_is_not_a_group(self):
        self.binary("t", "true")
        mark, flag = self.log, os.path.join(self.tmp, "ad-started")
        r = self.run_them("--jobs", "2",
                          "--extra", f"a (b: c)=echo start ac >>{mark}; {self.wait_for(flag, 3000)}; echo end ac >>{mark}",
                          "--extra", f"a (b: d)=echo start ad >>{mark}; touch {flag}; echo end ad >>{mark}")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Running a (b: c)", r.stdout)
        # Not one group "a (b": the second starts while the first still runs.
        o = self.order()
        self.assertLess(o.index("start ad"), o.index("end ac"), o)

    def test_a_job_after_another_waits_in_the_queue_not_in_a_slot(self):
        self.binary("late", "true")
        self.binary("free", "true")
        mark = self.log
        r = self.run_them("--jobs", "2",
                          "--extra", f"build=echo start build >>{mark}; sleep 0.5; echo end build >>{mark}",
                          "--after", "late tests/late.rs=build")
        self.assertEqual(r.returncode, 0, r.stderr)
        o = self.order()
        self.assertLess(o.index("end build"), o.index("start late"), o)
        # The other slot ran the free binary meanwhile.
        self.assertLess(o.index("end free"), o.index("end build"), o)

    def test_an_unknown_or_circular_after_is_an_error(self):
        self.binary("a", "true")
        self.binary("b", "true")
        r = self.run_them("--after", "a tests/a.rs=nothing")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no job named 'nothing'", r.stderr)
        r = self.run_them("--jobs", "2", "--after", "a tests/a.rs=b tests/b.rs", "--after", "b tests/b.rs=a tests/a.rs")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("wait for each other", r.stderr)

    def test_zero_jobs_is_refused(self):
        r = self.run_them("--jobs", "0")
        self.assertEqual(r.returncode, 2)


class Steps(unittest.TestCase):
    def test_the_table_puts_each_step_where_it_started_and_totals_the_outer_ones(self):
        with tempfile.NamedTemporaryFile("r") as f:
            script = (f"source {SCRIPTS}/steps.sh; export CRYPTOSCOPE_STEP_TIMES={f.name}\n"
                      "step outer bash -c 'source " + SCRIPTS + "/steps.sh; step \"  inner\" true; step \"  broken\" false; true'\n"
                      "step second false || true\n"
                      f"steps_table {f.name}\n")
            r = run("bash", "-c", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [l.split() for l in r.stdout.strip().split("\n")]
        self.assertEqual([row[0] for row in rows], ["step", "outer", "inner", "broken", "second", "total"])
        self.assertEqual(rows[3][2:], ["FAILED", "(exit", "1)"])
        self.assertEqual(rows[4][2:], ["FAILED", "(exit", "1)"])
        outer, second, total = float(rows[1][1]), float(rows[4][1]), float(rows[5][1])
        self.assertAlmostEqual(total, outer + second, places=5)


if __name__ == "__main__":
    unittest.main()
