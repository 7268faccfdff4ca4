// Adds a stand-in for app.DesktopService to the fake Wails bridge:
// autostart and the notification policy kept in memory, the notification
// status a test chooses, and the window events (show a card, first close)
// a test can emit as Go's EventsEmit would.

import { vi } from 'vitest';
import type { DesktopSettings } from '../lib/backend';
import type { FakeDesktopService } from './bindings';

export function desktopSettingsFixture(over: Partial<DesktopSettings> = {}): DesktopSettings {
  return {
    autostart: false,
    autostartAvailable: true,
    autostartWhere: '/home/ana/.config/autostart/dev.yett.Yett.desktop',
    autostartProblem: '',
    notifications: { available: true, actions: true, server: 'dunst 1.9.0', problem: '' },
    policy: { sessionCards: true, callCards: true, windowOnly: [] },
    sensitive: [],
    verification: {
      mode: 'sensitive',
      why: 'Other programs cannot type into Yett’s window on this desktop, so a click is enough, except for credentials and hosts you marked for approval on every call.',
      available: true,
      problem: '',
      editable: true,
    },
    notificationServer: {
      current: 'dunst 1.9.0 (bus name :1.7, pid 1432, /usr/bin/dunst)',
      name: ':1.7',
      trusted: true,
      why: '',
    },
    ...over,
  };
}

type Listener = (...data: unknown[]) => void;

export function installDesktop(initial: Partial<DesktopSettings> = {}) {
  if (!window.go?.app || !window.runtime) throw new Error('installBridge first');
  const state = desktopSettingsFixture(initial);
  const listeners = new Map<string, Set<Listener>>();
  const DesktopService = {
    Settings: vi.fn(async (): Promise<unknown> => structuredClone(state)),
    SetAutostart: vi.fn(async (on: boolean): Promise<unknown> => {
      state.autostart = on;
      return structuredClone(state);
    }),
    SetNotificationPolicy: vi.fn(async (p: DesktopSettings['policy']): Promise<unknown> => {
      state.policy = structuredClone(p);
      return structuredClone(state);
    }),
    SetVerification: vi.fn(async (mode: DesktopSettings['verification']['mode']): Promise<unknown> => {
      state.verification = { ...state.verification, mode };
      return structuredClone(state);
    }),
    AcceptNotificationServer: vi.fn(async (name: string): Promise<unknown> => {
      if (name !== state.notificationServer.name) throw new Error('The notification server is not the one Settings showed.');
      state.notificationServer = { ...state.notificationServer, trusted: true, why: '' };
      return structuredClone(state);
    }),
    KeepRunningInBackground: vi.fn(async (): Promise<void> => {}),
    Quit: vi.fn(async (): Promise<void> => {}),
  } satisfies FakeDesktopService;
  (window.go.app as Record<string, unknown>).DesktopService = DesktopService;
  const runtime = window.runtime;
  const eventsOn = runtime.EventsOn;
  const ours = ['desktop:changed', 'app:show-card', 'app:close-requested'];
  runtime.EventsOn = vi.fn((name: string, cb: Listener) => {
    if (!ours.includes(name)) return eventsOn(name, cb);
    if (!listeners.has(name)) listeners.set(name, new Set());
    listeners.get(name)!.add(cb);
    return () => listeners.get(name)!.delete(cb);
  });
  return {
    DesktopService,
    state,
    emit(name: string, payload: unknown) {
      for (const cb of listeners.get(name) ?? []) cb(payload);
    },
  };
}
