# Sourced by the window and e2e tests: a private headless desktop for one
# run of the app. Sets $work (a temp dir removed on exit), starts Xvfb
# (exports DISPLAY) and a private D-Bus session bus (exports
# DBUS_SESSION_BUS_ADDRESS: the app watches it for screen-lock signals, and
# the keyring library would otherwise autolaunch a bus that outlives the
# test), and points Yett at a throwaway data and runtime directory. The
# caller sets app_pid; everything is stopped on exit.

work=$(mktemp -d)
cleanup() {
	[ -n "${app_pid:-}" ] && kill "$app_pid" 2>/dev/null || true
	[ -n "${xvfb_pid:-}" ] && kill "$xvfb_pid" 2>/dev/null || true
	[ -n "${bus_pid:-}" ] && kill "$bus_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

exec 3>"$work/display"
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
# Xvfb writes its display number once it accepts connections: 0.2-0.4 s
# here when idle, several seconds on a loaded machine with a cold cache
# (CI once took more than 5 s, and the app then failed to init GTK on an
# empty DISPLAY). Wait up to 60 s, and fail plainly if it never came up.
for _ in $(seq 600); do
	[ -s "$work/display" ] && break
	kill -0 "$xvfb_pid" 2>/dev/null || break
	sleep 0.1
done
if [ ! -s "$work/display" ]; then
	cat "$work/xvfb.log" >&2
	if kill -0 "$xvfb_pid" 2>/dev/null; then
		echo "headless: Xvfb did not start within 60 s" >&2
	else
		echo "headless: Xvfb exited before it accepted connections" >&2
	fi
	exit 1
fi
export DISPLAY=":$(head -1 "$work/display")"
xdpyinfo >/dev/null 2>&1 || { cat "$work/xvfb.log" >&2; echo "headless: no X server answers on $DISPLAY" >&2; exit 1; }

# The private bus starts no service on demand: Debian's dunst (and others)
# install activation files, and an activated server that took a name before
# the test's own did (a notification server, say) made the test flaky. A
# test starts every service it uses itself.
cat >"$work/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=$work</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
bus=$(dbus-daemon --config-file="$work/bus.conf" --fork --nopidfile --print-address=1 --print-pid=1)
# Two lines, the address and the pid. Split in the shell: under pipefail,
# `echo | head -1` fails when head exits before echo's second write.
DBUS_SESSION_BUS_ADDRESS=${bus%%$'\n'*}
export DBUS_SESSION_BUS_ADDRESS
bus_pid=${bus#*$'\n'}

export YETT_DATA_DIR="$work/data" YETT_RUNTIME_DIR="$work/run" NO_AT_BRIDGE=1
