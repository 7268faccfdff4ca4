// A minimal real agent for the end-to-end test: a separate process that
// starts `yett mcp` (the shim) the way an MCP client does, speaks
// newline-delimited JSON-RPC over its stdio, and makes one http.request.
// The gateway identifies this node process as the origin, so the approval
// card in the app names it.
//
// usage: node e2e/agent.mjs YETT_CLI URL [IDEMPOTENCY_KEY]
// Prints one JSON line {"text": ..., "isError": ...} with the tool result
// (or {"error": ...}), then stays alive until stdin closes, so its session
// stays live for the Live sessions checks. YETT_RUNTIME_DIR must name the
// app's runtime directory (the e2e script exports it). YETT_E2E_TOOL and
// YETT_E2E_ARGS (a JSON object), when set, name another call to make
// instead (e2e/ssh-steps.mjs: ssh.exec); URL is then only a label. Each
// line then written to its stdin, {"tool": ..., "args": {...}}, is one more
// call of the same run, answered with one more JSON line.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

// A new action needs a key of its own (the gateway refuses a key reused
// for a different request); the default serves a single call.
const [cli, url, key = 'e2e-card-1'] = process.argv.slice(2);
if (!cli || !url) {
  process.stderr.write('usage: node e2e/agent.mjs YETT_CLI URL\n');
  process.exit(2);
}

const shim = spawn(cli, ['mcp'], { stdio: ['pipe', 'pipe', 'inherit'] });
const waiting = new Map();
createInterface({ input: shim.stdout }).on('line', (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id !== undefined && waiting.has(msg.id)) {
    waiting.get(msg.id)(msg);
    waiting.delete(msg.id);
  }
});

let nextId = 1;
function request(method, params) {
  const id = nextId++;
  shim.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  return new Promise((resolve) => waiting.set(id, resolve));
}

function say(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

shim.on('exit', (code) => {
  say({ error: `the shim exited (${code})` });
  process.exit(1);
});

const init = await request('initialize', {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'yett-e2e-agent', version: '0' },
});
if (init.error) {
  say({ error: init.error.message });
  process.exit(1);
}
shim.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');

const res = await request('tools/call', process.env.YETT_E2E_TOOL
  ? { name: process.env.YETT_E2E_TOOL, arguments: JSON.parse(process.env.YETT_E2E_ARGS || '{}') }
  : { name: 'http.request', arguments: { method: 'POST', url, body: { from: 'e2e agent' }, idempotency_key: key } });
function answer(res) {
  if (res.error) {
    say({ error: res.error.message });
  } else {
    const text = (res.result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    say({ text, isError: Boolean(res.result?.isError) });
  }
}
answer(res);

// More calls of the same run, one per line of stdin.
createInterface({ input: process.stdin }).on('line', async (line) => {
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch {
    say({ error: 'not a JSON line' });
    return;
  }
  answer(await request('tools/call', { name: cmd.tool, arguments: cmd.args }));
});

// Stay alive (the run, and so its session, ends when this process exits).
process.stdin.resume();
process.stdin.on('end', () => {
  shim.removeAllListeners('exit');
  shim.kill();
  process.exit(0);
});
