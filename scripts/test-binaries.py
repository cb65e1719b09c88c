#!/usr/bin/env python3
"""Runs the workspace's test binaries, several at a time, as `cargo test` would run each.

    cargo test --release --workspace --locked --no-run --message-format=json-render-diagnostics >MSGS
    python3 scripts/test-binaries.py MSGS [--jobs N] [--times FILE] [--extra [GROUP:]NAME=COMMAND]...
                                          [--after JOB=JOB]...

Why (scripts/test.sh): `cargo test` runs its test binaries one after another, and most of the
long ones wait on daemons, handshakes and network namespaces rather than use the CPU. Here
up to N binaries run at once (default 2; CRYPTOSCOPE_TEST_JOBS). Tests that bind ports,
start daemons or create namespaces take one lock shared by every test process
(`cryptoscope_testkit::serial`), so they never overlap, whichever binaries they are in.

Each binary runs as cargo runs it: in its package's directory, with the CARGO_* variables
cargo sets and the library path it sets. Its output is printed whole when it ends (a
`Started` line when it starts), so the log reads as cargo's does, with each binary's time.
The longest binaries (by FILE, the times of the last run) start first. `--extra` adds a
command run as one more job (the doc tests, clippy, the Python tests); extras of one GROUP
run one after another in one slot (the cargo commands, which would only wait for each
other's lock on the build directory); GROUP is a word of letters, digits and dashes.
`--after A=B` starts job A only once job B has ended (the cross-architecture test binary
after the cross builds); until then A waits in the queue, not in a slot.

Writes FILE (name and seconds, tab-separated, one binary a line), adds each binary's time
to $CRYPTOSCOPE_STEP_TIMES (scripts/steps.sh) and exits non-zero if any binary failed. A binary that ends without libtest's `test result:` line (a crash, a signal)
gets one saying so, so the closing count sees it.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time


def binaries(messages):
    """The test executables in cargo's JSON messages, and the library directories of build scripts."""
    tests, native = [], []
    with open(messages, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            m = json.loads(line)
            if m.get("reason") == "build-script-executed":
                native += [p.split("=", 1)[-1] for p in m.get("linked_paths", [])]
            if m.get("reason") != "compiler-artifact" or not m.get("executable") or not m["profile"]["test"]:
                continue
            root = os.path.dirname(m["manifest_path"])
            t = m["target"]
            src = os.path.relpath(t["src_path"], root)
            kind = "unittests " + src if t["kind"] != ["test"] else src
            # "cryptoscope-model 0.1.0 (path+file:///…)" or "path+file:///…#cryptoscope-model@0.1.0"
            pid = m["package_id"]
            if "#" in pid:
                name, _, version = pid.split("#", 1)[1].rpartition("@")
                if not name:  # "path+file:///…/model#0.1.0": the directory names the package
                    name = os.path.basename(pid.split("#", 1)[0])
            else:
                name, version = pid.split(" ")[:2]
            tests.append({
                "name": f"{name} {kind}",
                "exe": m["executable"],
                "cwd": root,
                "env": {
                    "CARGO_MANIFEST_DIR": root,
                    "CARGO_MANIFEST_PATH": m["manifest_path"],
                    "CARGO_PKG_NAME": name,
                    "CARGO_PKG_VERSION": version,
                    "CARGO_CRATE_NAME": t["name"].replace("-", "_"),
                },
            })
    return tests, native


def library_path(tests, native):
    target = os.environ.get("CARGO_TARGET_DIR", "")
    dirs = []
    for t in tests:
        d = os.path.dirname(t["exe"])
        dirs += [d, os.path.dirname(d)]
    if target:
        dirs = [d for d in native if d.startswith(os.path.abspath(target))] + dirs
    try:
        sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True).stdout.strip()
        dirs.append(os.path.join(sysroot, "lib"))
    except (OSError, subprocess.CalledProcessError):
        pass
    old = os.environ.get("LD_LIBRARY_PATH")
    seen = []
    for d in dirs + ([old] if old else []):
        if d not in seen:
            seen.append(d)
    return ":".join(seen)


def usage(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("messages")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("CRYPTOSCOPE_TEST_JOBS", "2")))
    ap.add_argument("--times", help="read the last run's times from here, write this run's")
    ap.add_argument("--extra", action="append", default=[], metavar="[GROUP:]NAME=COMMAND")
    ap.add_argument("--after", action="append", default=[], metavar="JOB=JOB")
    a = ap.parse_args()
    if a.jobs < 1:
        usage("--jobs must be at least 1")

    tests, native = binaries(a.messages)
    ld = library_path(tests, native)
    jobs = [
        {"name": t["name"], "argv": [t["exe"]], "cwd": t["cwd"],
         "env": dict(os.environ, **t["env"], LD_LIBRARY_PATH=ld),
         "header": f"     Running {t['name'].split(' ', 1)[1]} ({t['exe']})"}
        for t in tests
    ]
    groups = [[j] for j in jobs]
    named = {}
    for e in a.extra:
        name, _, cmd = e.partition("=")
        m = re.match(r"([A-Za-z0-9-]+):(.*)", name)
        group, name = (m.group(1), m.group(2)) if m else ("", name)
        j = {"name": name, "argv": ["bash", "-c", cmd], "cwd": os.getcwd(), "env": dict(os.environ),
             "header": f"     Running {name} ({cmd})"}
        jobs.append(j)
        if group and group in named:
            named[group].append(j)
        else:
            groups.append([j])
            if group:
                named[group] = groups[-1]

    names = {j["name"] for j in jobs}
    deps = {}
    for e in a.after:
        job, _, dep = e.partition("=")
        for n in (job, dep):
            if n not in names:
                usage(f"--after {e}: no job named {n!r}")
        deps.setdefault(job, set()).add(dep)

    last = {}
    if a.times and os.path.exists(a.times):
        with open(a.times, encoding="utf-8") as f:
            for line in f:
                name, _, secs = line.rstrip("\n").rpartition("\t")
                try:
                    last[name] = float(secs)
                except ValueError:
                    pass
    # Longest first; a binary without a time (new, or a cold cache) before all of them.
    groups.sort(key=lambda g: (all(j["name"] in last for j in g), -sum(last.get(j["name"], 0.0) for j in g), g[0]["name"]))

    lock = threading.Lock()
    times = {}
    steps = os.environ.get("CRYPTOSCOPE_STEP_TIMES")

    def step_line(text):
        # scripts/steps.sh's format: a part of the step running this script.
        if steps:
            with open(steps, "a", encoding="utf-8") as f:
                f.write(text + "\n")

    def run(j):
        with lock:
            print(f"     Started {j['name']}", file=sys.stderr, flush=True)
            step_line(f"  {j['name']}\t-\t-")
        t0 = time.monotonic()
        p = subprocess.run(j["argv"], cwd=j["cwd"], env=j["env"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        secs = time.monotonic() - t0
        out = p.stdout.decode(errors="replace")
        if p.returncode != 0 and "test result:" not in out:
            how = f"killed by signal {-p.returncode}" if p.returncode < 0 else f"exit status {p.returncode}"
            out += f"\ntest result: FAILED. 0 passed; 1 failed ({j['name']}: {how}, no test result)\n"
        with lock:
            times[j["name"]] = secs
            step_line(f"  {j['name']}\t{secs:.1f}\t{p.returncode & 0xff}")
            sys.stdout.write(f"{j['header']} [{secs:.1f} s]\n{out}")
            if not out.endswith("\n"):
                sys.stdout.write("\n")
            sys.stdout.flush()
        return p.returncode

    # Each slot takes the first group in the queue whose jobs' dependencies have ended.
    # A job of a group may also wait for a job before it in the group.
    queue = list(groups)
    ended = set()
    codes = []
    running = [0]
    ready = threading.Condition()

    def can_start(g):
        before = set()
        for j in g:
            if not deps.get(j["name"], set()) <= ended | before:
                return False
            before.add(j["name"])
        return True

    def slot():
        while True:
            with ready:
                while True:
                    if not queue:
                        return
                    g = next((g for g in queue if can_start(g)), None)
                    if g is not None:
                        queue.remove(g)
                        running[0] += 1
                        break
                    if running[0] == 0:
                        # Nothing runs that could end a wait: the --after lines form a circle.
                        codes.append(2)
                        print("error: the jobs left wait for each other (--after): "
                              + ", ".join(j["name"] for g in queue for j in g), file=sys.stderr, flush=True)
                        queue.clear()
                        ready.notify_all()
                        return
                    ready.wait()
            for j in g:
                code = run(j)
                with ready:
                    codes.append(code)
                    ended.add(j["name"])
                    ready.notify_all()
            with ready:
                running[0] -= 1
                ready.notify_all()

    slots = [threading.Thread(target=slot) for _ in range(a.jobs)]
    for t in slots:
        t.start()
    for t in slots:
        t.join()
    if a.times:
        with open(a.times, "w", encoding="utf-8") as f:
            for j in jobs:
                if j["name"] in times:
                    f.write(f"{j['name']}\t{times[j['name']]:.1f}\n")
    sys.exit(0 if all(c == 0 for c in codes) else 1)


if __name__ == "__main__":
    main()
