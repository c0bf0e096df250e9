#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build and run the whole test suite: lint, a normal build with every test,
# Release builds with gcc and clang that only compile, then ASan/UBSan and
# TSan builds running the unit and functional tests.  Every build here
# treats warnings as errors (SOFTRDMA_WERROR).
#   scripts/test.sh            everything
#   scripts/test.sh -L unit    pass extra arguments to ctest (normal build)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

scripts/check.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSOFTRDMA_WERROR=ON \
	>/dev/null
cmake --build build -j"$jobs"
# The fuzz tests leave one line each (tests/fuzz/fuzz_run.sh): shown here,
# passed or not, so the log says how much fuzzing each target did.
rm -rf build/fuzz-summary
rc=0
ctest --test-dir build --output-on-failure -j"$jobs" "$@" || rc=$?
if compgen -G 'build/fuzz-summary/*.summary' >/dev/null; then
	cat build/fuzz-summary/*.summary
fi
[ "$rc" -eq 0 ] || exit "$rc"

if [ $# -eq 0 ] && [ "${SOFTRDMA_SKIP_WARNINGS_BUILDS:-0}" != 1 ]; then
	# Compile only, a minute or two each: at -O3 gcc's flow analysis
	# warns where it does not at -O2, clang warns where gcc does not
	# (the Debug builds below cover -O0), and distributions build with
	# either at any level.
	cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release \
		-DSOFTRDMA_WERROR=ON >/dev/null
	cmake --build build-release -j"$jobs"
	if command -v clang >/dev/null; then
		cmake -S . -B build-clang -DCMAKE_C_COMPILER=clang \
			-DCMAKE_BUILD_TYPE=Release -DSOFTRDMA_WERROR=ON \
			>/dev/null
		cmake --build build-clang -j"$jobs"
	fi
fi

if [ $# -eq 0 ] && [ "${SOFTRDMA_SKIP_SANITIZERS:-0}" != 1 ]; then
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug \
		-DSOFTRDMA_WERROR=ON -DSOFTRDMA_ASAN=ON >/dev/null
	cmake --build build-asan -j"$jobs"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir build-asan --output-on-failure -j"$jobs" \
		-L 'unit|func'

	# ThreadSanitizer over the library, the daemon and the tests.  Daemons
	# started by the library write to /dev/null, so every process logs its
	# reports under build-tsan/tsan-logs and any report fails the stage.
	# proto_client_death counts the daemon's mappings, which TSan's own
	# shadow memory keeps splitting; the stale_pid tests need a pid to be
	# free for reuse, and TSan starts a thread in forked children, which
	# takes it: not run here.
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug \
		-DSOFTRDMA_WERROR=ON -DSOFTRDMA_TSAN=ON >/dev/null
	cmake --build build-tsan -j"$jobs"
	rm -rf build-tsan/tsan-logs
	mkdir -p build-tsan/tsan-logs
	rc=0
	# A context with in-place MRs runs a placement thread, and TSan stops
	# a child forked from a threaded process that starts one of its own:
	# placement is off here but in func.place_owner, whose parent opens a
	# device and registers nothing before it forks.
	SOFTRDMA_PLACE=0 \
	TSAN_OPTIONS="suppressions=$PWD/scripts/tsan.supp:log_path=$PWD/build-tsan/tsan-logs/tsan" \
		ctest --test-dir build-tsan --output-on-failure -j"$jobs" \
		-L 'unit|func' \
		-E '^(proto_client_death|func\.(mr|odp)_stale_pid)$' ||
		rc=$?
	if compgen -G 'build-tsan/tsan-logs/*' >/dev/null; then
		cat build-tsan/tsan-logs/*
		rc=1
	fi
	exit $rc
fi
