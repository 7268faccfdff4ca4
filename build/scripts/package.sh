#!/usr/bin/env bash
# Makes Yett's packages from the binaries `make package` built:
#
#   yett_<version>_amd64.deb                 Debian package (nfpm), Depends from dpkg-shlibdeps
#   yett_<version>_linux_amd64.tar.gz        the same files, for ~/.local or /usr/local
#   yett_<version>_windows_amd64_setup.exe   NSIS installer (Debian's makensis)
#
# The version comes from VERSION, the one place it is written. No AppImage:
# Debian 12's archive has no appimagetool, so the tarball is the other
# Linux download.
#
# usage: build/scripts/package.sh BIN_DIR OUT_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin=$(realpath "$1")
mkdir -p "$2"
out=$(realpath "$2")
version=$(cat "$root/VERSION")
say() { printf 'yett package: %s\n' "$*" >&2; }

for f in yett yett-desktop yett.exe yett-desktop.exe; do
	[ -f "$bin/$f" ] || { say "missing $bin/$f (make package builds it)"; exit 1; }
done
# Every file in the packages carries the commit's time, so a rebuild of one
# commit makes the same archives.
SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null || date -d 2026-01-01 +%s)
export SOURCE_DATE_EPOCH

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# dpkg-shlibdeps wants the tree where a Debian build would have it.
stage="$work/debian/yett"
install -Dm0755 "$bin/yett-desktop" "$stage/usr/bin/yett-desktop"
install -Dm0755 "$bin/yett" "$stage/usr/bin/yett"
install -Dm0644 "$root/build/linux/yett.desktop" "$stage/usr/share/applications/yett.desktop"
for png in "$root"/build/icons/hicolor/*/apps/yett.png; do
	size=$(basename "$(dirname "$(dirname "$png")")")
	install -Dm0644 "$png" "$stage/usr/share/icons/hicolor/$size/apps/yett.png"
done
install -Dm0644 "$root/build/icons/yett.svg" "$stage/usr/share/icons/hicolor/scalable/apps/yett.svg"
# The polkit action Yett checks before an approval takes effect
# (backend/presence): polkitd reads it from here.
install -Dm0644 "$root/build/linux/dev.yett.approve.policy" "$stage/usr/share/polkit-1/actions/dev.yett.approve.policy"
for page in yett yett-desktop; do
	mkdir -p "$stage/usr/share/man/man1"
	gzip -9n <"$root/build/linux/$page.1" >"$stage/usr/share/man/man1/$page.1.gz"
	chmod 0644 "$stage/usr/share/man/man1/$page.1.gz"
done
find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

# Depends: the runtime libraries the desktop binary links (WebKitGTK 4.1,
# GTK 3 and what they pull in), with the versions their symbols need.
# The CLI is static.
mkdir -p "$work/debian"
printf 'Source: yett\n\nPackage: yett\nArchitecture: amd64\n' >"$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O debian/yett/usr/bin/yett-desktop 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { say "dpkg-shlibdeps found no dependencies"; exit 1; }

nfpm=$("$root/build/scripts/nfpm.sh")
deb="$out/yett_${version}_amd64.deb"
rm -f "$deb"
YETT_VERSION=$version YETT_STAGE=$stage YETT_DEPENDS=$depends \
	"$nfpm" package --config "$root/build/linux/nfpm.yaml" --packager deb --target "$deb" >&2
say "$deb"

# The tarball: the same tree under a prefix, to unpack into ~/.local (or
# /usr/local): yett-<version>/bin, yett-<version>/share.
tarball="$out/yett_${version}_linux_amd64.tar.gz"
mkdir -p "$work/tar"
cp -a "$stage/usr" "$work/tar/yett-$version"
tar -C "$work/tar" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
	-cf - "yett-$version" | gzip -9n >"$tarball"
say "$tarball"

# The Windows installer.
setup="$out/yett_${version}_windows_amd64_setup.exe"
makensis -V2 -WX -DVERSION="$version" -DBIN="$bin" -DOUTFILE="$setup" "$root/build/windows/installer.nsi" >&2
say "$setup"
