// Adds a stand-in for app.MCPService (and the OAuth flow calls the
// connection panel polls) to the fake Wails bridge. Call it after
// installBridge. Tests push "mcp:changed" and "mcp:connect" as the Go
// side's EventsEmit would.

import { vi } from 'vitest';
import type { FlowView, MCPConnectResult, MCPServerForm, MCPServerView, MCPSettingsForm } from '../lib/backend';
import type { FakeMCPService } from './bindings';

export function mcpServer(over: Partial<MCPServerView> = {}): MCPServerView {
  return {
    id: 'ms-1',
    name: 'everything',
    transport: 'stdio',
    command: '/usr/bin/node',
    args: ['/srv/everything/index.js', 'stdio'],
    url: '',
    secretNames: ['API_TOKEN'],
    authorizationId: '',
    authorizationName: '',
    settings: { approval: 'writes', tools: [], owner: 'ana', backupRevoker: 'luis' },
    state: 'ready',
    problem: '',
    tools: [
      { name: 'echo', readOnlyHint: true, approval: '', asksEachCall: false },
      { name: 'get-env', readOnlyHint: true, approval: '', asksEachCall: false },
      { name: 'toggle-simulated-logging', readOnlyHint: false, approval: '', asksEachCall: true },
    ],
    hidden: [],
    controlled: true,
    problems: [],
    createdAt: '2026-12-01T10:00:00Z',
    version: 1,
    ...over,
  };
}

export function waitingFlow(over: Partial<FlowView> = {}): FlowView {
  return {
    flowId: 'fl-1', flow: 'authorization_code', state: 'waiting',
    authorizationUrl: 'https://as.example/authorize?client_id=c&resource=https%3A%2F%2Fmcp.example%2Fmcp&code_challenge_method=S256',
    userCode: '', verificationUri: '', verificationUriComplete: '', expiresAt: '2099-01-01T00:00:00Z', authorizationId: '', error: '',
    ...over,
  };
}

type Listener = (...data: unknown[]) => void;

export function installMCP(initial: { servers?: MCPServerView[] } = {}) {
  if (!window.go?.app || !window.runtime) throw new Error('installBridge first');
  const state = { servers: initial.servers ?? [], addError: '' };
  const listeners = new Map<string, Set<Listener>>();
  const find = (id: string) => {
    const i = state.servers.findIndex((s) => s.id === id);
    if (i < 0) throw 'No such MCP server.';
    return i;
  };
  const MCPService = {
    Servers: vi.fn(async (): Promise<unknown> => structuredClone(state.servers)),
    AddServer: vi.fn(async (f: MCPServerForm): Promise<unknown> => {
      if (state.addError) throw state.addError;
      const s = mcpServer({
        id: `ms-${state.servers.length + 1}`, name: f.name, transport: f.transport, command: f.command, args: f.args, url: f.url,
        secretNames: f.secrets.map((x) => x.name), settings: { ...f.settings }, state: 'starting', tools: [],
      });
      state.servers.push(s);
      return structuredClone(s);
    }),
    ConnectServer: vi.fn(async (f: MCPServerForm): Promise<unknown> => ({
      flow: waitingFlow(), server: f.name, issuer: 'https://as.example', resource: f.url, scopes: ['read'], registered: true,
    })),
    UpdateServer: vi.fn(async (id: string, s: MCPSettingsForm): Promise<unknown> => {
      const i = find(id);
      const tools = state.servers[i].tools.map((t) => {
        const mode = s.tools.find((m) => m.tool === t.name)?.approval ?? '';
        const eff = mode || s.approval;
        return { ...t, approval: mode, asksEachCall: eff === 'per_call' || (eff === 'writes' && !t.readOnlyHint) };
      });
      state.servers[i] = { ...state.servers[i], settings: structuredClone(s), tools, version: state.servers[i].version + 1 };
      return structuredClone(state.servers[i]);
    }),
    RemoveServer: vi.fn(async (id: string): Promise<void> => {
      state.servers.splice(find(id), 1);
    }),
  } satisfies FakeMCPService;
  (window.go.app as Record<string, unknown>).MCPService = MCPService;
  const oauth = ((window.go.app as Record<string, unknown>).OAuthService ??= {}) as Record<string, unknown>;
  oauth.Flow = vi.fn(async (id: string) => waitingFlow({ flowId: id }));
  oauth.CancelFlow = vi.fn(async () => {});

  const runtime = window.runtime;
  const eventsOn = runtime.EventsOn;
  runtime.EventsOn = vi.fn((name: string, cb: Listener) => {
    if (!name.startsWith('mcp:')) return eventsOn(name, cb);
    if (!listeners.has(name)) listeners.set(name, new Set());
    listeners.get(name)!.add(cb);
    return () => listeners.get(name)!.delete(cb);
  });
  runtime.ClipboardSetText = vi.fn(async () => true);
  const emit = (name: string, ...data: unknown[]) => {
    for (const cb of listeners.get(name) ?? []) cb(...data);
  };
  return {
    MCPService,
    state,
    changed: () => emit('mcp:changed'),
    connected: (r: MCPConnectResult) => emit('mcp:connect', r, 1),
  };
}
