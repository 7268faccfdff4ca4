#!/usr/bin/env bash
# Installs what building, running and testing Yett needs on this machine:
# Debian packages (apt), then Node modules and Go modules. Idempotent: each
# step checks first and does nothing when everything is already there.
#
# usage: build/scripts/deps.sh run|test|package
set -euo pipefail
cd "$(dirname "$0")/../.."

mode=${1:-run}

# Packages for building and running the desktop app.
pkgs_run=(build-essential pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev)
# Extra packages the test suite uses: a headless X server and window tools,
# a real browser, real D-Bus, keyrings, sshd and a notification daemon, and
# Wine with a MinGW compiler for the Windows tests (build/scripts/wine.sh),
# and PostgreSQL for team mode's tests (internal/testsupport/pgtest starts
# its own cluster; the package's own cluster may stay stopped).
pkgs_test=(xvfb xauth x11-utils xdotool imagemagick fonts-dejavu-core dbus dbus-x11
	chromium keyutils gnome-keyring libsecret-tools openssh-server dunst libnotify-bin
	desktop-file-utils polkitd util-linux passwd bsdutils python3 libglib2.0-bin
	wine64 gcc-mingw-w64-x86-64-win32 postgresql)

# What `make package` uses: makensis for the Windows installer,
# dpkg-shlibdeps for the package's Depends, desktop-file-validate and man
# for checking what it installs.
pkgs_package=(nsis dpkg-dev desktop-file-utils man-db)

want=("${pkgs_run[@]}")
[ "$mode" = test ] && want+=("${pkgs_test[@]}")
[ "$mode" = test ] || [ "$mode" = package ] && want+=("${pkgs_package[@]}")

say() { printf 'yett deps: %s\n' "$*" >&2; }

if command -v dpkg-query >/dev/null 2>&1; then
	missing=()
	for p in "${want[@]}"; do
		grep -q "install ok installed" <<<"$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		say "installing Debian packages: ${missing[*]}"
		sudo=""
		[ "$(id -u)" -ne 0 ] && sudo="sudo"
		$sudo apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
else
	say "this is not a Debian or Ubuntu system: install the equivalents of these packages yourself: ${want[*]}"
	say "(GTK 3 and WebKitGTK 4.1 development files are required to build the desktop app)"
fi

# The SSH tests log in to their own sshd as an unprivileged account when
# they run as root: OpenSSH refuses to signal the commands of root logins,
# and the tests must see a remote command receive SIGHUP. The account has
# no password and no authorized keys of its own; each test's sshd names its
# own authorized_keys file.
if [ "$mode" = test ] && [ "$(id -u)" -eq 0 ] && ! id yett-sshtest >/dev/null 2>&1; then
	say "creating the yett-sshtest account for the SSH tests"
	useradd --system --create-home --shell /bin/sh yett-sshtest
	usermod -p '*' yett-sshtest # not locked (sshd refuses locked accounts), no password
fi

need() { # need CMD MIN_VERSION_TEXT HINT
	command -v "$1" >/dev/null 2>&1 || { say "$1 is required ($2). $3"; exit 1; }
}
need go "Go 1.26 or newer" "Install it from the Go project's release archive into /usr/local/go."
need node "Node.js 20.19 or newer" "Install Node.js 20 LTS (or newer) with npm."
need npm "npm 10 or newer" "It ships with Node.js."

node_ok=$(node -e 'const [a,b]=process.versions.node.split(".").map(Number);console.log(a>20||(a===20&&b>=19)?1:0)')
[ "$node_ok" = 1 ] || { say "Node.js $(node --version) is too old: Vite 8 needs 20.19 or newer"; exit 1; }

# Node modules: reinstall only when the lock file changed since the last install.
stamp=frontend/node_modules/.yett-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s frontend/package-lock.json "$stamp"; then
	say "installing Node modules (npm ci)"
	(cd frontend && npm ci --no-audit --no-fund --loglevel=error)
	cp frontend/package-lock.json "$stamp"
fi

# The real MCP clients the Go tests drive (build/agents), the same way.
if [ "$mode" = test ]; then
	stamp=build/agents/node_modules/.yett-lock-stamp
	if [ ! -f "$stamp" ] || ! cmp -s build/agents/package-lock.json "$stamp"; then
		say "installing the test agents' Node modules (npm ci in build/agents)"
		(cd build/agents && npm ci --no-audit --no-fund --loglevel=error)
		cp build/agents/package-lock.json "$stamp"
	fi
fi

go mod download
