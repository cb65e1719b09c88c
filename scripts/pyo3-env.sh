# Sourced by scripts/setup.sh and scripts/test.sh once .venv exists: the environment in which
# maturin runs cargo when `pip install ./crates/python` builds the extension module, given to
# every other cargo command of setup and of the tests as well.
#
# Why: pyo3's build script runs again whenever one of these variables differs from its last
# run, and then pyo3 and cryptoscope-python are compiled again. Without this, the workspace
# build (none of them set) and maturin's (all set) would compile them for each other twice in
# every run. The signature is maturin's (implementation, version, pointer width).
if [[ -x .venv/bin/python ]]; then
  export PYO3_PYTHON="$PWD/.venv/bin/python" PYTHON_SYS_EXECUTABLE="$PWD/.venv/bin/python" PYO3_BUILD_EXTENSION_MODULE=1
  PYO3_ENVIRONMENT_SIGNATURE=$("$PYO3_PYTHON" -c 'import struct, sys
print("%s-%d.%d-%dbit" % (sys.implementation.name, sys.version_info[0], sys.version_info[1], struct.calcsize("P") * 8))')
  export PYO3_ENVIRONMENT_SIGNATURE
fi
