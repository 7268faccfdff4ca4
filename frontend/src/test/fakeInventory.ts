// Adds a stand-in for app.InventoryService to the fake Wails bridge. Call
// it after installBridge. Tests push "inventory:changed" and
// "inventory:drill" as the Go side's EventsEmit would.

import { vi } from 'vitest';
import type { DrillReportView, InventoryFilter, InventoryRowView } from '../lib/backend';
import type { FakeInventoryService } from './bindings';

export function inventoryRow(over: Partial<InventoryRowView> = {}): InventoryRowView {
  return {
    id: 'az-1',
    kind: 'oauth',
    name: 'tracker',
    provider: 'github.com',
    accountRef: 'ana@example.com',
    scopes: ['repo'],
    environment: 'production',
    heldOn: 'this machine (ana-laptop)',
    owner: 'ana@example.com',
    backupRevoker: 'ops@example.com',
    createdVia: 'authorization_code',
    connectedAt: '2026-11-20T10:00:00Z',
    lastUsed: '2026-11-29T09:00:00Z',
    lastRefresh: '2026-11-29T09:00:00Z',
    reviewBy: '2027-02-18T00:00:00Z',
    lastDrillId: '',
    lastDrillKind: '',
    lastDrillAt: '',
    lastDrillPassed: false,
    nextDrill: '2027-02-18T10:00:00Z',
    drillEveryDays: 90,
    drillKind: 'unattended',
    drillable: true,
    operations: ['tracker.create_issue'],
    disableProcedure: 'Revoke: Yett drops its tokens and refuses its operations at once, then revokes both tokens at github.com (RFC 7009).',
    state: 'active',
    stateReason: '',
    controlled: true,
    missing: [],
    reviewDue: false,
    drillOverdue: false,
    drilling: false,
    ...over,
  };
}

export function drillReport(over: Partial<DrillReportView> = {}): DrillReportView {
  return {
    id: 'dr-1',
    authorizationId: 'az-1',
    name: 'tracker',
    provider: 'github.com',
    accountRef: 'ana@example.com',
    kind: 'full',
    trigger: 'person',
    startedAt: '2026-12-01T10:00:00Z',
    finishedAt: '2026-12-01T10:00:02Z',
    running: false,
    passed: true,
    steps: [
      {
        name: 'local_disable', title: '1. Disable it in Yett', passed: true, did: 'Yett dropped its tokens.',
        evidence: ['custody answers for it: disabled'], startedAt: '2026-12-01T10:00:00Z', durationMs: 12, auditIndex: 40,
      },
      {
        name: 'provider_revocation', title: '2. Revoke both tokens at the provider', passed: true, did: 'RFC 7009 revocation.',
        evidence: ['refresh token: revocation answered HTTP 200', 'introspection reports the refresh token inactive'],
        startedAt: '2026-12-01T10:00:00Z', durationMs: 240, auditIndex: 41,
      },
    ],
    notExercised: [],
    notChecked: [],
    endState: 'revoked',
    resumed: false,
    advice: 'Every step passed. The authorization is revoked; its owner reconnects it from Connections.',
    ...over,
  };
}

type Listener = (...data: unknown[]) => void;

export function installInventory(initial: { rows?: InventoryRowView[]; reports?: DrillReportView[] } = {}) {
  if (!window.go?.app || !window.runtime) throw new Error('installBridge first');
  const state = {
    rows: initial.rows ?? [],
    reports: initial.reports ?? [],
    blockUncontrolled: false,
    nextReport: drillReport(),
  };
  const listeners = new Map<string, Set<Listener>>();
  const emit = (name: string, payload?: unknown) => {
    for (const cb of listeners.get(name) ?? []) cb(payload);
  };

  const InventoryService = {
    Rows: vi.fn(async (): Promise<unknown> => structuredClone(state.rows)),
    SetField: vi.fn(async (id: string, field: string, value: string): Promise<void> => {
      const r = state.rows.find((x) => x.id === id);
      if (!r) throw 'There is no such row in the inventory.';
      if (field === 'review_by' && value !== '' && !/^\d{4}-\d{2}-\d{2}$/.test(value)) throw 'A review date is written YYYY-MM-DD.';
      const key = ({ owner: 'owner', backup_revoker: 'backupRevoker', environment: 'environment', review_by: 'reviewBy' } as const)[
        field as 'owner'
      ];
      (r as unknown as Record<string, string>)[key] = field === 'review_by' && value ? `${value}T00:00:00Z` : value;
    }),
    SetDrillSchedule: vi.fn(async (_id: string, _days: number, _kind: string): Promise<void> => {}),
    Settings: vi.fn(async (): Promise<unknown> => ({ blockUncontrolled: state.blockUncontrolled })),
    SetBlockUncontrolled: vi.fn(async (on: boolean): Promise<void> => {
      state.blockUncontrolled = on;
    }),
    RunDrill: vi.fn(async (id: string, kind: string): Promise<unknown> => {
      const rep = { ...structuredClone(state.nextReport), authorizationId: id, kind };
      state.reports.unshift(rep);
      return rep;
    }),
    Drills: vi.fn(async (id: string): Promise<unknown> => structuredClone(state.reports.filter((r) => r.authorizationId === id))),
    Export: vi.fn(async (format: string, _f: InventoryFilter): Promise<unknown> => ({
      saved: true, path: `/home/ana/yett-inventory.${format}`, size: 512,
    })),
    ExportDrill: vi.fn(async (id: string): Promise<unknown> => ({ saved: true, path: `/home/ana/yett-drill-${id}.json`, size: 900 })),
  } satisfies FakeInventoryService;
  (window.go.app as Record<string, unknown>).InventoryService = InventoryService;

  const runtime = window.runtime;
  const eventsOn = runtime.EventsOn;
  runtime.EventsOn = vi.fn((name: string, cb: Listener) => {
    if (!name.startsWith('inventory:')) return eventsOn(name, cb);
    if (!listeners.has(name)) listeners.set(name, new Set());
    listeners.get(name)!.add(cb);
    return () => listeners.get(name)!.delete(cb);
  });

  return {
    InventoryService,
    state,
    /** As the Go side's EventsEmit("inventory:changed"). */
    changed: () => emit('inventory:changed'),
    /** As the Go side's EventsEmit("inventory:drill", report). */
    drill: (r: DrillReportView) => emit('inventory:drill', r),
  };
}
