#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lint: formatting, licence lines, banned functions.  Exit 1 on any finding.
set -u
cd "$(dirname "$0")/.." || exit 1
rc=0
files=$(git ls-files '*.c' '*.h')

# Formatting differs between clang-format majors: the tree follows one.
clang_format_major=14
have=$(clang-format --version 2>/dev/null | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$have" != "$clang_format_major" ]; then
	echo "clang-format $clang_format_major is needed (found '${have:-none}'):" \
		"apt-get install clang-format-$clang_format_major"
	exit 1
fi

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

# Shell scripts (sourced libraries followed, see .shellcheckrc) and Python.
if command -v shellcheck >/dev/null; then
	# shellcheck disable=SC2046 # one word per file
	shellcheck -x -S warning $(git ls-files '*.sh') || rc=1
else
	echo "shellcheck not found: apt-get install shellcheck"
	rc=1
fi
if command -v pyflakes3 >/dev/null; then
	# shellcheck disable=SC2046
	pyflakes3 $(git ls-files '*.py') || rc=1
else
	echo "pyflakes3 not found: apt-get install pyflakes3"
	rc=1
fi

# The daemon's folders build on each other: no include cycle between them.
python3 scripts/daemon_layers.py || rc=1

# Every path of the tree the documentation names in backticks exists.
python3 scripts/doc_paths.py || rc=1

# Unbounded or error-swallowing libc calls.
banned='\b(strcpy|strcat|sprintf|vsprintf|gets|atoi|atol|atoll)\s*\('
hits=$(grep -nE "$banned" $files | grep -v 'check.sh' || true)
if [ -n "$hits" ]; then
	echo "banned functions:"
	echo "$hits"
	rc=1
fi

# What the libraries compile in reads the environment with secure_getenv():
# in a set-uid or set-capability program it is the caller's, not to be
# obeyed.
# shellcheck disable=SC2046 # one word per file
hits=$(grep -nE '\bgetenv\s*\(' $(git ls-files 'libibverbs/*.[ch]' \
	'librdmacm/*.[ch]' 'libcommon/*.[ch]' 'common/*.[ch]') || true)
if [ -n "$hits" ]; then
	echo "getenv in the libraries (secure_getenv instead):"
	echo "$hits"
	rc=1
fi

[ $rc -eq 0 ] && echo "check.sh: clean"
exit $rc
