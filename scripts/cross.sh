# Sourced by scripts/test.sh (and by hand, see README "On an ARM machine"): the settings
# that cross-compile for AArch64 and s390x with Debian's toolchains and run the results
# under qemu-user. Cargo reads the linker and runner per target; the cc and cmake build
# scripts (liboqs, AWS-LC, PQClean, our OpenSSL shim) read CC_<target>; openssl-sys finds
# Debian's arm64 libssl-dev (multiarch) through pkg-config.
#
# qemu-aarch64 runs without -L: Debian's arm64 libraries (libc6:arm64, pulled in by
# libssl-dev:arm64) are at their multiarch paths, and the loader and libc must come from
# the same package. With -L /usr/aarch64-linux-gnu qemu would take the cross toolchain's
# loader and the multiarch libc, and programs that start a thread hang.
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=qemu-aarch64
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
export PKG_CONFIG_ALLOW_CROSS=1
export PKG_CONFIG_aarch64_unknown_linux_gnu="env PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config"
# s390x: only the cross toolchain's own libc, no multiarch packages, so -L is right here.
export CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_LINKER=s390x-linux-gnu-gcc
export CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_RUNNER="qemu-s390x -L /usr/s390x-linux-gnu"
export CC_s390x_unknown_linux_gnu=s390x-linux-gnu-gcc
export AR_s390x_unknown_linux_gnu=s390x-linux-gnu-ar
