# Convenience targets; the README's two commands are scripts/setup.sh and scripts/test.sh.
B := target/release/cryptoscope

.PHONY: all build run quick test lint fmt fuzz bench-stability bench-crosscheck
all: build
build:
	cargo build --release --workspace --locked
run: build
	$(B) run
quick: build
	$(B) run --quick
test:
	bash scripts/test.sh
# Open-ended fuzzing (FUZZ_SECONDS per target, default 20); finds go into fuzz/regressions/.
fuzz:
	bash scripts/fuzz.sh
lint:
	cargo fmt --all -- --check
	cargo clippy --release --workspace --all-targets -- -D warnings
fmt:
	cargo fmt --all
# Two consecutive quick runs; how many medians (ops >= 10 µs) agree within 5 %.
bench-stability: build
	$(B) run --quick --quiet --json /tmp/cs-stab-a.json >/dev/null
	$(B) run --quick --quiet --json /tmp/cs-stab-b.json >/dev/null
	python3 scripts/stability.py /tmp/cs-stab-a.json /tmp/cs-stab-b.json
# Our median against an independent wall-clock measurement of the same function.
bench-crosscheck: build
	bash scripts/crosscheck.sh
