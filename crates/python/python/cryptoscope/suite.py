"""Run a cryptoscope suite from Python and get the results as plain dicts.

    from cryptoscope import suite
    rows = suite.run(["--quick", "--alg", "ML-KEM-768"])
    for r in rows: print(r["subject"], r["operation"], r["median_cycles"])

This calls the ``cryptoscope`` command (``command()`` says where it is looked for: first
``$CRYPTOSCOPE_BIN``, then ``PATH``, then the build and the repository this package was
installed from) with ``--json`` and returns the run file's ``results`` (``run_file=True``
returns the whole document: run id, environment, configuration). The command's own errors
are raised as ``SuiteError`` with its message and exit code (2: bad arguments; 1: a subject
failed its gate, in which case the results are still returned by ``run(..., check=False)``).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile


class SuiteError(RuntimeError):
    """The command failed (or was not found); ``code`` is its exit code."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def _executable(path):
    return path if path and os.path.isfile(path) and os.access(path, os.X_OK) else None


def _candidates(environ, package_dir, prefix, build_dirs):
    """Where the executable may be, in order (see ``command``)."""
    yield environ.get("CRYPTOSCOPE_BIN")
    yield shutil.which("cryptoscope", path=environ.get("PATH", os.defpath))
    # The environment's own bin directory, on PATH or not (a venv that was not activated).
    yield os.path.join(prefix, "bin", "cryptoscope")
    if environ.get("CARGO_TARGET_DIR"):
        yield os.path.join(environ["CARGO_TARGET_DIR"], "release", "cryptoscope")
    # The build this package came from: cargo's profile directory (same target directory as
    # the workspace's binaries), and the repository's target/release.
    for d in build_dirs:
        yield os.path.join(d, "cryptoscope")
    # The README's install: a virtual environment inside the repository (.venv), so the
    # repository is an ancestor of the environment and of this package.
    for start in (prefix, package_dir):
        d = os.path.abspath(start)
        while True:
            yield os.path.join(d, "target", "release", "cryptoscope")
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent


def _build_dirs():
    try:
        from . import _native
    except ImportError:
        return []
    dirs = [getattr(_native, "BUILD_PROFILE_DIR", "")]
    src = getattr(_native, "BUILD_SOURCE_DIR", "")
    if src:
        dirs.append(os.path.join(src, "..", "..", "target", "release"))
    return [d for d in dirs if d]


def command():
    """The cryptoscope executable this module runs: ``$CRYPTOSCOPE_BIN``; else
    ``cryptoscope`` on ``PATH``; else in this Python environment's ``bin`` directory; else
    ``$CARGO_TARGET_DIR/release``; else where the build of this package put the workspace's
    binaries (its cargo profile directory, the repository's ``target/release``); else the
    ``target/release`` of a directory above the environment or the package (the README's
    ``python3 -m venv .venv && .venv/bin/pip install ./crates/python`` in the repository)."""
    env = os.environ.get("CRYPTOSCOPE_BIN")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for path in _candidates(os.environ, here, sys.prefix, _build_dirs()):
        if _executable(path):
            return os.path.normpath(path)
    raise SuiteError("cryptoscope executable not found: build it (cargo build --release), set "
                     "CRYPTOSCOPE_BIN or put it on PATH", 2)


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
