#!/usr/bin/env bash
# Yett beside Infisical agent-vault, measured in one run (issue 22):
# cmd/yett's BenchmarkVsAgentVault with the peer's proxy running, with the
# data of both on disk and then on tmpfs, three rounds each.
#
#   build/scripts/bench-peer.sh /path/to/agent-vault-checkout   (builds it)
#   AGENT_VAULT=/path/to/agent-vault build/scripts/bench-peer.sh
#   ROUNDS=1 WHERE=disk ...   (one round, the data on disk only)
#
# agent-vault is not a Go module the proxy serves, so it is built from a
# checkout you provide (git clone https://github.com/Infisical/agent-vault),
# with its web UI stubbed (the proxy does not need it), into
# .cache/peer/agent-vault. It refuses IP addresses as a service host: the
# name yett-bench.test must resolve to 127.0.0.1 (a line in /etc/hosts).
# Its private-range guard is opened for 127.0.0.1/32 only, its rate limits
# are off and its telemetry too. Figures, never pass or fail: see
# docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
export GOFLAGS="${GOFLAGS:--tags=webkit2_41}" DBUS_SESSION_BUS_ADDRESS=disabled:
rounds=${ROUNDS:-3}
bin=${AGENT_VAULT:-}
if [ -z "$bin" ]; then
	src=${1:?give an agent-vault checkout, or set AGENT_VAULT to its binary}
	bin=$PWD/.cache/peer/agent-vault
	mkdir -p "$(dirname "$bin")"
	if [ ! -x "$bin" ]; then
		echo "bench-peer: building agent-vault from $src (a few minutes, first run only)"
		work=$(mktemp -d)
		cp -a "$src"/. "$work"/
		mkdir -p "$work/internal/server/webdist"
		echo '<html></html>' >"$work/internal/server/webdist/index.html"
		(cd "$work" && go build -trimpath -o "$bin" .)
		rm -rf "$work"
	fi
fi
if [ "$(getent hosts yett-bench.test | awk '{print $1}')" != 127.0.0.1 ]; then
	echo "bench-peer: yett-bench.test must resolve to 127.0.0.1; add this line to /etc/hosts:" >&2
	echo "127.0.0.1 yett-bench.test" >&2
	exit 2
fi

pid=
stop() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; pid=; }
trap stop EXIT

# peer DIR: start agent-vault with its home in DIR; sets YETT_PEER_PROXY and
# YETT_PEER_PID (the benchmark reads its CPU time).
peer() {
	local home=$1 api=24321 mitm=24322 pass=owner-pass-for-bench-1
	mkdir -p "$home"
	HOME=$home AGENT_VAULT_MASTER_PASSWORD=bench-master-pass-1 AGENT_VAULT_RATELIMIT_PROFILE=off \
		AGENT_VAULT_TELEMETRY=false AGENT_VAULT_NETWORK_ALLOWLIST=127.0.0.1/32 \
		"$bin" server --port $api --mitm-port $mitm >"$home/server.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		grep -q "server listening" "$home/server.log" && break
		sleep 0.1
	done
	export HOME=$home
	echo "$pass" | "$bin" auth register --address http://127.0.0.1:$api --email bench@example.com --password-stdin >/dev/null
	echo "$pass" | "$bin" auth login --address http://127.0.0.1:$api --email bench@example.com --password-stdin >/dev/null
	# The benchmark's API answers the same whatever the token; this one is
	# only what agent-vault injects.
	"$bin" vault credential set BENCH_TOKEN=peer-bench-token-0123456789 >/dev/null
	"$bin" vault service add --name bench --host yett-bench.test --auth-type bearer --token-key BENCH_TOKEN >/dev/null
	YETT_PEER_PROXY="http://$("$bin" vault token):default@127.0.0.1:$mitm"
	YETT_PEER_PID=$pid
	export YETT_PEER_PROXY YETT_PEER_PID
	export HOME=$ORIG_HOME
}
ORIG_HOME=$HOME

go build -o /dev/null ./cmd/yett # fail early on a broken tree
for where in ${WHERE:-disk tmpfs}; do
	case $where in
	disk) dir=$PWD/.cache/peer/run ;;
	tmpfs) dir=/dev/shm/yett-peer-bench ;;
	esac
	for r in $(seq "$rounds"); do
		rm -rf "$dir" && mkdir -p "$dir"
		peer "$dir/agent-vault"
		echo "== $where, round $r"
		YETT_BENCH_DIR=$dir go test -run '^$' -bench '^BenchmarkVsAgentVault$' -benchtime=400x ./cmd/yett/ | grep '^Benchmark'
		stop
	done
	rm -rf "$dir"
done
