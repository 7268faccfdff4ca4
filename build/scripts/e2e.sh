#!/usr/bin/env bash
# End-to-end UI test: starts a dev build of the desktop app (real backend,
# real vault in a throwaway directory) under Xvfb; its Wails dev server
# serves the UI with live bindings on a free loopback port, and Playwright
# drives Debian's Chromium against it. Two scripts run against the same app:
# vault.e2e.mjs (vault, credentials, audit views, a real agent, SSH hosts
# against a real sshd it starts), then
# oauth.e2e.mjs (Connections against a real Ory Hydra v2.3.0 started here on
# loopback, with a client_credentials client and a public authorization-code
# client registered through its admin API, and hydra-login.mjs as its login
# and consent app). The app's "open in the system browser" is pointed at a
# stub that only records the address: the test opens it in its own tab.
# Afterwards neither canary secret the tests typed (the credential's,
# and the OAuth client secret) may appear in the app's log or in the data
# directory. inventory.e2e.mjs then drives the Inventory view on the same
# app (and a full drill against the same Hydra). Then keyboard.e2e.mjs walks
# a second app, from a fresh vault,
# with the keyboard only. Each script runs axe-core (e2e/harness.mjs) on
# the screens it reaches and prints the moderate count as a figure.
#
# usage: build/scripts/e2e.sh DEV_BINARY ARTIFACT_DIR
set -euo pipefail
bin=$(realpath "$1")
artifacts=$(realpath -m "$2")
mkdir -p "$artifacts"
root=$(cd "$(dirname "$0")/../.." && pwd)
hydra_bin=$("$root/build/scripts/hydra.sh")
# shellcheck source=headless.sh
. "$(dirname "$0")/headless.sh"

stop_hydra() {
	if [ -n "${tracker_pid:-}" ]; then
		kill -TERM "$tracker_pid" 2>/dev/null || true
		wait "$tracker_pid" 2>/dev/null || true
		tracker_pid=""
	fi
	if [ -n "${login_pid:-}" ]; then
		kill -TERM "$login_pid" 2>/dev/null || true
		wait "$login_pid" 2>/dev/null || true
		login_pid=""
	fi
	[ -n "${hydra_pid:-}" ] || return 0
	kill -TERM "$hydra_pid" 2>/dev/null || true
	wait "$hydra_pid" 2>/dev/null || true
	hydra_pid=""
}
trap 'stop_hydra; cleanup' EXIT

random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
# Exits 0 once url answers 2xx.
ready() { node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "$1"; }

port=$(free_port)
hydra_public=$(free_port)
hydra_admin=$(free_port)
login_port=$(free_port)
while [ "$(printf '%s\n' "$port" "$hydra_public" "$hydra_admin" "$login_port" | sort -u | wc -l)" != 4 ]; do
	hydra_admin=$(free_port)
	hydra_public=$(free_port)
	login_port=$(free_port)
done
issuer="http://127.0.0.1:$hydra_public"
admin="http://127.0.0.1:$hydra_admin"
login="http://127.0.0.1:$login_port"

# Hydra's login and consent app: signs alice@example.test in and grants
# what was asked.
node "$root/frontend/e2e/hydra-login.mjs" "$login_port" "$admin" >"$work/login.log" 2>&1 &
login_pid=$!

# Hydra in memory, on loopback only, with dynamic client registration (the
# MCP servers test registers Yett there as a client, as the MCP
# authorization spec has a client do).
env DSN=memory LOG_LEAK_SENSITIVE_VALUES=false \
	OIDC_DYNAMIC_CLIENT_REGISTRATION_ENABLED=true WEBFINGER_OIDC_DISCOVERY_CLIENT_REGISTRATION_URL="$issuer/oauth2/register" \
	SERVE_PUBLIC_HOST=127.0.0.1 SERVE_PUBLIC_PORT="$hydra_public" \
	SERVE_ADMIN_HOST=127.0.0.1 SERVE_ADMIN_PORT="$hydra_admin" \
	URLS_SELF_ISSUER="$issuer" URLS_LOGIN="$login/login" URLS_CONSENT="$login/consent" \
	SECRETS_SYSTEM="$(random_hex 32)" \
	"$hydra_bin" serve all --dev --sqa-opt-out >"$work/hydra.log" 2>&1 &
hydra_pid=$!

# The system browser, for the app only: a stub that records the address
# (under Xvfb, xdg-open would otherwise start a real browser that signs in
# on its own).
mkdir -p "$work/bin"
browser_log="$work/browser-opened"
for b in xdg-open x-www-browser www-browser; do
	printf '#!/bin/sh\nprintf "%%s\\n" "$1" >>"%s"\n' "$browser_log" >"$work/bin/$b"
	chmod +x "$work/bin/$b"
done

export YETT_DEV_THROWAWAY_VAULT=1
# The dev build answers its file dialogs (backup export and restore) from
# this directory instead of showing them.
export YETT_DEV_DIALOG_DIR="$work/dialogs"
mkdir -p "$YETT_DEV_DIALOG_DIR"
export devserver="127.0.0.1:$port" assetdir="$root/frontend/dist" loglevel=Warning
# The app's own home: the Connect page writes agent clients' files there
# (~/.claude.json), never into the home of whoever runs the tests.
export YETT_E2E_HOME="$work/home"
mkdir -p "$YETT_E2E_HOME"
HOME="$YETT_E2E_HOME" XDG_CONFIG_HOME="$YETT_E2E_HOME/.config" PATH="$work/bin:$PATH" "$bin" >"$work/app.log" 2>&1 &
app_pid=$!

for _ in $(seq 150); do
	ready "http://127.0.0.1:$port/" && break
	kill -0 "$app_pid" 2>/dev/null || { cat "$work/app.log"; echo "e2e: app exited early"; exit 1; }
	sleep 0.2
done
for i in $(seq 150); do
	ready "$admin/health/ready" && ready "$issuer/health/ready" && ready "$login/health" && break
	kill -0 "$login_pid" 2>/dev/null || { cat "$work/login.log"; echo "e2e: the login app exited early"; exit 1; }
	kill -0 "$hydra_pid" 2>/dev/null || { tail -40 "$work/hydra.log"; echo "e2e: Hydra exited early"; exit 1; }
	[ "$i" = 150 ] && { tail -40 "$work/hydra.log"; echo "e2e: Hydra or its login app was not ready in 30 s"; exit 1; }
	sleep 0.2
done

# A remote MCP server protected by this Hydra (mcp.e2e.mjs): the Go SDK
# server of internal/testsupport/mcpservertest, checking tokens by Hydra's
# introspection. It prints its endpoint once it listens.
(cd "$root" && go build -o "$work/tracker" ./internal/testsupport/mcpservertest/tracker)
"$work/tracker" "$issuer" "$admin/admin/oauth2/introspect" >"$work/tracker.url" 2>"$work/tracker.log" &
tracker_pid=$!
for i in $(seq 50); do
	[ -s "$work/tracker.url" ] && break
	kill -0 "$tracker_pid" 2>/dev/null || { cat "$work/tracker.log"; echo "e2e: the MCP tracker exited early"; exit 1; }
	[ "$i" = 50 ] && { echo "e2e: the MCP tracker did not listen in 10 s"; exit 1; }
	sleep 0.2
done
tracker_url=$(head -1 "$work/tracker.url")

canary="CANARY-e2e-$(random_hex 8)"
oauth_canary="CANARY-oauth-$(random_hex 8)"
client_id="yett-e2e-$(random_hex 4)"
public_client_id="yett-e2e-public-$(random_hex 4)"
passphrase="e2e gate lattice $(random_hex 6)"
# Claude Code's file already holds another server with a token: the
# one-click connect must keep it and never show it.
printf '{\n  "numStartups": 2,\n  "mcpServers": {\n    "docs": {"type": "stdio", "command": "/bin/false", "args": [], "env": {"TOKEN": "%s"}}\n  }\n}\n' \
	"$canary" >"$YETT_E2E_HOME/.claude.json"

# The client_credentials client. The secret travels by environment, never
# on a command line, and neither it nor Hydra's answer (which echoes it) is
# printed.
YETT_E2E_OAUTH_SECRET="$oauth_canary" node -e '
const [admin, id] = process.argv.slice(1);
const fail = (m) => { console.error(`e2e: creating the Hydra client: ${m}`); process.exit(1); };
fetch(`${admin}/admin/clients`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    client_id: id, client_secret: process.env.YETT_E2E_OAUTH_SECRET,
    grant_types: ["client_credentials"], response_types: ["token"],
    scope: "tracker.read", token_endpoint_auth_method: "client_secret_basic",
  }),
}).then(async (r) => {
  if (r.status === 201) return;
  const e = await r.json().catch(() => ({}));
  fail(`HTTP ${r.status} ${e.error ?? ""}`);
}, (err) => fail(err.message));' "$admin" "$client_id"

# The public authorization-code client (PKCE, no secret). Hydra ignores the
# port of a loopback redirect (RFC 8252 §7.3), so Yett's ephemeral one fits.
node -e '
const [admin, id] = process.argv.slice(1);
const fail = (m) => { console.error(`e2e: creating the public Hydra client: ${m}`); process.exit(1); };
fetch(`${admin}/admin/clients`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    client_id: id, token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"], response_types: ["code"],
    scope: "openid offline_access offline", redirect_uris: ["http://127.0.0.1/callback"],
  }),
}).then(async (r) => {
  if (r.status === 201) return;
  const e = await r.json().catch(() => ({}));
  fail(`HTTP ${r.status} ${e.error ?? ""} ${e.error_description ?? ""}`);
}, (err) => fail(err.message));' "$admin" "$public_client_id"

status=0
(cd "$root/frontend" && YETT_E2E_URL="http://127.0.0.1:$port" YETT_E2E_CANARY="$canary" \
	YETT_E2E_PASSPHRASE="$passphrase" YETT_ARTIFACTS="$artifacts" node e2e/vault.e2e.mjs) || status=$?

# Against the same app and vault, whatever the vault test left: the OAuth
# test unlocks (or creates) the vault itself with the shared passphrase.
oauth_status=0
(cd "$root/frontend" && YETT_E2E_URL="http://127.0.0.1:$port" YETT_E2E_PASSPHRASE="$passphrase" \
	YETT_E2E_HYDRA_PUBLIC="$issuer" YETT_E2E_HYDRA_ADMIN="$admin" \
	YETT_E2E_OAUTH_CLIENT_ID="$client_id" YETT_E2E_OAUTH_SECRET="$oauth_canary" \
	YETT_E2E_OAUTH_PUBLIC_CLIENT_ID="$public_client_id" YETT_E2E_BROWSER_LOG="$browser_log" \
	YETT_ARTIFACTS="$artifacts" node e2e/oauth.e2e.mjs) || oauth_status=$?
[ "$oauth_status" = 0 ] || status=$oauth_status

# The owner inventory, on the same app after both: a row not under control
# made right in place, filters, exports, a full drill against Hydra to the
# end; with YETT_E2E_FIGURES=1 also the view's times with 1,000 more rows.
inv_status=0
(cd "$root/frontend" && YETT_E2E_URL="http://127.0.0.1:$port" YETT_E2E_PASSPHRASE="$passphrase" \
	YETT_E2E_HYDRA_PUBLIC="$issuer" YETT_E2E_HYDRA_ADMIN="$admin" \
	YETT_E2E_OAUTH_CLIENT_ID="$client_id" YETT_E2E_OAUTH_SECRET="$oauth_canary" YETT_E2E_CANARY="$canary" \
	YETT_ARTIFACTS="$artifacts" node e2e/inventory.e2e.mjs) || inv_status=$?
[ "$inv_status" = 0 ] || status=$inv_status

# MCP servers, on the same app: a local one from npm and a remote one
# behind the same Hydra, an agent's calls approved from their cards.
mcp_status=0
mcp_canary="CANARY-mcp-$(random_hex 8)"
(cd "$root/frontend" && YETT_E2E_URL="http://127.0.0.1:$port" YETT_E2E_PASSPHRASE="$passphrase" YETT_E2E_MCP_SECRET="$mcp_canary" \
	YETT_E2E_TRACKER_URL="$tracker_url" YETT_E2E_HYDRA_PUBLIC="$issuer" YETT_E2E_BROWSER_LOG="$browser_log" \
	YETT_ARTIFACTS="$artifacts" node e2e/mcp.e2e.mjs) || mcp_status=$?
[ "$mcp_status" = 0 ] || status=$mcp_status
kill -TERM "$tracker_pid" 2>/dev/null || true
wait "$tracker_pid" 2>/dev/null || true
tracker_pid=""

kill -TERM "$app_pid"; wait "$app_pid" 2>/dev/null || true; app_pid=""

# Keyboard only, from a fresh vault: a second app of its own (its own data
# and runtime directories and port), driven without a single mouse event.
kb_port=$(free_port)
YETT_DATA_DIR="$work/data-keyboard" YETT_RUNTIME_DIR="$work/run-keyboard" devserver="127.0.0.1:$kb_port" \
	PATH="$work/bin:$PATH" "$bin" >"$work/app-keyboard.log" 2>&1 &
app_pid=$!
for _ in $(seq 150); do
	ready "http://127.0.0.1:$kb_port/" && break
	kill -0 "$app_pid" 2>/dev/null || { cat "$work/app-keyboard.log"; echo "e2e: the keyboard test's app exited early"; exit 1; }
	sleep 0.2
done
kb_status=0
(cd "$root/frontend" && YETT_E2E_URL="http://127.0.0.1:$kb_port" YETT_ARTIFACTS="$artifacts" \
	YETT_RUNTIME_DIR="$work/run-keyboard" node e2e/keyboard.e2e.mjs) || kb_status=$?
[ "$kb_status" = 0 ] || status=$kb_status
kill -TERM "$app_pid"; wait "$app_pid" 2>/dev/null || true; app_pid=""
cp "$work/app-keyboard.log" "$artifacts/e2e-app-keyboard.log"
if grep -rqa -- "CANARY-kb-" "$work/app-keyboard.log" "$work/data-keyboard"; then
	echo "e2e: a keyboard test secret leaked into the app log or the data directory"
	status=1
fi
# Approval cards as native notifications: a third app on a desktop of its
# own with a real notification daemon (e2e-notifications.sh).
notify_status=0
"$root/build/scripts/e2e-notifications.sh" "$bin" "$artifacts" || notify_status=$?
[ "$notify_status" = 0 ] || status=$notify_status
stop_hydra
cp "$work/app.log" "$artifacts/e2e-app.log"
cp "$work/login.log" "$artifacts/e2e-hydra-login.log"
if grep -rqa -- "$canary" "$work/app.log" "$work/data"; then
	echo "e2e: the canary secret leaked into the app log or the data directory"
	status=1
fi
# The MCP server's secret variable is sealed in the vault: nowhere else.
if grep -rqa -- "$mcp_canary" "$work/app.log" "$work/data"; then
	echo "e2e: the MCP server's secret leaked into the app log or the data directory"
	status=1
fi
# The SSH host's private key (made in the app by vault.e2e.mjs's SSH steps)
# is sealed in the vault: no private key may be readable anywhere else.
if grep -rqa -- "PRIVATE KEY" "$work/app.log" "$work/data"; then
	echo "e2e: a private key is readable in the app log or the data directory"
	status=1
fi
# Self-check: the inventory (in the clear) names the client, so the grep
# below reads where the connection was stored.
if ! grep -rqa -- "$client_id" "$work/data"; then
	echo "e2e: self-check: the data directory does not even name the OAuth client"
	status=1
fi
if grep -rqa -- "$oauth_canary" "$work/app.log" "$work/data"; then
	echo "e2e: the OAuth client secret leaked into the app log or the data directory"
	status=1
fi
# Hydra's log is kept for a failed run, unless it holds the client secret
# (Hydra's to guard, not Yett's; then it is not copied).
if grep -qa -- "$oauth_canary" "$work/hydra.log"; then
	echo "e2e: note: Hydra's log holds the client secret; not copied to the artifacts"
else
	cp "$work/hydra.log" "$artifacts/e2e-hydra.log"
fi
exit $status
