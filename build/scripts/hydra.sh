#!/usr/bin/env bash
# Builds Ory Hydra v2.3.0 (the real OAuth provider the oauth tests run against)
# from the Go module proxy, pinned by build/tools/hydra/go.{mod,sum}, and caches
# the binary in .cache/hydra/ (gitignored). Prints the binary's path.
# A cold build takes about 3-4 min on two cores; a warm one is a stat.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tooldir="$root/build/tools/hydra"
# The cache key is the pinned module graph: a changed go.sum means a rebuild.
key="$(cat "$tooldir/go.mod" "$tooldir/go.sum" | sha256sum | cut -c1-16)"
out="$root/.cache/hydra/hydra-v2.3.0-$key"
if [[ -x "$out" ]]; then
  echo "$out"
  exit 0
fi
mkdir -p "$root/.cache/hydra"
# Test packages may ask at the same time: one builds, the others wait.
exec 9>"$root/.cache/hydra/build.lock"
flock 9
if [[ -x "$out" ]]; then
  echo "$out"
  exit 0
fi
echo "building Ory Hydra v2.3.0 into $out (first run only, ~3-4 min)" >&2
(
  cd "$tooldir"
  # The outer Makefile's -tags=webkit2_41 is not meant for Hydra.
  GOFLAGS=-mod=readonly CGO_ENABLED=1 go build -trimpath \
    -tags sqlite,sqlite_omit_load_extension -o "$out.tmp" github.com/ory/hydra/v2
) >&2
mv "$out.tmp" "$out"
echo "$out"
