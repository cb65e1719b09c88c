#!/usr/bin/env bash
# One command for a fresh Debian/Ubuntu machine: install what is missing, build cryptoscope
# in release mode, and run the default suite (gate + measure, summary table, JSON results).
#
#   bash scripts/setup.sh            # install, build, run the default suite (~20 min)
#   bash scripts/setup.sh --quick    # same with `run --quick --memory` (~3 min)
#   bash scripts/setup.sh --no-run   # install and build only
#   bash scripts/setup.sh --timings  # also cargo's --timings report of each build
#
# The flags above come in any order; the arguments after them are passed to `cryptoscope run`.
# With CRYPTOSCOPE_STEP_TIMES set (scripts/test.sh), each part's time is added to that file.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/steps.sh

run_mode=full
timings=()
while (($#)); do
  case $1 in
    --quick) run_mode=quick ;;
    --no-run) run_mode=none ;;
    --timings) timings=(--timings) ;;
    *) break ;;
  esac
  shift
done

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Debian packages the build and the tests need: a C toolchain, CMake and libclang for
# liboqs (bindgen), OpenSSL headers, pkg-config, valgrind (instruction counts in tests).
# chromium renders the HTML report in the test suite; postgresql is the team store's
# server, started on loopback by the tests.
# python3 and its venv module: the Python package (PyO3, built by maturin from PyPI).
# `cryptoscope tls`: nginx (the OpenSSL peer), the openssl command, iproute2 (namespaces,
# veth, tc). `cryptoscope tunnel`: OpenVPN, strongSwan (charon with kernel-libipsec, swanctl,
# the openssl plugin), wireguard-go and wg, OpenSSH client and server, iperf3, ping;
# procps for the tests' leftover checks. The tests cross-compile for AArch64 (the whole
# tool, and our ciphers' NEON code) and s390x (big-endian: our own code and PQClean) with
# Debian's toolchains and run the results under qemu-user; the AArch64 OpenSSL provider
# links Debian's arm64 libssl-dev (a multiarch package: dpkg --add-architecture arm64).
# stress-ng keeps both cores busy for the tests-under-load check (docs/testing.md).
# iptables: the NFQUEUE rule of `tls --delay/--loss`'s emulator on kernels without netem.
# slurmctld, slurmd, slurm-client and munge: tests/slurm.rs starts a single-node Slurm of
# its own (its own munge key, ports and state directory) and runs scripts/slurm.sh on it.
packages=(build-essential cmake libclang-dev clang libssl-dev pkg-config valgrind git ca-certificates chromium postgresql python3 python3-venv
          nginx-light openssl iproute2 iptables
          openvpn strongswan-charon strongswan-swanctl libcharon-extra-plugins libstrongswan-standard-plugins
          wireguard-go wireguard-tools openssh-client openssh-server iperf3 iputils-ping procps
          gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user stress-ng
          gcc-s390x-linux-gnu libc6-dev-s390x-cross
          slurmctld slurmd slurm-client munge)
# On x86-64 machines, the arm64 OpenSSL for the cross-compiled tool (on an ARM machine it
# is libssl-dev above).
if [[ "$(dpkg --print-architecture 2>/dev/null)" == amd64 ]]; then
  packages+=(libssl-dev:arm64)
fi
# scripts/apt-install.sh: no service is started while the packages install, and none that
# they enable is left enabled (nginx, OpenSSH, PostgreSQL, Slurm, munge, OpenVPN, strongSwan:
# the tests start their own, on loopback or in network namespaces, and stop them).
apt_install() {
  if [[ $EUID -eq 0 ]]; then SUDO=(); elif command -v sudo >/dev/null; then SUDO=(sudo); else
    echo "error: need root (or sudo) to install: $*" >&2; exit 2; fi
  "${SUDO[@]}" bash scripts/apt-install.sh "$@"
}
# Installs what is missing of the packages above, and CPython's test suite.
install_packages() {
  local p missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    if [[ " ${missing[*]} " == *":arm64 "* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
      say "adding arm64 as a foreign architecture (Debian multiarch: libssl-dev:arm64 for the AArch64 build)"
      if [[ $EUID -eq 0 ]]; then dpkg --add-architecture arm64; else sudo dpkg --add-architecture arm64; fi
    fi
    say "installing missing packages: ${missing[*]}"
    apt_install "${missing[@]}"
  fi

  # CPython's own test_hashlib, which crates/python/tests runs against cryptoscope.hashlib:
  # Debian ships the standard library's tests apart, as libpython3.X-testsuite for python3's X.
  pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
  if [[ -n "$pyver" ]] && ! dpkg-query -W -f='${Status}' "libpython$pyver-testsuite" 2>/dev/null | grep -q "install ok installed"; then
    say "installing CPython's test suite (libpython$pyver-testsuite: test_hashlib for the Python package's tests)"
    apt_install "libpython$pyver-testsuite"
  fi
}
step "  setup: Debian packages" install_packages

# Rust: rust-version in Cargo.toml is 1.89; Debian 12's packaged cargo is too old.
if ! command -v cargo >/dev/null; then
  [[ -x "$HOME/.cargo/bin/cargo" ]] && export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null; then
  echo "error: no Rust toolchain; install one with rustup (https://rustup.rs), Rust >= 1.89" >&2
  exit 2
fi
ver=$(rustc -V | awk '{print $2}')
if [[ "$(printf '%s\n1.89.0\n' "$ver" | sort -V | head -1)" != "1.89.0" ]]; then
  echo "error: Rust $ver is too old; cryptoscope needs >= 1.89 (rustup update)" >&2
  exit 2
fi

# The AArch64 and s390x standard libraries, for the cross-compiled tests (scripts/test.sh).
for target in aarch64-unknown-linux-gnu s390x-unknown-linux-gnu; do
  [[ "$(uname -m)" == "${target%%-*}" ]] && continue
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    if command -v rustup >/dev/null; then
      say "adding the Rust target $target (the tests cross-compile for it and run it under qemu)"
      rustup target add "$target" >/dev/null
    else
      echo "error: the tests cross-compile for $target; install rustup or that target's standard library" >&2
      exit 2
    fi
  fi
done
# rustfmt, for the formatting check of the test command.
if ! cargo fmt --version >/dev/null 2>&1 && command -v rustup >/dev/null; then
  say "adding the rustfmt component (the test command checks formatting)"
  rustup component add rustfmt >/dev/null
fi
# clippy, for the lint check of the test command.
if ! cargo clippy --version >/dev/null 2>&1 && command -v rustup >/dev/null; then
  say "adding the clippy component (the test command runs clippy)"
  rustup component add clippy >/dev/null
fi

target_dir=${CARGO_TARGET_DIR:-$PWD/target}
say "building (release; liboqs, AWS-LC and OpenSSL 3.5/4.0 take several minutes the first time)"
step "  setup: the workspace (cargo build --release --workspace)" \
  cargo build --release --workspace --locked "${timings[@]}"

# The TLS driver linked to OpenSSL 3.5 and 4.0 (`tls --peer openssl-3.5`, `openssl-4.0`):
# workspaces of their own (one libssl per build graph), built into the same target directory.
# They link the OpenSSL that the openssl-3.5 and openssl-4.0 providers' build just built
# (the same openssl-src crates, static libssl and libcrypto): OPENSSL_NO_VENDOR turns off
# openssl-sys's own build of those sources, OPENSSL_DIR names the providers' install. Where
# that install is missing (a vendored build failed), openssl-sys builds its own as before.
# The variables carry the target's prefix (X86_64_UNKNOWN_LINUX_GNU_OPENSSL_DIR), which
# openssl-sys reads first: aws-lc-sys, shared with the main workspace's build, watches the
# bare OPENSSL_DIR (a system AWS-LC there?), and a value that differs between the two builds
# would make each compile AWS-LC's crates again after the other.
openssl_installs() {
  # The out directory of the providers' build script, from cargo's record of it (no build).
  cargo build --release --workspace --locked --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line) if line.startswith("{") else {}
    if m.get("reason") == "build-script-executed" and "openssl-vendored" in m.get("package_id", ""):
        print(m["out_dir"])'
}
tls_workspace() {
  local v=$1 install=$2 prefix
  prefix=$(rustc -vV | sed -n 's/^host: //p' | tr 'a-z-' 'A-Z_')
  if [[ -n "$install" && -f "$install/lib/libssl.a" && -f "$install/lib/libcrypto.a" ]]; then
    env "${prefix}_OPENSSL_NO_VENDOR=1" "${prefix}_OPENSSL_STATIC=1" "${prefix}_OPENSSL_DIR=$install" \
      cargo build --release --locked --manifest-path "crates/tls-openssl$v/Cargo.toml" --target-dir "$target_dir" "${timings[@]}"
  else
    say "OpenSSL ${v:0:1}.${v:1} of the providers' build is missing: crates/tls-openssl$v builds its own"
    cargo build --release --locked --manifest-path "crates/tls-openssl$v/Cargo.toml" --target-dir "$target_dir" "${timings[@]}"
  fi
}
out_dir=$(openssl_installs | tail -1)
step "  setup: TLS driver on OpenSSL 3.5 (crates/tls-openssl35)" tls_workspace 35 "${out_dir:+$out_dir/openssl-3.5/install}"
step "  setup: TLS driver on OpenSSL 4.0 (crates/tls-openssl40)" tls_workspace 40 "${out_dir:+$out_dir/openssl-4.0/install}"

# The Python package, `pip install`ed from the repository into .venv: maturin comes from PyPI
# in pip's build environment and compiles the PyO3 crate in a target directory of its own
# (TARGET/python-package). It builds that crate alone, so cargo resolves the crate's
# dependencies otherwise than for the workspace, and gives pyo3's build script its own
# interpreter variables: in the shared directory, this build and the workspace's would
# compile pyo3 and the extension module again after each other, every time.
python_package() {
  say "installing the Python package into .venv (pip install ./crates/python)"
  [[ -x .venv/bin/python ]] || python3 -m venv .venv
  CARGO_TARGET_DIR="$target_dir/python-package" \
    .venv/bin/python -m pip install -q --disable-pip-version-check ./crates/python
}
step "  setup: Python package (pip install ./crates/python)" python_package

bin=target/release/cryptoscope
[[ -n "${CARGO_TARGET_DIR:-}" ]] && bin="$CARGO_TARGET_DIR/release/cryptoscope"
case "$run_mode" in
  full)  say "running the default suite (timing and the memory pass)"; exec "$bin" run --memory "$@" ;;
  quick) say "running the default suite (quick, with the memory pass)"; exec "$bin" run --quick --memory "$@" ;;
  none)  say "built: $bin" ;;
esac
