#!/usr/bin/env bash
# Installs the Debian package on this machine as a new user would
# (apt-get install ./yett_<version>_amd64.deb), checks what it installed
# (yett --version, the desktop entry, the man pages, the window of the
# installed yett-desktop), removes it, and checks that nothing is left under
# /usr and that no person's data directory was touched. Also checks the
# tarball's contents, the Windows installer and the macOS bundle's layout.
# Prints the figures: package sizes, installed size, seconds from apt-get
# install to the window shown.
#
# It changes this machine (it runs as root, or with sudo): it refuses to run
# when a yett package is already installed, and removes what it installed
# even when a check fails.
#
# usage: build/scripts/package-test.sh PACKAGES_DIR ARTIFACT_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
pkgs=$(realpath "$1")
artifacts=$(realpath -m "$2")
mkdir -p "$artifacts"
version=$(cat "$root/VERSION")
deb="$pkgs/yett_${version}_amd64.deb"
tarball="$pkgs/yett_${version}_linux_amd64.tar.gz"
setup="$pkgs/yett_${version}_windows_amd64_setup.exe"
say() { printf 'package-test: %s\n' "$*"; }
fail() { say "FAIL: $*"; exit 1; }
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
apt() { DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 -y -qq "$@"; }

for f in "$deb" "$tarball" "$setup"; do [ -f "$f" ] || fail "missing $f (make package)"; done
if grep -q "ok installed" <<<"$(dpkg-query -W -f='${Status}' yett 2>/dev/null)"; then
	fail "a yett package is already installed here; this test installs and removes one, so remove it first (apt-get remove yett)"
fi

work=$(mktemp -d)
installed=false
cleanup() {
	if $installed; then apt remove yett >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

# --- what the package says and holds ---------------------------------------
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libwebkit2gtk-4.1-0 libgtk-3-0; do
	grep -qw "$lib" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
grep -q -- '-dev' <<<"$depends" && fail "Depends names a -dev package: $depends"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' | grep -v '/$' | sort >"$work/deb-files"
want=(/usr/bin/yett /usr/bin/yett-desktop /usr/share/applications/yett.desktop
	/usr/share/man/man1/yett.1.gz /usr/share/man/man1/yett-desktop.1.gz
	/usr/share/icons/hicolor/scalable/apps/yett.svg /usr/share/polkit-1/actions/dev.yett.approve.policy)
for size in 16 22 24 32 48 64 128 256 512; do want+=("/usr/share/icons/hicolor/${size}x${size}/apps/yett.png"); done
for f in "${want[@]}"; do grep -qx "$f" "$work/deb-files" || fail "the package lacks $f"; done
[ "$(wc -l <"$work/deb-files")" -eq "${#want[@]}" ] || fail "the package holds files it should not: $(cat "$work/deb-files")"

# --- the tarball holds the same files, and runs where it is unpacked -------
tar -tzf "$tarball" | grep -v '/$' | sed "s|^yett-$version/|/usr/|" | sort >"$work/tar-files"
diff -u "$work/deb-files" "$work/tar-files" || fail "the tarball's files differ from the package's"
mkdir "$work/prefix"
tar -xzf "$tarball" --strip-components=1 -C "$work/prefix"
[[ "$("$work/prefix/bin/yett" --version)" == "yett $version"* ]] || fail "the tarball's yett does not say version $version"
# The README's uninstall line, as written there, removes every file the
# tarball put in the prefix and nothing else.
uninstall=$(grep -o "tar -tzf yett_<version>_linux_amd64.tar.gz | [^\`]*" "$root/README.md") ||
	fail "the README has no uninstall line for a tarball install"
uninstall=${uninstall//yett_<version>_linux_amd64.tar.gz/\"$tarball\"}
uninstall=${uninstall//\~\/.local/\"$work/prefix\"}
printf 'keep\n' >"$work/prefix/mine"
bash -c "$uninstall" || fail "the README's uninstall line failed: $uninstall"
left=$(find "$work/prefix" -type f)
[ "$left" = "$work/prefix/mine" ] || fail "the README's uninstall line left or removed the wrong files: $left"

# --- the Windows installer and the macOS bundle's layout -------------------
[ "$(head -c2 "$setup")" = MZ ] || fail "$setup is not a Windows program"
grep -aq "Nullsoft" "$setup" || fail "$setup is not an NSIS installer"
(cd "$root" && CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 GOFLAGS= go build \
	-ldflags "-X github.com/yettdev/yett/backend/version.number=$version" -o "$work/yett-darwin" ./cmd/yett)
app=$("$root/build/darwin/bundle.sh" --layout-only "$work/yett-darwin" "$work")
grep -q "<string>$version</string>" "$app/Contents/Info.plist" || fail "Yett.app's Info.plist lacks the version"
for f in PkgInfo MacOS/yett Resources/yett.icns; do [ -f "$app/Contents/$f" ] || fail "Yett.app lacks Contents/$f"; done

# --- a person's data, before -----------------------------------------------
# A data directory of someone who used Yett before, and the invoking
# user's own: install and removal must leave both exactly as they are.
home="$work/home"
mkdir -p "$home/.local/share/yett/audit"
printf 'not really a vault\n' >"$home/.local/share/yett/yett.db"
printf 'not really a log\n' >"$home/.local/share/yett/audit/log"
datasum() { (cd "$1" 2>/dev/null && find . -printf '%p %s %T@ %m\n' | sort && find . -type f -exec sha256sum {} + | sort) || echo absent; }
own="${XDG_DATA_HOME:-$HOME/.local/share}/yett"
before_theirs=$(datasum "$home/.local/share/yett")
before_own=$(datasum "$own")
# The caches dpkg's triggers regenerate for every package with a desktop
# entry or icons (update-desktop-database, gtk-update-icon-cache) belong to
# no package: on a machine that had none yet, the install makes them.
usrfiles() { find /usr -xdev | grep -v -e '^/usr/share/applications/mimeinfo\.cache$' -e '^/usr/share/icons/hicolor/icon-theme\.cache$' | sort; }
usrfiles >"$work/usr-before"

# --- install as a new user would, and use it -------------------------------
t0=$(date +%s.%N)
apt install "$deb" >"$work/apt-install.log" 2>&1 || { cat "$work/apt-install.log"; fail "apt-get install ./$(basename "$deb") failed"; }
installed=true
t_installed=$(date +%s.%N)
[ "$(command -v yett)" = /usr/bin/yett ] || fail "yett is not on PATH at /usr/bin/yett"
got=$(yett --version)
[[ "$got" == "yett $version"* ]] || fail "installed yett --version says '$got', want yett $version"
say "installed yett --version: $got"
out=$(desktop-file-validate /usr/share/applications/yett.desktop 2>&1) || fail "desktop-file-validate: $out"
[ -z "$out" ] || fail "desktop-file-validate has remarks: $out"
grep -qx "Exec=yett-desktop" /usr/share/applications/yett.desktop || fail "the desktop entry does not start yett-desktop"
# Minimal container images tell dpkg not to install man pages
# (path-exclude=/usr/share/man/*); then the package's own copy is rendered.
manpage=/usr/share/man/man1/yett.1.gz
if [ ! -f "$manpage" ] && grep -qs '^path-exclude=/usr/share/man' /etc/dpkg/dpkg.cfg.d/*; then
	dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/share/man/man1/yett.1.gz >"$work/yett.1.gz"
	manpage="$work/yett.1.gz"
fi
grep -q "yett credential" <<<"$(MANPAGER=cat man -l "$manpage" 2>/dev/null)" || fail "man yett does not render the commands"
# The window test against the installed binary; the moment it sees the
# first-run screen drawn in the window is the end of "from apt-get install
# to the window shown".
if ! "$root/build/scripts/window-test.sh" /usr/bin/yett-desktop "$artifacts/package-window" 2>&1 | while IFS= read -r line; do
	printf '%s\n' "$line"
	if [[ "$line" == "window-test: screenshot "* ]]; then date +%s.%N >"$work/t-window"; fi
done; then
	fail "the window test failed against the installed yett-desktop"
fi
[ -s "$work/t-window" ] || fail "the window test never saw the window"
t_window=$(cat "$work/t-window")

# --- remove, and nothing is left ---------------------------------------------
apt remove yett >"$work/apt-remove.log" 2>&1 || { cat "$work/apt-remove.log"; fail "apt-get remove yett failed"; }
installed=false
grep -q "ok installed" <<<"$(dpkg-query -W -f='${Status}' yett 2>/dev/null)" && fail "yett is still installed"
usrfiles >"$work/usr-after"
if ! diff -u "$work/usr-before" "$work/usr-after" >"$work/usr-diff"; then
	cat "$work/usr-diff"
	fail "install and removal changed the files under /usr"
fi
[ "$(datasum "$home/.local/share/yett")" = "$before_theirs" ] || fail "a person's data directory changed"
[ "$(datasum "$own")" = "$before_own" ] || fail "the invoking user's data directory ($own) changed"

mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1000000 }'; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
printf 'package-test: figures: .deb %s MB, installed %s MB, tarball %s MB, Windows installer %s MB; apt-get install %s s; from apt-get install to the window shown %s s\n' \
	"$(mb "$(stat -c %s "$deb")")" "$(mb $(($(dpkg-deb -f "$deb" Installed-Size) * 1024)))" \
	"$(mb "$(stat -c %s "$tarball")")" "$(mb "$(stat -c %s "$setup")")" \
	"$(secs "$t0" "$t_installed")" "$(secs "$t0" "$t_window")" | tee "$artifacts/package-figures.txt"
say "1 passed, 0 failed"
