#!/usr/bin/env bash
# Cross-builds hearth_kernels and the kernels tests for aarch64 and runs them under qemu-user,
# so the NEON paths (plain and dotprod) are checked against the scalar reference on x86 hosts.
#   tests/neon/run.sh SOURCE_DIR BUILD_DIR [catch2 test filter...]
# Exit status 77 (skipped) when the cross compiler or qemu-aarch64 is missing.
set -euo pipefail
src="$1"
build="$2"
shift 2
for tool in aarch64-linux-gnu-g++ qemu-aarch64 cmake; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIPPED: $tool not found (scripts/setup installs g++-aarch64-linux-gnu and qemu-user)"
    exit 77
  fi
done
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$src/tests/neon/cross" -B "$build" -DHEARTH_ROOT="$src" \
    -DCMAKE_TOOLCHAIN_FILE="$src/tests/neon/aarch64.cmake" -DCMAKE_BUILD_TYPE=Release \
    $(command -v ninja >/dev/null && echo -G Ninja) >/dev/null
fi
cmake --build "$build" --target hearth_test_kernels -j "${HEARTH_NEON_JOBS:-2}"
# qemu's default CPU model ("max") has dotprod, so scalar, neon and neon_dotprod all run.
exec qemu-aarch64 -L /usr/aarch64-linux-gnu "$build/hearth_test_kernels" "$@"
