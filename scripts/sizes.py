#!/usr/bin/env python3
"""The architecture's size limits (ARCHITECTURE.md): no source file over 1,000 lines and no
function over 120 lines outside our own cryptographic code (crates/ciphers, crates/sha3r2),
and main.rs under 500 lines. Prints what exceeds them; exits 1 if anything does."""
import pathlib, re, sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXEMPT = ("crates/ciphers/", "crates/sha3r2/")
FILE_MAX, FN_MAX, MAIN_MAX = 1000, 120, 500


def code_only(text):
    """The text with comments, string and character literals blanked (newlines kept), so
    that braces inside them do not count."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = '"' + hashes
            j = text.find(end, i + 2 + len(hashes))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^'\\])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(lines):
    """(name, first line, line count) of every fn, by brace depth from its signature."""
    out = []
    lines = code_only("\n".join(lines)).split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"\s*(?:pub(?:\([a-z]+\))?\s+)?(?:const\s+|unsafe\s+|async\s+|extern\s+\"C\"\s+)*fn\s+(\w+)", line)
        if not m:
            continue
        depth, seen, j = 0, False, i
        while j < len(lines):
            code = lines[j]
            depth += code.count("{") - code.count("}")
            seen = seen or "{" in code
            if seen and depth <= 0:
                break
            if not seen and code.rstrip().endswith(";"):
                break
            j += 1
        if seen:
            out.append((m.group(1), i + 1, j - i + 1))
    return out


def main():
    bad = []
    for path in sorted(ROOT.glob("crates/**/*.rs")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(EXEMPT) or "/target/" in rel:
            continue
        lines = path.read_text().split("\n")
        n = len(lines) - 1
        limit = MAIN_MAX if rel == "crates/cli/src/main.rs" else FILE_MAX
        if n > limit:
            bad.append(f"{rel}: {n} lines (limit {limit})")
        for name, first, count in functions(lines):
            if count > FN_MAX:
                bad.append(f"{rel}:{first}: fn {name} is {count} lines (limit {FN_MAX})")
    for b in bad:
        print(b)
    print(f"{len(bad)} over the limits" if bad else "every file and function within the limits")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
