#!/usr/bin/env bash
# Assembles Yett.app from a macOS desktop binary and the yett CLI:
#
#   Yett.app/Contents/Info.plist            this directory's, version from VERSION
#   Yett.app/Contents/PkgInfo
#   Yett.app/Contents/MacOS/yett-desktop    the app (cgo: built on a Mac)
#   Yett.app/Contents/MacOS/yett            the CLI, next to the app: the only
#                                           `yett mcp` its gateway accepts
#   Yett.app/Contents/Resources/yett.icns
#
# and signs it when YETT_SIGN_IDENTITY names a Developer ID (on a Mac only).
#
# usage: build/darwin/bundle.sh DESKTOP_BIN CLI_BIN OUT_DIR
#        build/darwin/bundle.sh --layout-only CLI_BIN OUT_DIR
# --layout-only assembles everything but the desktop binary: that is what
# a Linux machine can check (make package's test does).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
layout_only=false
if [ "${1:-}" = --layout-only ]; then
	layout_only=true
	shift
	set -- "" "$@"
fi
[ $# -eq 3 ] || { echo "usage: $0 DESKTOP_BIN CLI_BIN OUT_DIR | --layout-only CLI_BIN OUT_DIR" >&2; exit 2; }
desktop=$1 cli=$2 out=$3
version=$(cat "$root/VERSION")

app="$out/Yett.app"
rm -rf "$app"
mkdir -p "$app/Contents/MacOS" "$app/Contents/Resources"
sed "s/@VERSION@/$version/g" "$here/Info.plist" >"$app/Contents/Info.plist"
printf 'APPL????' >"$app/Contents/PkgInfo"
cp "$here/yett.icns" "$app/Contents/Resources/yett.icns"
install -m 0755 "$cli" "$app/Contents/MacOS/yett"
if ! $layout_only; then
	install -m 0755 "$desktop" "$app/Contents/MacOS/yett-desktop"
fi

if [ -n "${YETT_SIGN_IDENTITY:-}" ]; then
	[ "$(uname)" = Darwin ] || { echo "bundle.sh: signing needs macOS's codesign" >&2; exit 1; }
	# Inside out: the CLI, then the app with its entitlements.
	codesign --force --options runtime --timestamp --sign "$YETT_SIGN_IDENTITY" "$app/Contents/MacOS/yett"
	codesign --force --options runtime --timestamp --entitlements "$here/entitlements.plist" \
		--sign "$YETT_SIGN_IDENTITY" "$app"
fi
echo "$app"
