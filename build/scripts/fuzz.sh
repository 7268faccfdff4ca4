#!/usr/bin/env bash
# Runs every fuzz target in the module for a short time (default 10s each).
# The seed corpora already run in `go test`; this explores beyond them.
set -euo pipefail
cd "$(dirname "$0")/../.."
fuzztime=${1:-10s}
count=0
while read -r pkg; do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	grep -l '^func Fuzz' "$dir"/*_test.go >/dev/null 2>&1 || continue
	for name in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo "fuzz: $pkg $name ($fuzztime)"
		go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" "$pkg" >/tmp/yett-fuzz.log 2>&1 || {
			cat /tmp/yett-fuzz.log
			echo "fuzz: $pkg $name FAILED (the failing input is saved under $dir/testdata/fuzz/$name)"
			exit 1
		}
		count=$((count + 1))
	done
done < <(go list ./...)
echo "fuzz: $count targets passed"
