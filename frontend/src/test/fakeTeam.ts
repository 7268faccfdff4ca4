// Adds a stand-in for app.TeamService to the fake Wails bridge. Call it
// after installBridge. It filters rows as the team database does (words
// and one state), so a test sees what reached the service and what came
// back.

import { vi } from 'vitest';
import type {
  TeamCheckpointView,
  TeamFilter,
  TeamMachineView,
  TeamRequestView,
  TeamRowView,
  TeamStatusView,
} from '../lib/backend';
import { inventoryRow } from './fakeInventory';
import type { FakeTeamService } from './bindings';

export function teamStatusView(over: Partial<TeamStatusView> = {}): TeamStatusView {
  return {
    inTeam: true, teamName: 'platform', role: 'lead', machine: 'lea-laptop', member: 'lea', sharing: true, connected: true,
    lastSynced: '2026-12-07T06:00:00Z', waiting: 0, problem: '', ...over,
  };
}

export function teamMachine(over: Partial<TeamMachineView> = {}): TeamMachineView {
  return {
    id: 'm-mia', hostname: 'mia-desktop', member: 'mia', kind: 'member', lastSeen: '2026-12-07T06:00:00Z', removed: '', clock: '',
    rows: 2, fingerprint: 'SHA256:mia', ...over,
  };
}

export function teamRow(over: Partial<TeamRowView> = {}): TeamRowView {
  return {
    machine: 'm-mia', hostname: 'mia-desktop', member: 'mia', removed: false, verified: true, updated: '2026-12-07T06:00:00Z',
    row: inventoryRow({ id: 'az-1', name: 'tracker', owner: 'mia', backupRevoker: 'bob', heldOn: 'mia-desktop' }),
    ...over,
  };
}

export function teamCheckpoint(over: Partial<TeamCheckpointView> = {}): TeamCheckpointView {
  return {
    machine: 'm-mia', hostname: 'mia-desktop', size: 120, published: '2026-12-07T05:00:00Z', verified: true, cosignedSize: 120,
    witness: 'witness.example', witnessed: true, refused: false, refusal: '', refusedAt: '',
    words: 'Its newest checkpoint, 120 records, is witnessed by witness.example.', ...over,
  };
}

export function teamRequest(over: Partial<TeamRequestView> = {}): TeamRequestView {
  return {
    id: 'rq-1', hostname: 'mia-desktop', member: 'mia', rowId: 'az-1', rowName: 'tracker', reason: 'left the project',
    requestedBy: 'lea', requestedAt: '2026-12-07T06:10:00Z', status: 'pending', outcome: '', answeredAt: '', verified: false,
    waiting: 'pending at mia-desktop since 2026-12-07 06:10 UTC; backup revoker: bob', ...over,
  };
}

interface Initial {
  status?: TeamStatusView;
  machines?: TeamMachineView[];
  rows?: TeamRowView[];
  checkpoints?: TeamCheckpointView[];
  requests?: TeamRequestView[];
  /** Every lead call fails with this, as an unreachable database does. */
  failure?: string;
}

export function installTeam(initial: Initial = {}) {
  if (!window.go?.app) throw new Error('installBridge first');
  const state = {
    status: initial.status ?? teamStatusView(),
    machines: initial.machines ?? [teamMachine()],
    rows: initial.rows ?? [teamRow()],
    checkpoints: initial.checkpoints ?? [teamCheckpoint()],
    requests: initial.requests ?? [],
    failure: initial.failure ?? '',
  };
  const lead = async <T>(v: () => T): Promise<T> => {
    if (state.status.role !== 'lead') throw 'Only a lead reads the whole team; this machine is a member.';
    if (state.failure) throw state.failure;
    return structuredClone(v());
  };
  const passes = (r: TeamRowView, f: TeamFilter) => {
    const hay = [r.row.name, r.row.owner, r.row.backupRevoker, r.hostname, r.member, r.row.state].join(' ').toLowerCase();
    if (f.machine !== '' && r.machine !== f.machine && r.hostname !== f.machine) return false;
    if (!f.text.toLowerCase().split(/\s+/).filter(Boolean).every((w) => hay.includes(w))) return false;
    if (f.state === 'not_under_control') return !r.row.controlled;
    if (f.state === 'drill_overdue') return r.row.drillOverdue;
    if (f.state === 'review_due') return r.row.reviewDue;
    return f.state === '' || r.row.state === f.state;
  };

  const TeamService = {
    Status: vi.fn(async (): Promise<unknown> => structuredClone(state.status)),
    Machines: vi.fn(async (): Promise<unknown> => lead(() => state.machines)),
    Rows: vi.fn(async (f: TeamFilter, cursor: string): Promise<unknown> =>
      lead(() => {
        const all = state.rows.filter((r) => passes(r, f));
        // Two rows a page, so paging shows with few rows.
        const from = cursor === '' ? 0 : Number(cursor);
        return { rows: all.slice(from, from + 2), next: from + 2 < all.length ? String(from + 2) : '' };
      }),
    ),
    Checkpoints: vi.fn(async (): Promise<unknown> => lead(() => state.checkpoints)),
    Requests: vi.fn(async (): Promise<unknown> => lead(() => state.requests)),
    RequestRevocation: vi.fn(async (machine: string, rowID: string, reason: string): Promise<unknown> =>
      lead(() => {
        const r = state.rows.find((x) => x.machine === machine && x.row.id === rowID);
        if (!r) throw 'No such machine or member.';
        const q = teamRequest({
          id: `rq-${state.requests.length + 1}`, hostname: r.hostname, member: r.member, rowId: rowID, rowName: r.row.name, reason,
          waiting: `pending at ${r.hostname} since 2026-12-07 06:20 UTC; backup revoker: ${r.row.backupRevoker}`,
        });
        state.requests.unshift(q);
        return q;
      }),
    ),
    Export: vi.fn(async (format: string, _f: TeamFilter): Promise<unknown> =>
      lead(() => ({ saved: true, path: `/home/lea/yett-team-inventory.${format}`, size: 2048 })),
    ),
  } satisfies FakeTeamService;
  (window.go.app as Record<string, unknown>).TeamService = TeamService;

  type Listener = (...data: unknown[]) => void;
  const listeners = new Set<Listener>();
  const runtime = window.runtime!;
  const eventsOn = runtime.EventsOn;
  runtime.EventsOn = vi.fn((name: string, cb: Listener) => {
    if (name !== 'team:changed') return eventsOn(name, cb);
    listeners.add(cb);
    return () => listeners.delete(cb);
  });

  return {
    TeamService,
    state,
    /** As the Go side's EventsEmit("team:changed"). */
    changed: () => {
      for (const cb of listeners) cb();
    },
  };
}
