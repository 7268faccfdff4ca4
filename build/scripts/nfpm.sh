#!/usr/bin/env bash
# Builds nfpm v2.45.2 (the Debian packager `make package` uses) from the Go
# module proxy, pinned by build/tools/nfpm/go.{mod,sum}, and caches the
# binary in .cache/nfpm/ (gitignored). Prints the binary's path.
# A cold build takes about a minute on two cores; a warm one is a stat.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tooldir="$root/build/tools/nfpm"
# The cache key is the pinned module graph: a changed go.sum means a rebuild.
key="$(cat "$tooldir/go.mod" "$tooldir/go.sum" | sha256sum | cut -c1-16)"
out="$root/.cache/nfpm/nfpm-v2.45.2-$key"
if [[ -x "$out" ]]; then
  echo "$out"
  exit 0
fi
mkdir -p "$root/.cache/nfpm"
exec 9>"$root/.cache/nfpm/build.lock"
flock 9
if [[ -x "$out" ]]; then
  echo "$out"
  exit 0
fi
echo "building nfpm v2.45.2 into $out (first run only, about a minute)" >&2
(
  cd "$tooldir"
  # The outer Makefile's -tags=webkit2_41 is not meant for nfpm.
  GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -trimpath -o "$out.tmp" github.com/goreleaser/nfpm/v2/cmd/nfpm
) >&2
mv "$out.tmp" "$out"
echo "$out"
