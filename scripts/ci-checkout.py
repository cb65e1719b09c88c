#!/usr/bin/env python3
"""Keeps a copy of a source tree at a fixed path, rewriting only the files whose content changed.

    python3 scripts/ci-checkout.py SRC DEST

Why (scripts/test.sh, with CI=true): cargo decides that a crate must be compiled again when
one of its files is newer than its last build, and a fresh `git clone` gives every file the
time of the clone. A second clone of an unchanged tree would compile every workspace crate
again, and a crate that embeds its own path (`env!("CARGO_MANIFEST_DIR")`) would point into
the first clone, which cargo does not notice. So the test command runs from DEST, always the
same path, which this script makes hold exactly SRC's files: the tracked ones and the
untracked ones git does not ignore. A file whose bytes, link target and executable bit are
already right is not touched (it keeps its time, so cargo reuses what it built from it); a
file that differs is written anew (it gets the time of now, so cargo compiles what depends
on it again, whatever times the build directory holds). Anything else in DEST is removed,
except what SRC's .gitignore files ignore (build outputs, .venv, results): those are kept.

Prints one line: how many files, how many written, how many removed.
"""
import os
import shutil
import stat
import subprocess
import sys


def git(src, *args, stdin=None, ok=(0,)):
    p = subprocess.run(["git", "-C", src, *args], input=stdin, capture_output=True)
    if p.returncode not in ok:
        sys.exit(f"error: git {' '.join(args)} in {src}: {p.stderr.decode(errors='replace').strip()}")
    return p.stdout


def same(src_path, dest_path):
    """Whether dest_path already is src_path: the same kind, link target or bytes, and mode."""
    try:
        s, d = os.lstat(src_path), os.lstat(dest_path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    if stat.S_ISLNK(s.st_mode) or stat.S_ISLNK(d.st_mode):
        return stat.S_ISLNK(s.st_mode) and stat.S_ISLNK(d.st_mode) and os.readlink(src_path) == os.readlink(dest_path)
    if not stat.S_ISREG(d.st_mode) or s.st_size != d.st_size:
        return False
    if (s.st_mode & 0o111) != (d.st_mode & 0o111):
        return False
    with open(src_path, "rb") as a, open(dest_path, "rb") as b:
        while True:
            x, y = a.read(1 << 20), b.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def write(src_path, dest_path):
    """Writes dest_path anew (a new file, so a new modification time) as a copy of src_path."""
    parent = os.path.dirname(dest_path)
    # A directory where a file goes, or a file where a directory goes: replaced.
    p = parent
    while p and not os.path.isdir(p):
        if os.path.lexists(p):
            remove(p)
            break
        p = os.path.dirname(p)
    os.makedirs(parent, exist_ok=True)
    if os.path.isdir(dest_path) and not os.path.islink(dest_path):
        shutil.rmtree(dest_path)
    tmp = dest_path + ".ci-checkout-tmp"
    remove(tmp)
    if os.path.islink(src_path):
        os.symlink(os.readlink(src_path), tmp)
    else:
        shutil.copyfile(src_path, tmp)
        os.chmod(tmp, os.stat(src_path).st_mode & 0o7777)
    os.replace(tmp, dest_path)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: ci-checkout.py SRC DEST")
    src, dest = (os.path.abspath(a) for a in sys.argv[1:3])
    if dest == src or dest.startswith(src + os.sep):
        sys.exit(f"error: {dest} is inside {src}")
    listed = git(src, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split(b"\0")
    files = sorted({os.fsdecode(f) for f in listed if f and os.path.lexists(os.path.join(src, os.fsdecode(f)))})
    dirs = {""}
    for f in files:
        d = os.path.dirname(f)
        while d not in dirs:
            dirs.add(d)
            d = os.path.dirname(d)
    os.makedirs(dest, exist_ok=True)
    written = 0
    for f in files:
        s, d = os.path.join(src, f), os.path.join(dest, f)
        if not same(s, d):
            write(s, d)
            written += 1
    # What DEST holds beyond SRC's files: removed unless git ignores it.
    wanted = set(files)
    foreign = []
    for root, subdirs, names in os.walk(dest):
        rel = os.path.relpath(root, dest)
        rel = "" if rel == "." else rel
        for n in list(subdirs):
            r = os.path.join(rel, n)
            if r not in dirs or os.path.islink(os.path.join(root, n)):
                foreign.append(r + ("/" if not os.path.islink(os.path.join(root, n)) else ""))
                subdirs.remove(n)
        for n in names:
            r = os.path.join(rel, n)
            if r not in wanted:
                foreign.append(r)
    removed = 0
    if foreign:
        out = git(src, "check-ignore", "--no-index", "-z", "--stdin",
                  stdin="\0".join(foreign).encode() + b"\0", ok=(0, 1))
        ignored = {os.fsdecode(p) for p in out.split(b"\0") if p}
        for r in foreign:
            if r not in ignored and r.rstrip("/") not in wanted:
                remove(os.path.join(dest, r.rstrip("/")))
                removed += 1
    print(f"{dest}: {len(files)} files, {written} written, {removed} removed", flush=True)


if __name__ == "__main__":
    main()
