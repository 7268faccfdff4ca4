// Adds a stand-in for app.SSHService to the fake Wails bridge. Call it after
// installBridge. Tests push "ssh:changed" as the Go side's EventsEmit would.

import { vi } from 'vitest';
import type { SSHHostForm, SSHHostView, SSHSettingsForm } from '../lib/backend';
import type { FakeSSHService } from './bindings';

export const HOST_KEY_FP = 'SHA256:hostkeyhostkeyhostkeyhostkeyhostkey0000000';

export function sshHost(over: Partial<SSHHostView> = {}): SSHHostView {
  return {
    id: 'ssh_1',
    name: 'web-1',
    address: '127.0.0.1',
    port: 2222,
    user: 'deploy',
    publicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPUBLICPUBLICPUBLIC yett:web-1',
    keyFingerprint: 'SHA256:clientkeyclientkeyclientkeyclientkey000000',
    pins: [],
    alertFingerprint: '',
    alertAt: '',
    settings: { approval: 'per_call', rules: '', timeoutSeconds: 30, record: false, owner: 'ana', backupRevoker: 'luis' },
    controlled: true,
    problems: ['no pinned host key: agents cannot use this host until you pin one'],
    createdAt: '2026-12-01T10:00:00Z',
    version: 1,
    ...over,
  };
}

type Listener = (...data: unknown[]) => void;

export function installSSH(initial: { hosts?: SSHHostView[] } = {}) {
  if (!window.go?.app || !window.runtime) throw new Error('installBridge first');
  const state = { hosts: initial.hosts ?? [], tofuError: '' };
  const listeners = new Map<string, Set<Listener>>();
  const find = (id: string) => {
    const i = state.hosts.findIndex((h) => h.id === id);
    if (i < 0) throw 'No such SSH host.';
    return i;
  };
  const pin = (id: string) => {
    const i = find(id);
    state.hosts[i] = { ...state.hosts[i], pins: [{ type: 'ssh-ed25519', fingerprint: HOST_KEY_FP }], alertFingerprint: '', alertAt: '', problems: [] };
    return structuredClone(state.hosts[i]);
  };

  const SSHService = {
    Hosts: vi.fn(async (): Promise<unknown> => structuredClone(state.hosts)),
    AddHost: vi.fn(async (f: SSHHostForm): Promise<unknown> => {
      const h = sshHost({
        id: `ssh_${state.hosts.length + 1}`, name: f.name, address: f.address, port: f.port, user: f.user,
        publicKey: `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${f.privateKey ? 'IMPORTED' : 'GENERATED'} yett:${f.name}`,
        settings: { ...f.settings, timeoutSeconds: f.settings.timeoutSeconds || 30 },
      });
      state.hosts.push(h);
      return structuredClone(h);
    }),
    UpdateHost: vi.fn(async (id: string, s: SSHSettingsForm): Promise<unknown> => {
      const i = find(id);
      state.hosts[i] = { ...state.hosts[i], settings: { ...s }, version: state.hosts[i].version + 1 };
      return structuredClone(state.hosts[i]);
    }),
    RemoveHost: vi.fn(async (id: string): Promise<void> => {
      state.hosts.splice(find(id), 1);
    }),
    PinPasted: vi.fn(async (id: string, _text: string): Promise<unknown> => pin(id)),
    PinFromKnownHosts: vi.fn(async (id: string): Promise<unknown> => ({ host: pin(id), skipped: 1 })),
    TrustOnFirstUse: vi.fn(async (id: string): Promise<unknown> => {
      if (state.tofuError) throw state.tofuError;
      return pin(id);
    }),
    AcceptPresented: vi.fn(async (id: string): Promise<unknown> => pin(id)),
    Recordings: vi.fn(async (hostId: string): Promise<unknown> => [
      { id: 'req-1', hostId, started: '2026-12-01T10:05:00Z', bytes: 300 },
    ]),
    Recording: vi.fn(async (id: string): Promise<unknown> => ({
      id, hostId: 'ssh_1', started: '2026-12-01T10:05:00Z', bytes: 300, complete: true,
      cast: '{"version":2,"width":120,"height":40,"timestamp":1,"command":"uptime","title":"deploy@web-1"}\n[0.1,"o","<b>up 3 days</b>\\n"]\n',
    })),
  } satisfies FakeSSHService;
  (window.go.app as Record<string, unknown>).SSHService = SSHService;

  const runtime = window.runtime;
  const eventsOn = runtime.EventsOn;
  runtime.EventsOn = vi.fn((name: string, cb: Listener) => {
    if (!name.startsWith('ssh:')) return eventsOn(name, cb);
    if (!listeners.has(name)) listeners.set(name, new Set());
    listeners.get(name)!.add(cb);
    return () => listeners.get(name)!.delete(cb);
  });
  runtime.ClipboardSetText = vi.fn(async () => true);

  return {
    SSHService,
    state,
    /** As the Go side's EventsEmit("ssh:changed"). */
    changed: () => {
      for (const cb of listeners.get('ssh:changed') ?? []) cb();
    },
  };
}
