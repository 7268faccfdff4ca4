#!/usr/bin/env bash
# End-to-end test of approval cards as native notifications: a dev build of
# the desktop app (real backend, fresh throwaway vault) under Xvfb with a
# real notification daemon (dunst) on the same private session bus, and
# Playwright driving Debian's Chromium against the app's dev server
# (frontend/e2e/notifications.e2e.mjs). Afterwards the credential's canary
# may not appear in the app's log or the data directory. e2e.sh runs it.
#
# usage: build/scripts/e2e-notifications.sh DEV_BINARY ARTIFACT_DIR
set -euo pipefail
bin=$(realpath "$1")
artifacts=$(realpath -m "$2")
mkdir -p "$artifacts"
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=headless.sh
. "$(dirname "$0")/headless.sh"

stop_dunst() {
	[ -n "${dunst_pid:-}" ] && kill "$dunst_pid" 2>/dev/null || true
	dunst_pid=""
}
trap 'stop_dunst; cleanup' EXIT

mkdir -p "$work/dunst"
printf '[global]\nshow_indicators = yes\n' >"$work/dunst/dunstrc"
XDG_CONFIG_HOME="$work/dunst" dunst -config "$work/dunst/dunstrc" >"$work/dunst.log" 2>&1 &
dunst_pid=$!
export YETT_E2E_DUNST_PID=$dunst_pid
# Ready once the bus names this very dunst as the notification server (a
# question to the bus itself, which starts nothing).
owner_pid() {
	dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
		org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.Notifications 2>/dev/null |
		awk '/uint32/ {print $2}'
}
for i in $(seq 100); do
	[ "$(owner_pid)" = "$dunst_pid" ] && break
	kill -0 "$dunst_pid" 2>/dev/null || { cat "$work/dunst.log"; echo "e2e-notifications: dunst exited early"; exit 1; }
	[ "$i" = 100 ] && { echo "e2e-notifications: dunst did not start"; exit 1; }
	sleep 0.1
done

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
ready() { node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$1"; }
export YETT_DEV_THROWAWAY_VAULT=1 devserver="127.0.0.1:$port" assetdir="$root/frontend/dist" loglevel=Warning
"$bin" >"$work/app.log" 2>&1 &
app_pid=$!
for i in $(seq 150); do
	ready "http://127.0.0.1:$port/" && break
	kill -0 "$app_pid" 2>/dev/null || { cat "$work/app.log"; echo "e2e-notifications: app exited early"; exit 1; }
	[ "$i" = 150 ] && { echo "e2e-notifications: the app's dev server did not answer"; exit 1; }
	sleep 0.2
done

status=0
(cd "$root/frontend" && YETT_E2E_URL="http://127.0.0.1:$port" YETT_ARTIFACTS="$artifacts" \
	node e2e/notifications.e2e.mjs) || status=$?
kill -TERM "$app_pid"; wait "$app_pid" 2>/dev/null || true; app_pid=""
stop_dunst
cp "$work/app.log" "$artifacts/e2e-app-notifications.log"
if grep -rqa -- "CANARY-notify-" "$work/app.log" "$work/data"; then
	echo "e2e-notifications: the canary secret leaked into the app log or the data directory"
	status=1
fi
exit $status
