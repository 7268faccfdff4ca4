// Adds a stand-in for app.AuditService's LastAgentCall (and an intact log's
// Status) to the fake Wails bridge: the newest call an agent completed, as
// the Connect page's checklist reads it. `complete` records a call and
// pushes "audit:changed" as the Go side does when the log grows.

import { vi } from 'vitest';
import type { AgentCall } from '../lib/backend';
import type { FakeAuditService } from './bindings';

export function agentCall(over: Partial<AgentCall> = {}): AgentCall {
  return {
    readable: true,
    found: true,
    time: '2026-12-04T10:00:00Z',
    channel: 'http',
    operation: 'GET',
    target: 'api.example.com',
    path: '/profile',
    status: 200,
    class: 'success',
    credential: 'receiver',
    agent: 'claude',
    pid: 4242,
    ...over,
  };
}

type Listener = (...data: unknown[]) => void;

export function installLastCall(initial: AgentCall = agentCall({ found: false, time: '', operation: '', target: '', path: '', status: 0, class: '', credential: '', agent: '', pid: 0 })) {
  if (!window.go?.app || !window.runtime) throw new Error('installBridge first');
  let current = initial;
  const listeners = new Set<Listener>();
  const AuditService = {
    LastAgentCall: vi.fn(async (): Promise<unknown> => structuredClone(current)),
    Status: vi.fn(async (): Promise<unknown> => ({
      state: 'intact', writing: true, problem: '', entries: 4, treeHead: '4 abc=', signedSize: 4, firstBad: -1, reason: '', torn: '', notes: [],
    })),
  } satisfies FakeAuditService;
  (window.go.app as Record<string, unknown>).AuditService = AuditService;
  const runtime = window.runtime;
  const eventsOn = runtime.EventsOn;
  runtime.EventsOn = vi.fn((name: string, cb: Listener) => {
    if (name !== 'audit:changed') return eventsOn(name, cb);
    listeners.add(cb);
    return () => listeners.delete(cb);
  });
  return {
    AuditService,
    /** The log now holds this call; the window is told the log grew. */
    complete(call: AgentCall) {
      current = call;
      for (const cb of listeners) cb(5);
    },
  };
}
