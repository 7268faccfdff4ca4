// An MCP agent on the official TypeScript SDK, for the Go tests: it starts
// the real `yett mcp` ($YETT_BIN) over stdio as the SDK's clients do, then
// takes one JSON command per stdin line and answers each with one JSON line
// on stdout, tagged with the command's id (calls run concurrently).
//
// Commands: {"id", "op": "connect"} | {"id", "op": "list"} |
// {"id", "op": "call", "tool", "args", "timeoutMs"?, "progress"?} |
// {"id", "op": "changes"} (how many notifications/tools/list_changed it
// heard, and its pid) | {"id", "op": "close"}. A call with "progress" asks for progress
// notifications and reports their messages; without timeoutMs the SDK's
// default (60 s) applies.
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

let client;
let listChanged = 0;
const reply = (r) => process.stdout.write(JSON.stringify(r) + '\n');

async function run(c) {
  switch (c.op) {
    case 'connect': {
      // The SDK passes a server only HOME, LOGNAME, PATH, SHELL, TERM and
      // USER; the test adds what it names in env.
      const transport = new StdioClientTransport({
        command: process.env.YETT_BIN,
        args: ['mcp'],
        env: { ...getDefaultEnvironment(), ...(c.env ?? {}) },
        stderr: 'inherit',
      });
      client = new Client({ name: 'ts-agent', version: '0' }, { capabilities: {} });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        listChanged++;
      });
      await client.connect(transport);
      return { ok: true, server: client.getServerVersion() };
    }
    case 'list': {
      const res = await client.listTools();
      return { ok: true, tools: res.tools };
    }
    case 'call': {
      const progress = [];
      const opts = {};
      if (c.timeoutMs) opts.timeout = c.timeoutMs;
      if (c.progress) opts.onprogress = (p) => progress.push(p.message ?? '');
      try {
        const res = await client.callTool({ name: c.tool, arguments: c.args ?? {} }, undefined, opts);
        const text = (res.content ?? []).filter((x) => x.type === 'text').map((x) => x.text).join('\n');
        return { ok: true, text, isError: !!res.isError, structured: res.structuredContent ?? null, progress };
      } catch (err) {
        return { ok: false, err: String(err?.message ?? err), code: err?.code ?? null, progress };
      }
    }
    case 'changes':
      return { ok: true, changes: listChanged, pid: process.pid };
    case 'close':
      await client?.close();
      return { ok: true };
  }
  return { ok: false, err: `unknown op ${c.op}` };
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  let c;
  try {
    c = JSON.parse(line);
  } catch {
    reply({ ok: false, err: 'bad command' });
    return;
  }
  run(c).then(
    (r) => reply({ id: c.id, ...r }),
    (err) => reply({ id: c.id, ok: false, err: String(err?.message ?? err), code: err?.code ?? null }),
  );
});
lines.on('close', async () => {
  await client?.close();
  process.exit(0);
});
