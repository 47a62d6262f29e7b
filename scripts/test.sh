#!/usr/bin/env bash
# The whole test suite: a warnings-as-errors build with ctest, the same under
# AddressSanitizer + UndefinedBehaviorSanitizer, again under ThreadSanitizer
# (all but the replay tests, whose OpenMP runtime TSan cannot see into), and
# a short run of every fuzz target (clang/libFuzzer). Set OPDB_FUZZ_SECONDS=0
# to skip fuzzing. The oracle.* tests do not run opdb (they regenerate the
# goldens from the oracles), so they run in the first build only.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
fuzz_seconds=${OPDB_FUZZ_SECONDS:-6}

echo "== build (gcc, -Werror) and test"
bash scripts/build.sh build
(cd build && ctest --output-on-failure -j"$jobs")

echo "== build with ASan+UBSan and test"
bash scripts/build.sh build-asan -DOPDB_SANITIZE=ON -DOPDB_BUILD_PERF=OFF
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
   ctest --output-on-failure -j"$jobs" -E "^oracle\.")

echo "== build with ThreadSanitizer and test (the threaded readers, merges and writers)"
bash scripts/build.sh build-tsan -DOPDB_SANITIZE_THREAD=ON -DOPDB_BUILD_PERF=OFF
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j"$jobs" -E "^oracle\.|bench|replay|cuda|chromium|parse_then_validate")

if [ "$fuzz_seconds" != 0 ] && [ -f tests/fuzz/run.sh ]; then
  echo "== fuzz (${fuzz_seconds}s per target)"
  CC=clang bash scripts/build.sh build-fuzz -DOPDB_BUILD_FUZZ=ON -DOPDB_BUILD_PERF=OFF -DOPDB_BUILD_TESTS=OFF
  bash tests/fuzz/run.sh build-fuzz "$fuzz_seconds"
fi
echo "== all tests passed"
