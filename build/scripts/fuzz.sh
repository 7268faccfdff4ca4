#!/usr/bin/env bash
# Runs every fuzz target in the module for a short time (default 6s each, as make test runs it).
# The seed corpora already run in `go test`; this explores beyond them.
set -euo pipefail
cd "$(dirname "$0")/../.."
fuzztime=${1:-6s}
count=0
while read -r pkg; do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	grep -l '^func Fuzz' "$dir"/*_test.go >/dev/null 2>&1 || continue
	for name in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo "fuzz: $pkg $name ($fuzztime)"
		# Minimizing a new interesting input may take up to a minute by
		# default; if -fuzztime runs out meanwhile, Go reports "context
		# deadline exceeded" without any failing input (a known go test
		# quirk, not a finding). Minimization is bounded, and that one
		# signature, with no failing input written, gets one more run.
		for attempt in 1 2; do
			if go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" -fuzzminimizetime=2s "$pkg" >/tmp/yett-fuzz.log 2>&1; then
				break
			fi
			if [ "$attempt" = 1 ] && grep -q "context deadline exceeded" /tmp/yett-fuzz.log &&
				! grep -q "Failing input written to" /tmp/yett-fuzz.log; then
				echo "fuzz: $pkg $name: the fuzzing time ran out during minimization; running it again"
				continue
			fi
			cat /tmp/yett-fuzz.log
			echo "fuzz: $pkg $name FAILED (the failing input is saved under $dir/testdata/fuzz/$name)"
			exit 1
		done
		count=$((count + 1))
	done
done < <(go list ./...)
echo "fuzz: $count targets passed"
