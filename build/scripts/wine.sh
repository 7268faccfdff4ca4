#!/usr/bin/env bash
# Runs Yett's Windows code under test: for every package with Windows code
# (a *_windows.go file), its Windows test binary (GOOS=windows go test) runs
# under Debian's Wine with the tests written for Windows, the ones in its
# *_windows_test.go files. A package with Windows code and no such test
# fails the run. What Wine cannot prove (code signing, WebView2, real
# toasts, enforced pipe DACLs) is listed in docs/windows.md; a test that
# needs it is named ...OnRealWindows and is compiled, not run, here.
#
# The Wine prefix (about 700 MB, made once in ~20 s) lives in the ignored
# .cache/wine; wine64 and the MinGW compiler come from build/scripts/deps.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
cache=$root/.cache/wine
wine=/usr/lib/wine/wine64
[ -x "$wine" ] || { echo "wine: $wine is missing: run build/scripts/deps.sh test (Debian's wine64)" >&2; exit 1; }
export WINEDEBUG=-all WINEARCH=win64 WINEPREFIX=$cache/prefix
mkdir -p "$cache/bin"

# The prefix, with the ProcessPrng shim Go 1.26 needs (build/wine).
dll=$cache/bcryptprimitives.dll
if [ ! -f "$dll" ] || [ build/wine/processprng.c -nt "$dll" ]; then
	x86_64-w64-mingw32-gcc -shared -O2 -o "$dll" build/wine/processprng.c -lbcrypt
fi
if [ ! -f "$WINEPREFIX/.yett-ready" ]; then
	rm -rf "$WINEPREFIX"
	"$wine" wineboot -i >"$cache/wineboot.log" 2>&1 || { cat "$cache/wineboot.log"; exit 1; }
	touch "$WINEPREFIX/.yett-ready"
fi
cp "$dll" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"

# cmd/yett's tests start yett itself; no Go toolchain runs under Wine.
GOOS=windows CGO_ENABLED=0 go build -o "$cache/yett.exe" ./cmd/yett
export YETT_TEST_YETT_BINARY="Z:$cache/yett.exe"

# go test runs GOOS=windows test binaries through go_windows_amd64_exec.
printf '#!/bin/sh\nexec %s "$@"\n' "$wine" >"$cache/bin/go_windows_amd64_exec"
chmod +x "$cache/bin/go_windows_amd64_exec"
export PATH=$cache/bin:$PATH

# A display of its own: Windows code that makes a window (the tray's
# hidden window behind its notification-area icon) needs one under Wine,
# which otherwise fails to create it.
xdisplay=$(mktemp)
Xvfb -displayfd 3 -screen 0 1024x768x24 -nolisten tcp 3>"$xdisplay" >/dev/null 2>&1 &
xvfb_pid=$!
for _ in $(seq 300); do
	[ -s "$xdisplay" ] && break
	kill -0 "$xvfb_pid" 2>/dev/null || { echo "wine: Xvfb exited before it accepted connections" >&2; exit 1; }
	sleep 0.1
done
[ -s "$xdisplay" ] || { echo "wine: Xvfb did not start within 30 s" >&2; exit 1; }
export DISPLAY=":$(head -1 "$xdisplay")"

# One wineserver for the whole run (each binary would otherwise start one),
# and Wine's own background processes (services, explorer, …) started now
# with their output on /dev/null: started by the first test binary, they
# would inherit its output pipe and hold it open after it exits, and go
# test waits for that pipe to close.
/usr/lib/wine/wineserver -p 2>/dev/null || true
trap '/usr/lib/wine/wineserver -k 2>/dev/null || true; kill "$xvfb_pid" 2>/dev/null || true; rm -f "$xdisplay"' EXIT
"$wine" cmd /c exit </dev/null >/dev/null 2>&1 || true

fail=0
count=0
for dir in $(find backend cmd app -name '*_windows.go' -not -name '*_test.go' -exec dirname {} \; | sort -u); do
	# Tests named ...OnRealWindows need what Wine does not implement
	# (docs/windows.md); they are built and vetted here, and run on Windows.
	tests=$(grep -ho '^func Test[A-Za-z0-9_]*(t \*testing\.T)' "$dir"/*_windows_test.go 2>/dev/null |
		sed 's/^func \(Test[A-Za-z0-9_]*\).*/\1/' | grep -v 'OnRealWindows$' | paste -sd'|' || true)
	if [ -z "$tests" ]; then
		echo "wine: $dir has Windows code and no Windows test (*_windows_test.go)" >&2
		fail=1
		continue
	fi
	n=$(tr '|' '\n' <<<"$tests" | wc -l)
	count=$((count + n))
	echo "wine: ./$dir ($n tests)"
	if ! GOOS=windows CGO_ENABLED=0 go test -count=1 -timeout 5m -run "^($tests)\$" "./$dir"; then
		fail=1
	fi
done
[ "$fail" = 0 ] || { echo "wine: the Windows tests failed" >&2; exit 1; }
echo "wine: $count Windows tests passed under $("$wine" --version)"
