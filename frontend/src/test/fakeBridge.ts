// A stand-in for the Wails bridge (window.go / window.runtime) for unit
// tests. It records every call and lets a test push "vault:status" events.
// The real bridge is exercised by the e2e script against the Go app.

import { vi } from 'vitest';
import type {
  ConnectInfo,
  CredentialEditForm,
  CredentialView,
  NewCredentialForm,
  RemovedCredentialView,
  VaultStatus,
} from '../lib/backend';
import { installApprovals } from './fakeApprovals';
import { installDesktop } from './fakeDesktop';
import type { FakeVaultService, FakeConnectService } from './bindings';

export function vaultStatus(over: Partial<VaultStatus> = {}): VaultStatus {
  return {
    state: 'locked',
    epoch: 1,
    keyringEnabled: false,
    keyringAvailable: true,
    keyringNote: '',
    autoLockMinutes: 480,
    lockDeadline: '',
    damaged: '',
    retryAfterMs: 0,
    kdf: 'argon2id t=3 m=64MiB p=4',
    rotationsDue: 0,
    lastBackupAt: '',
    lastBackupPath: '',
    backupReminderDays: 30,
    backupDue: false,
    ...over,
  };
}

export function credentialView(over: Partial<CredentialView> = {}): CredentialView {
  return {
    id: 'cred-1',
    name: 'github-api',
    format: 'bearer',
    headerName: '',
    template: '',
    username: '',
    hosts: ['api.github.com'],
    pathPrefixes: [],
    approval: 'session',
    createdAt: '2026-11-29T18:00:00Z',
    updatedAt: '2026-11-29T18:00:00Z',
    secretSetAt: '2026-11-29T18:00:00Z',
    version: 1,
    rotateEveryDays: 0,
    rotationDueAt: '',
    rotationDue: false,
    overlapsWith: [],
    ...over,
  };
}

export function connectInfo(over: Partial<ConnectInfo> = {}): ConnectInfo {
  const cli = '/opt/Yett/yett';
  return {
    cliPath: cli,
    cliFound: true,
    listening: true,
    problem: '',
    user: 'ana',
    clients: [
      { id: 'claude-code', name: 'Claude Code', agent: 'claude', command: `claude mcp add --scope user yett -- ${cli} mcp`, config: '{}', configFile: '.mcp.json' },
      { id: 'cursor', name: 'Cursor', agent: 'cursor', command: 'xdg-open cursor://anysphere.cursor-deeplink/mcp/install?name=yett', config: '{}', configFile: '~/.cursor/mcp.json' },
      { id: 'codex', name: 'Codex', agent: 'codex', command: `codex mcp add yett -- ${cli} mcp`, config: '[mcp_servers.yett]', configFile: '~/.codex/config.toml' },
      { id: 'vscode', name: 'VS Code', agent: 'vscode', command: `code --add-mcp '{"name":"yett"}'`, config: '{}', configFile: 'mcp.json' },
      { id: 'other', name: 'Any MCP client', agent: '', command: `${cli} mcp`, config: '{}', configFile: 'settings' },
    ],
    ...over,
  };
}

type Listener = (...data: unknown[]) => void;

export function installBridge(initial: VaultStatus = vaultStatus()) {
  let current = initial;
  const credentials: CredentialView[] = [];
  // Removed credentials the fake can still restore, as the vault keeps them
  // for 30 seconds.
  const removed: (RemovedCredentialView & { view: CredentialView })[] = [];
  const listeners = new Map<string, Set<Listener>>();

  const VaultService = {
    Status: vi.fn(async (): Promise<unknown> => current),
    Create: vi.fn(async (_p: string, useKeyring: boolean): Promise<unknown> => {
      current = { ...current, state: 'unlocked', epoch: current.epoch + 1, keyringEnabled: useKeyring };
      return current;
    }),
    Unlock: vi.fn(async (p: string): Promise<unknown> => {
      if (p !== 'right passphrase 1') throw 'wrong passphrase';
      current = { ...current, state: 'unlocked', epoch: current.epoch + 1 };
      return current;
    }),
    UnlockWithKeyring: vi.fn(async (): Promise<unknown> => {
      current = { ...current, state: 'unlocked', epoch: current.epoch + 1 };
      return current;
    }),
    Lock: vi.fn(async (): Promise<unknown> => {
      current = { ...current, state: 'locked', epoch: current.epoch + 1 };
      return current;
    }),
    SetAutoLockMinutes: vi.fn(async (m: number): Promise<unknown> => {
      current = { ...current, autoLockMinutes: m };
      return current;
    }),
    EnableKeyring: vi.fn(async (on: boolean): Promise<unknown> => {
      current = { ...current, keyringEnabled: on };
      return current;
    }),
    Touch: vi.fn(async (): Promise<void> => {}),
    ListCredentials: vi.fn(async (): Promise<unknown> => credentials.map((c) => ({ ...c }))),
    AddCredential: vi.fn(async (f: NewCredentialForm): Promise<unknown> => {
      const view = credentialView({
        id: `cred-${credentials.length + 1}`,
        name: f.name,
        format: f.format,
        headerName: f.headerName,
        template: f.template,
        username: f.username,
        hosts: f.hosts,
        pathPrefixes: f.pathPrefixes,
        approval: f.approval,
        rotateEveryDays: f.rotateEveryDays,
      });
      credentials.push(view);
      return view;
    }),
    RemoveCredential: vi.fn(async (id: string): Promise<void> => {
      const i = credentials.findIndex((c) => c.id === id);
      if (i < 0) return;
      const [view] = credentials.splice(i, 1);
      removed.unshift({ id, name: view.name, undoUntil: new Date(Date.now() + 30_000).toISOString(), view });
    }),
    RemovedCredentials: vi.fn(async (): Promise<unknown> =>
      removed.filter((r) => Date.parse(r.undoUntil) > Date.now()).map(({ id, name, undoUntil }) => ({ id, name, undoUntil })),
    ),
    UndoRemoveCredential: vi.fn(async (id: string): Promise<unknown> => {
      const i = removed.findIndex((r) => r.id === id && Date.parse(r.undoUntil) > Date.now());
      if (i < 0) throw 'Too late to undo: the removal stands (30 seconds passed, or the vault locked since). Add the credential again if you need it.';
      const [r] = removed.splice(i, 1);
      const view = { ...r.view, version: r.view.version + 1 };
      credentials.push(view);
      return { ...view };
    }),
    SetBackupReminderDays: vi.fn(async (days: number): Promise<unknown> => {
      current = { ...current, backupReminderDays: days, backupDue: current.backupDue && days > 0 };
      return current;
    }),
    UpdateCredential: vi.fn(async (id: string, version: number, f: CredentialEditForm): Promise<unknown> => {
      const i = credentials.findIndex((c) => c.id === id);
      if (i < 0) throw 'No such credential.';
      if (credentials[i].version !== version) throw 'This credential changed since the form was opened.';
      credentials[i] = { ...credentials[i], ...f, version: version + 1, updatedAt: '2026-11-30T09:00:00Z' };
      return { ...credentials[i] };
    }),
    RotateSecret: vi.fn(async (id: string, version: number, _secret: string): Promise<unknown> => {
      const i = credentials.findIndex((c) => c.id === id);
      if (i < 0) throw 'No such credential.';
      if (credentials[i].version !== version) throw 'This credential changed since the form was opened.';
      credentials[i] = { ...credentials[i], version: version + 1, secretSetAt: '2026-11-30T09:00:00Z', updatedAt: '2026-11-30T09:00:00Z' };
      return { ...credentials[i] };
    }),
    CheckBindings: vi.fn(async (_h: string[], _p: string[], _except: string): Promise<unknown> => []),
    ChangePassphrase: vi.fn(async (cur: string, _next: string): Promise<unknown> => {
      if (cur !== 'right passphrase 1') throw 'Wrong passphrase.';
      return { keyringRewrapped: current.keyringEnabled, keyringCleared: false, status: current };
    }),
    ExportBackup: vi.fn(async (_p: string): Promise<unknown> => ({ saved: true, path: '/home/ana/yett-2026-11-30.yettbackup', size: 40960 })),
    ChooseBackup: vi.fn(async (): Promise<unknown> => ({
      chosen: true, path: '/home/ana/yett-2026-11-30.yettbackup', name: 'yett-2026-11-30.yettbackup', size: 40960,
      modified: '2026-11-30T09:00:00Z',
    })),
    RestoreBackup: vi.fn(async (_path: string, p: string): Promise<unknown> => {
      if (p !== 'right passphrase 1') throw 'Wrong passphrase.';
      current = { ...current, state: 'unlocked', epoch: current.epoch + 2 };
      return current;
    }),
    CancelKeyringWait: vi.fn(async (): Promise<void> => {}),
  } satisfies FakeVaultService;

  // The agent clients' files, as Yett's one-click connect sees them: a
  // state per client, flipped by ApplyAgent.
  const agentStates: Record<string, string> = { claude: 'absent', codex: 'different', cursor: 'unreadable', vscode: 'connected' };
  const agentNames: Record<string, string> = { claude: 'Claude Code', codex: 'Codex', cursor: 'Cursor', vscode: 'VS Code' };
  const agentPaths: Record<string, string> = {
    claude: '~/.claude.json',
    codex: '~/.codex/config.toml',
    cursor: '~/.cursor/mcp.json',
    vscode: '~/.config/Code/User/mcp.json',
  };
  const agentClients = () =>
    Object.keys(agentNames).map((id) => ({
      id,
      name: agentNames[id],
      path: agentPaths[id],
      state: agentStates[id],
      problem: agentStates[id] === 'unreadable' ? 'the file is not valid JSON.' : '',
      lastCall: id === 'vscode' ? '2026-12-03T09:41:00Z' : '',
      lastProgram: id === 'vscode' ? 'code' : '',
      lastPid: id === 'vscode' ? 4242 : 0,
    }));
  const ConnectService = {
    Info: vi.fn(async (): Promise<unknown> => connectInfo()),
    AgentClients: vi.fn(async (): Promise<unknown> => agentClients()),
    PlanAgent: vi.fn(async (id: string, remove: boolean): Promise<unknown> => {
      if (agentStates[id] === 'unreadable') throw `agentconfig: the file cannot be edited safely: ${agentPaths[id]}`;
      const change = remove
        ? agentStates[id] === 'absent' ? 'none' : 'remove'
        : { absent: 'add', different: 'update', connected: 'none' }[agentStates[id]];
      return {
        client: id,
        name: agentNames[id],
        path: agentPaths[id],
        change,
        creates: false,
        entry: remove ? '' : '{\n  "mcpServers": {\n    "yett": {"command": "/opt/Yett/yett", "args": ["mcp"]}\n  }\n}\n',
        plan: `plan-${id}-${remove}`,
      };
    }),
    ApplyAgent: vi.fn(async (id: string, remove: boolean, plan: string): Promise<unknown> => {
      if (plan !== `plan-${id}-${remove}`) throw `${agentPaths[id]} changed since the change was shown: nothing was written`;
      agentStates[id] = remove ? 'absent' : 'connected';
      return {
        path: agentPaths[id],
        backup: `${agentPaths[id]}.yett-backup`,
        message: remove ? `Yett is out of ${agentNames[id]}’s configuration.` : `Yett is in ${agentNames[id]}’s configuration. Restart ${agentNames[id]}.`,
      };
    }),
  } satisfies FakeConnectService;

  window.go = { app: { VaultService, ConnectService } as never };
  window.runtime = {
    EventsOn: vi.fn((name: string, cb: Listener) => {
      if (!listeners.has(name)) listeners.set(name, new Set());
      listeners.get(name)!.add(cb);
      return () => listeners.get(name)!.delete(cb);
    }),
    EventsOff: vi.fn((name: string) => {
      listeners.delete(name);
    }),
  };

  // The shell always reads approvals; by default there are none.
  installApprovals();
  installDesktop();

  return {
    VaultService,
    ConnectService,
    credentials,
    listenerCount: (name: string) => listeners.get(name)?.size ?? 0,
    /** Sets the backend's state and pushes it as Go's EventsEmit would. */
    emit(s: VaultStatus) {
      current = s;
      for (const cb of listeners.get('vault:status') ?? []) cb(s);
    },
    /** Pushes a raw payload without changing the backend's state. */
    emitRaw(payload: unknown) {
      for (const cb of listeners.get('vault:status') ?? []) cb(payload);
    },
    get status() {
      return current;
    },
    set status(s: VaultStatus) {
      current = s;
    },
  };
}
