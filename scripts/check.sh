#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lint: formatting, licence lines, banned functions.  Exit 1 on any finding.
set -u
cd "$(dirname "$0")/.."
rc=0
files=$(git ls-files '*.c' '*.h')

bad=""
for f in $files; do
	clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad="$bad $f"
done
if [ -n "$bad" ]; then
	echo "clang-format: not formatted:$bad"
	rc=1
fi

for f in $(git ls-files '*.c' '*.h' '*.sh' '*.py' 'CMakeLists.txt' '*.cmake'); do
	head -n 3 "$f" | grep -q 'SPDX-License-Identifier' ||
		{ echo "missing SPDX line: $f"; rc=1; }
done

# Unbounded or error-swallowing libc calls.
banned='\b(strcpy|strcat|sprintf|vsprintf|gets|atoi|atol|atoll)\s*\('
hits=$(grep -nE "$banned" $files | grep -v 'check.sh' || true)
if [ -n "$hits" ]; then
	echo "banned functions:"
	echo "$hits"
	rc=1
fi

[ $rc -eq 0 ] && echo "check.sh: clean"
exit $rc
