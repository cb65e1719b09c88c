#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/seeds/TARGET/) from the repository's
own files: excerpts of vectors/, reference/published.json, and the sampling plans the CLI
sends. Seeds captured from running programs (callgrind dumps of a small C program, worker
output, a results file) are committed as they are and listed in docs/fuzzing.md; this
script leaves them alone. Run from anywhere: python3 fuzz/make_seeds.py
"""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
VEC = ROOT / "vectors"
SEEDS = ROOT / "fuzz" / "seeds"


def write(target, name, data):
    d = SEEDS / target
    d.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (d / name).write_bytes(data)


def records(path, keep):
    """The header and the first `keep` records of a `Key = value` known-answer file."""
    text = path.read_text()
    blocks = text.split("\n\n")
    head = [b for b in blocks if b.strip().startswith(("#", "["))][:2]
    body = [b for b in blocks if not b.strip().startswith(("#", "["))]
    # Short records only: the seeds stay small.
    body = [b for b in body if len(b) < 600][:keep]
    return "\n\n".join(head + body) + "\n"


# hash_vectors: first byte 0 = a CAVP file, 1 = a SHA-3 competition file.
for sel, rel in [
    (0, "hash/cavp/SHA256ShortMsg.rsp"),
    (0, "hash/cavp/SHAKE128ShortMsg.rsp"),
    (0, "hash/cavp/SHA3_512ShortMsg.rsp"),
    (0, "hash/blake3/blake3.txt"),
    (0, "hash/k12/kt128.txt"),
    (0, "hash/sha256d/sha256d.txt"),
    (0, "hash/blake2/blake2s.txt"),
    (0, "hash/ascon/asconhash.txt"),
    (1, "hash/sha3-round2/blake/ShortMsgKAT_256.txt"),
    (1, "hash/sha3-round2/skein/ShortMsgKAT_256.txt"),
]:
    name = rel.replace("/", "_")
    write("hash_vectors", name, bytes([sel]) + records(VEC / rel, 6).encode())

# extremely_long: every candidate's file (they differ in Text and MD only, but are tiny).
for p in sorted((VEC / "hash/sha3-round2").glob("*/ExtremelyLongMsgKAT_256.txt"))[:3]:
    write("extremely_long", p.parent.name, p.read_bytes())


def small_json(rel):
    """A JSON vector file with its arrays cut to two entries and maps to three."""
    v = json.loads((VEC / rel).read_text())

    def cut(x):
        if isinstance(x, list):
            return [cut(e) for e in x[:2]]
        if isinstance(x, dict):
            return {k: cut(e) for k, e in list(x.items())[:3] if True}
        return x

    if rel.startswith("kem/"):
        keep = {k: v[k] for k in list(v)[:2]}
        for k in ("ML-KEM-768", "HQC-128"):
            if k in v:
                keep[k] = v[k]
        return json.dumps(keep, indent=1)
    if isinstance(v, dict):
        return json.dumps({k: cut(e) if isinstance(e, list) else e for k, e in v.items()}, indent=1)
    return json.dumps(cut(v), indent=1)


# vector_json: selector % 10 = 0, 1 kat_digest (| 0x80: the ML-KEM-768 entry), 2 x25519,
# 3 p256, 4 ffdhe2048, 5..9 block ciphers (GIFT-64, GIFT-128, GIFTb-128, Camellia-128,
# Camellia-256).
files = [
    "kem/liboqs-kats.json",
    "kem/liboqs-0.13.0-kats.json",
    "kex/x25519-rfc7748.json",
    "kex/p256-ecdh.json",
    "kex/ffdhe2048-rfc7919.json",
]
for i, rel in enumerate(files):
    text = small_json(rel)
    sels = [i, i | 0x80] if i < 2 else [i]
    for s in sels:
        write("vector_json", f"{s:02x}_{pathlib.Path(rel).stem}", bytes([s]) + text.encode())


def small_cipher(rel):
    """A block cipher vector file with one row of each (cipher, convention) it has."""
    rows = json.loads((VEC / "block-ciphers" / rel).read_text())["vectors"]
    seen, keep = set(), []
    for r in rows:
        k = (r.get("cipher"), r.get("convention"))
        if k not in seen:
            seen.add(k)
            keep.append(r)
    return json.dumps({"vectors": keep}, indent=1)


for rel, n in [("gift.json", 5), ("gift.json", 6), ("gift.json", 7), ("camellia.json", 8), ("camellia.json", 9)]:
    write("vector_json", f"{n:02x}_{rel}", bytes([n]) + small_cipher(rel).encode())

# validate_dir: selector = which file is replaced (the order of VECTOR_FILES in
# fuzz/src/lib.rs), 7 = the first hash file.
order = files + ["block-ciphers/gift.json", "block-ciphers/camellia.json"]
for i, rel in enumerate(order):
    text = small_json(rel) if i < 5 else small_cipher(pathlib.Path(rel).name)
    write("validate_dir", f"{i}_{pathlib.Path(rel).stem}", bytes([i]) + text.encode())
write("validate_dir", "7_sha256", bytes([7]) + records(VEC / "hash/cavp/SHA256ShortMsg.rsp", 4).encode())

# external_vectors: the Wycheproof AEAD files, the first two and the last test group with
# two tests each (the last ChaCha20-Poly1305 groups hold the invalid nonce sizes).
for rel in ["aead/aes_gcm_test.json", "aead/chacha20_poly1305_test.json"]:
    v = json.loads((VEC / rel).read_text())
    groups = v["testGroups"][:2] + v["testGroups"][-1:]
    v["testGroups"] = [dict(g, tests=g["tests"][:2]) for g in groups]
    v["notes"] = {}
    write("external_vectors", pathlib.Path(rel).stem.replace("_test", "_small") + ".json", json.dumps(v, indent=1))

# published: the repository's file and one entry of each family.
pub = (ROOT / "reference/published.json").read_text()
write("published", "published.json", pub)
pv = json.loads(pub)
write("published", "one_each.json", json.dumps({k: v[:1] for k, v in pv.items() if isinstance(v, list)}, indent=1))

# plan: Plan::standard(12 s), Plan::quick(1 s) and `run --samples 50`, as the CLI sends them.
for name, plan in [
    ("standard", dict(min_samples=100, max_samples=1000, target_rel_ci=0.01, budget=dict(secs=12, nanos=0),
                      warmup=dict(secs=0, nanos=200000000), floor_samples=5)),
    ("quick", dict(min_samples=20, max_samples=200, target_rel_ci=0.02, budget=dict(secs=1, nanos=0),
                   warmup=dict(secs=0, nanos=20000000), floor_samples=3)),
    ("samples", dict(min_samples=50, max_samples=50, target_rel_ci=0.0, budget=dict(secs=2**64 // 4 - 1, nanos=0),
                     warmup=dict(secs=0, nanos=20000000), floor_samples=50)),
]:
    write("plan", name, json.dumps(plan, separators=(",", ":")))
# secrets: command lines as `run --db ...` records them (first byte: which argument gets the
# canary; then the arguments, NUL-separated), with every form of secret the scrubber knows.
write("secrets", "command_line", b"\x03" + b"\0".join([
    b"cryptoscope", b"run", b"--db", b"postgresql://bench:p@ss/w:rd@127.0.0.1:5432/postgres?password=x&sslmode=disable",
    b"--api-token=abc", b"--key-file", b"k.pem", b"host=h password='a \\' b' dbname=d",
]))
write("secrets", "assignments", b"\x00PGPASSWORD=x GITHUB_TOKEN=y a=https://u:v@h b=postgres://w:z@k")
print("seeds written under", SEEDS)
