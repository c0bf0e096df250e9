#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Run ctest tests over and over, optionally beside CPU hogs, and report
# per test: runs, failures, and the slowest and median run time.
#
#   scripts/soak.sh [-b BUILD] [-n RUNS] [-H HOGS] [-o LOG] REGEX
#
# Each test runs RUNS times in a row (not in parallel with the others), so
# a failure is the test's own, not a side effect of a neighbour; HOGS busy
# loops (default 2, as many as this machine has CPUs) compete with it the
# whole time.  Every run also gets a line in LOG.runs (test, run, exit
# status, seconds), so a soak stopped early still says how far each test
# got.  Exit status: 0 when every run passed (or skipped), 1 else.
set -u

build=build
runs=50
hogs=2
log=soak.log

while getopts "b:n:H:o:" opt; do
	case $opt in
	b) build=$OPTARG ;;
	n) runs=$OPTARG ;;
	H) hogs=$OPTARG ;;
	o) log=$OPTARG ;;
	*) echo "usage: $0 [-b BUILD] [-n RUNS] [-H HOGS] [-o LOG] REGEX" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -ne 1 ]; then
	echo "usage: $0 [-b BUILD] [-n RUNS] [-H HOGS] [-o LOG] REGEX" >&2
	exit 2
fi
regex=$1

hog_pids=()
stop_hogs() {
	for p in "${hog_pids[@]}"; do
		kill "$p" 2>/dev/null
	done
}
trap stop_hogs EXIT
for ((i = 0; i < hogs; i++)); do
	(while :; do :; done) &
	hog_pids+=($!)
done

mapfile -t tests < <(ctest --test-dir "$build" -N -R "$regex" |
	sed -n 's/^ *Test *#[0-9]*: //p')
if [ ${#tests[@]} -eq 0 ]; then
	echo "no test matches $regex" >&2
	exit 2
fi

: >"$log"
: >"$log.runs"
bad=0
printf '%-40s %5s %5s %5s %8s %8s\n' test runs pass skip median_s max_s
for t in "${tests[@]}"; do
	pass=0 skip=0 fail=0
	times=()
	for ((r = 1; r <= runs; r++)); do
		start=$(date +%s.%N)
		ctest --test-dir "$build" -R "^${t}\$" --output-on-failure \
			>"$log.last" 2>&1
		rc=$?
		end=$(date +%s.%N)
		times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')")
		echo "$t $r $rc ${times[-1]}" >>"$log.runs"
		if grep -q "Not Run\|Skipped" "$log.last"; then
			skip=$((skip + 1))
		elif [ $rc -eq 0 ]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			{
				echo "=== $t run $r failed"
				cat "$log.last"
			} >>"$log"
			break
		fi
	done
	stats=$(printf '%s\n' "${times[@]}" | sort -n |
		awk '{ a[NR] = $1 } END { printf "%8.1f %8.1f", a[int((NR + 1) / 2)], a[NR] }')
	printf '%-40s %5d %5d %5d %s\n' "$t" $((pass + skip + fail)) $pass \
		$skip "$stats"
	[ $fail -ne 0 ] && bad=1
done
exit $bad
