#!/usr/bin/env bash
# Starts the production desktop binary in a real window under Xvfb with a
# throwaway vault, checks that a window titled "Yett" exists and that the UI
# rendered (the screenshot is not blank), saves the screenshot, checks that a
# second launch defers to the first (single instance), that closing the
# window keeps Yett running (the first close says so and leaves the window;
# the next hides it) and that a second launch brings the hidden window back,
# and shuts down with SIGTERM. Then xinput-attack.py sends the window
# synthetic keys as an agent would (yett, the CLI, must be next to BINARY).
#
# usage: build/scripts/window-test.sh BINARY ARTIFACT_DIR
set -euo pipefail
bin=$(realpath "$1")
artifacts=$2
mkdir -p "$artifacts"
# shellcheck source=headless.sh
. "$(dirname "$0")/headless.sh"

"$bin" >"$work/app.log" 2>&1 &
app_pid=$!

wid=""
for _ in $(seq 100); do
	wid=$(xdotool search --name '^Yett$' 2>/dev/null | head -1 || true)
	[ -n "$wid" ] && break
	kill -0 "$app_pid" 2>/dev/null || { cat "$work/app.log"; echo "window-test: app exited early"; exit 1; }
	sleep 0.2
done
[ -n "$wid" ] || { cat "$work/app.log"; echo "window-test: no window titled Yett"; exit 1; }
echo "window-test: window $wid titled '$(xdotool getwindowname "$wid")'"

# The app closed itself to the user's other processes before anything else
# (backend/selfprotect): no core file, soft and hard (the hard limit is
# unlimited by default here, so 0 is its doing). The non-dumpable flag set
# with it cannot be read from outside; cmd/yett's
# TestServeMemoryClosedToTheUsersProcesses proves its effect on yett serve
# from a process of the same user without capabilities.
grep -Eq '^Max core file size +0 +0 ' "/proc/$app_pid/limits" || {
	grep 'core file' "/proc/$app_pid/limits"; echo "window-test: the app did not close itself (core file limit)"; exit 1; }
echo "window-test: the app runs with no core file (selfprotect)"

# Wait for the UI to render: the first-run screen must show up as non-blank
# pixels. The colours are counted in the middle of the screen, inside the
# window's page: the title bar's text alone has dozens of colours while the
# page is still empty.
shot="$artifacts/window.png"
for _ in $(seq 60); do
	import -window root "$shot"
	colours=$(convert "$shot" -gravity center -crop 50%x50%+0+0 +repage -format '%k' info:)
	[ "$colours" -gt 8 ] && break
	sleep 0.5
done
echo "window-test: screenshot $shot has $colours colours in the page"
[ "$colours" -gt 8 ] || { echo "window-test: the window looks blank"; exit 1; }

# A second launch must defer to the first and exit on its own.
if ! timeout 20 "$bin" >"$work/second.log" 2>&1; then
	cat "$work/second.log"; echo "window-test: second launch did not exit cleanly"; exit 1
fi
grep -q "already running" "$work/second.log" || { cat "$work/second.log"; echo "window-test: second launch did not defer"; exit 1; }
[ "$(xdotool search --name '^Yett$' | wc -l)" -ge 1 ] || { echo "window-test: first window vanished"; exit 1; }

# Closing the window hides it; Yett keeps running. The close is what a
# window manager's close button sends (Xvfb has no window manager).
cc -o "$work/xclose" "$(dirname "$0")/xclose.c" -lX11
visible() { xdotool search --onlyvisible --name '^Yett' 2>/dev/null | grep -qx "$wid"; }
"$work/xclose" "$wid"
# The first close tells the person Yett keeps running, in the window: it stays.
for _ in $(seq 50); do grep -q "window hidden" "$work/app.log" && break; sleep 0.1; done
visible || { cat "$work/app.log"; echo "window-test: the first close hid the window without saying Yett keeps running"; exit 1; }
import -window root "$artifacts/window-close-notice.png"
"$work/xclose" "$wid"
for _ in $(seq 300); do visible || break; sleep 0.1; done
if visible; then cat "$work/app.log"; echo "window-test: closing the window did not hide it"; exit 1; fi
kill -0 "$app_pid" 2>/dev/null || { cat "$work/app.log"; echo "window-test: closing the window quit Yett"; exit 1; }
grep -q "window hidden; Yett keeps serving agents" "$work/app.log" || { cat "$work/app.log"; echo "window-test: no word of running in the background"; exit 1; }
echo "window-test: closing hid the window; Yett keeps running"

# Launching Yett again brings the hidden window back.
if ! timeout 20 "$bin" >"$work/third.log" 2>&1; then
	cat "$work/third.log"; echo "window-test: the launch while hidden did not exit cleanly"; exit 1
fi
for _ in $(seq 300); do visible && break; sleep 0.1; done
visible || { cat "$work/app.log"; echo "window-test: a second launch did not bring the window back"; exit 1; }
echo "window-test: a second launch brought the window back"

kill -TERM "$app_pid"
for _ in $(seq 50); do kill -0 "$app_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$app_pid" 2>/dev/null; then echo "window-test: app ignored SIGTERM"; exit 1; fi
app_pid=""
if grep -q "CANARY" "$work/app.log"; then echo "window-test: canary in log"; exit 1; fi
echo "window-test: 4 passed, 0 failed"

# Synthetic X11 input (xdotool) against the window's approval cards: an
# agent's keys approve a card only where Yett asks no verification.
python3 "$(dirname "$0")/xinput-attack.py" "$bin" "$(dirname "$bin")/yett" "$artifacts" "$work"
