// One run of e2e/agent.mjs (a real agent through the real `yett mcp`) that
// makes more than one call: the first is tool with args; each call(...)
// makes one more of the same run. Every call answers with its reply, in
// order ({"text", "isError"} or {"error"}).

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export function startAgentRun(cli, label, tool, args) {
  const proc = spawn(process.execPath, [join(here, 'agent.mjs'), cli, label], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, YETT_E2E_TOOL: tool, YETT_E2E_ARGS: JSON.stringify(args) },
  });
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const lines = [];
  const waiters = [];
  createInterface({ input: proc.stdout }).on('line', (l) => {
    const r = JSON.parse(l);
    if (waiters.length) waiters.shift()(r);
    else lines.push(r);
  });
  proc.once('exit', (code) => {
    for (const w of waiters.splice(0)) w({ error: `agent exited (${code}): ${err}` });
  });
  const next = () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((ok) => waiters.push(ok)));
  const reply = next();
  const call = (t, a) => {
    proc.stdin.write(JSON.stringify({ tool: t, args: a }) + '\n');
    return next();
  };
  return { proc, reply, call, stop: () => proc.stdin.end() };
}
