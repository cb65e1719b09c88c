"""Run a cryptoscope suite from Python and get the results as plain dicts.

    from cryptoscope import suite
    rows = suite.run(["--quick", "--alg", "ML-KEM-768"])
    for r in rows: print(r["subject"], r["operation"], r["median_cycles"])

This calls the ``cryptoscope`` command (its path: ``$CRYPTOSCOPE_BIN``, else ``cryptoscope``
on ``PATH``, else the repository's ``target/release/cryptoscope``) with ``--json`` and
returns the run file's ``results`` (``run_file=True`` returns the whole document: run id,
environment, configuration). The command's own errors are raised as ``SuiteError`` with
its message and exit code (2: bad arguments; 1: a subject failed its gate, in which case
the results are still returned by ``run(..., check=False)``).
"""

import json
import os
import shutil
import subprocess
import tempfile


class SuiteError(RuntimeError):
    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def command():
    """The cryptoscope executable this module runs."""
    env = os.environ.get("CRYPTOSCOPE_BIN")
    if env:
        return env
    found = shutil.which("cryptoscope")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    for base in (os.environ.get("CARGO_TARGET_DIR"), os.path.join(here, "..", "..", "..", "..", "target")):
        if base:
            p = os.path.join(base, "release", "cryptoscope")
            if os.access(p, os.X_OK):
                return p
    raise SuiteError("cryptoscope executable not found: set CRYPTOSCOPE_BIN or put it on PATH", 2)


def run(args=(), run_file=False, check=True):
    """``cryptoscope run ARGS --json FILE``; the results as a list of dicts."""
    args = list(args)
    if "--json" in args:
        raise SuiteError("run() chooses the --json file itself", 2)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "run.json")
        p = subprocess.run(
            [command(), "run", "--quiet", *args, "--json", out],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        doc = None
        if os.path.exists(out):
            with open(out) as f:
                doc = json.load(f)
    if p.returncode != 0 and (check or doc is None):
        msg = (p.stderr.strip().splitlines() or ["cryptoscope run failed"])[-1]
        raise SuiteError(msg, p.returncode)
    return doc if run_file else doc["results"]
