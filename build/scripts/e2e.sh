#!/usr/bin/env bash
# End-to-end UI test: starts a dev build of the desktop app (real backend,
# real vault in a throwaway directory) under Xvfb; its Wails dev server
# serves the UI with live bindings on a free loopback port, and Playwright
# drives Debian's Chromium against it. Afterwards the canary secret the test
# typed must not appear in the app's log or in the vault file.
#
# usage: build/scripts/e2e.sh DEV_BINARY ARTIFACT_DIR
set -euo pipefail
bin=$(realpath "$1")
artifacts=$(realpath -m "$2")
mkdir -p "$artifacts"
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=headless.sh
. "$(dirname "$0")/headless.sh"

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
export YETT_DEV_THROWAWAY_VAULT=1
export devserver="127.0.0.1:$port" assetdir="$root/frontend/dist" loglevel=Warning
"$bin" >"$work/app.log" 2>&1 &
app_pid=$!

for _ in $(seq 150); do
	node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "http://127.0.0.1:$port/" && break
	kill -0 "$app_pid" 2>/dev/null || { cat "$work/app.log"; echo "e2e: app exited early"; exit 1; }
	sleep 0.2
done

canary="CANARY-e2e-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
status=0
(cd "$root/frontend" && YETT_E2E_URL="http://127.0.0.1:$port" YETT_E2E_CANARY="$canary" \
	YETT_ARTIFACTS="$artifacts" node e2e/vault.e2e.mjs) || status=$?

kill -TERM "$app_pid"; wait "$app_pid" 2>/dev/null || true; app_pid=""
cp "$work/app.log" "$artifacts/e2e-app.log"
if grep -rqa -- "$canary" "$work/app.log" "$work/data"; then
	echo "e2e: the canary secret leaked into the app log or the data directory"
	status=1
fi
exit $status
