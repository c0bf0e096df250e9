#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build and run the whole test suite: lint, a normal build with every test,
# then an ASan/UBSan build running the unit and functional tests.
#   scripts/test.sh            everything
#   scripts/test.sh -L unit    pass extra arguments to ctest (normal build)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

scripts/check.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs" "$@"

if [ $# -eq 0 ] && [ "${SOFTRDMA_SKIP_SANITIZERS:-0}" != 1 ]; then
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug \
		-DSOFTRDMA_ASAN=ON >/dev/null
	cmake --build build-asan -j"$jobs"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir build-asan --output-on-failure -j"$jobs" \
		-L 'unit|func'
fi
