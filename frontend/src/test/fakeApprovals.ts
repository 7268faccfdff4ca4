// Adds a stand-in for app.ApprovalService to the fake Wails bridge.
// installBridge installs an empty one; a test that needs cards or sessions
// calls installApprovals again after it, which replaces it. Tests push whole approval states as the Go side's
// "approval:changed" event does; Answer and Revoke behave like the broker
// (the card or session leaves, and the new state is pushed).

import { vi } from 'vitest';
import type { AgentView, ApprovalCard, ApprovalState, DecisionView, LiveSession } from '../lib/backend';
import type { FakeApprovalService } from './bindings';

export function agentView(over: Partial<AgentView> = {}): AgentView {
  return {
    name: 'claude',
    executable: 'claude',
    path: '/home/ana/.local/bin/claude',
    signer: 'unsigned',
    signed: false,
    pid: 48192,
    exeHash: 'sha256:0123456789ab',
    startedAt: '2026-11-29T18:00:00Z',
    parents: [
      { name: 'zsh', pid: 48001 },
      { name: 'tmux', pid: 1200 },
    ],
    via: '/usr/bin/yett',
    shimPid: 48230,
    shimStartedAt: '2026-11-29T18:00:05Z',
    shimParent: { name: 'claude', pid: 48192, startedAt: '2026-11-29T18:00:00Z', cmdline: 'claude --resume' },
    stdio: 'held',
    stdioText: 'This process started yett mcp and holds its input and output.',
    stdioOk: true,
    ...over,
  };
}

export function approvalCard(over: Partial<ApprovalCard> = {}): ApprovalCard {
  return {
    id: 'rq-1',
    kind: 'session',
    agent: agentView(),
    change: 'agent restarted',
    headline: 'The agent restarted',
    detail: 'An earlier run of this program (pid 4242) ended at 14:03:02 (it exited). This is a new process.',
    sentence: 'Approve this newly started process to use api.example.com during this run.',
    channel: 'http',
    target: 'api.example.com',
    method: '',
    path: '',
    credential: '',
    operation: '',
    description: '',
    command: '',
    stdin: '',
    stdinBytes: 0,
    tool: '',
    arguments: '',
    argumentsBytes: 0,
    deadline: '2026-11-29T18:02:00Z',
    secondsLeft: 120,
    scope: 'this run: until pid 48192 exits, the vault locks or Yett restarts',
    verifies: false,
    agentStoppedWaiting: false,
    grantWords: '',
    grantMinutes: 0,
    program: '',
    reason: '',
    wants: '',
    ...over,
  };
}

export function decision(over: Partial<DecisionView> = {}): DecisionView {
  return {
    id: 'rq-0',
    kind: 'session',
    agent: agentView(),
    change: 'first request',
    channel: 'http',
    method: '',
    target: 'api.example.com',
    credential: '',
    outcome: 'approved',
    why: '',
    where: 'from a notification',
    by: 'ana',
    at: '2026-11-29T17:59:00Z',
    grant: '',
    grantUntil: '',
    ...over,
  };
}

export function liveSession(over: Partial<LiveSession> = {}): LiveSession {
  return {
    id: 'ap-1',
    agent: agentView(),
    channel: 'http',
    approvedAt: '2026-11-29T18:00:05Z',
    surface: 'desktop card',
    vaultEpoch: 3,
    ...over,
  };
}

/** What a decision keeps of the card it answered, as the broker does. */
function asked(card: ApprovalCard): Partial<DecisionView> {
  const { id, kind, agent, change, channel, method, target, credential } = card;
  return { id, kind, agent, change, channel, method, target, credential };
}

type Listener = (...data: unknown[]) => void;

export function installApprovals(initial: Partial<ApprovalState> = {}) {
  if (!window.go?.app || !window.runtime) throw new Error('installBridge first');
  const state: ApprovalState = {
    cards: initial.cards ?? [],
    sessions: initial.sessions ?? [],
    decisions: initial.decisions ?? [],
    grants: initial.grants ?? [],
  };
  const listeners = new Set<Listener>();

  const push = () => {
    const snapshot = structuredClone(state);
    for (const cb of listeners) cb(snapshot);
  };

  const ApprovalService = {
    Pending: vi.fn(async (): Promise<unknown> => structuredClone(state.cards)),
    Sessions: vi.fn(async (): Promise<unknown> => structuredClone(state.sessions)),
    Decisions: vi.fn(async (): Promise<unknown> => structuredClone(state.decisions)),
    Grants: vi.fn(async (): Promise<unknown> => structuredClone(state.grants)),
    AnswerGrant: vi.fn(async (id: string): Promise<void> => {
      const i = state.cards.findIndex((c) => c.id === id);
      if (i < 0) throw 'This request is no longer waiting: it was answered, timed out or withdrawn.';
      const [card] = state.cards.splice(i, 1);
      if (!card.grantWords) throw 'This card cannot allow calls like it for a while: approve this call alone, or deny it.';
      state.decisions.unshift(decision({
        ...asked(card), outcome: 'approved', where: 'in the window', grant: card.grantWords, grantUntil: '2026-11-29T18:11:00Z',
      }));
      const session = state.sessions.find((s) => s.agent.pid === card.agent.pid);
      state.grants.push({
        id: `gr-${id}`, sessionId: session?.id ?? '', agent: card.agent, words: card.grantWords, credential: card.credential,
        givenAt: '2026-11-29T18:01:00Z', until: '2026-11-29T18:11:00Z', uses: 0,
      });
      push();
    }),
    AnswerRuns: vi.fn(async (ids: string[], approve: boolean): Promise<unknown> => {
      const answered: string[] = [];
      for (const id of ids) {
        const i = state.cards.findIndex((c) => c.id === id);
        if (i < 0) continue;
        const [card] = state.cards.splice(i, 1);
        answered.push(id);
        state.decisions.unshift(decision({ ...asked(card), outcome: approve ? 'approved' : 'denied', where: 'in the window' }));
        if (approve) state.sessions.push(liveSession({ id: `ap-${id}`, agent: card.agent, channel: card.channel }));
      }
      push();
      return { answered, failed: [] };
    }),
    RevokeGrant: vi.fn(async (id: string): Promise<void> => {
      const i = state.grants.findIndex((g) => g.id === id);
      if (i < 0) throw 'This grant has already ended.';
      state.grants.splice(i, 1);
      push();
    }),
    Answer: vi.fn(async (id: string, approve: boolean): Promise<void> => {
      const i = state.cards.findIndex((c) => c.id === id);
      if (i < 0) throw 'This request is no longer waiting: it was answered, timed out or withdrawn.';
      const [card] = state.cards.splice(i, 1);
      state.decisions.unshift(
        decision({ ...asked(card), outcome: approve ? 'approved' : 'denied', where: 'in the window' }),
      );
      if (approve && card.kind === 'session') {
        state.sessions.push(liveSession({ id: `ap-${id}`, agent: card.agent, channel: card.channel }));
      }
      push();
    }),
    Revoke: vi.fn(async (id: string): Promise<void> => {
      const i = state.sessions.findIndex((s) => s.id === id);
      if (i < 0) throw 'This session has already ended.';
      state.sessions.splice(i, 1);
      push();
    }),
  } satisfies FakeApprovalService;
  (window.go.app as Record<string, unknown>).ApprovalService = ApprovalService;

  const runtime = window.runtime;
  const eventsOn = runtime.EventsOn;
  runtime.EventsOn = vi.fn((name: string, cb: Listener) => {
    if (name !== 'approval:changed') return eventsOn(name, cb);
    listeners.add(cb);
    return () => listeners.delete(cb);
  });

  return {
    ApprovalService,
    state,
    listenerCount: () => listeners.size,
    /** Replaces the backend's state and pushes it, as the broker would. */
    set(next: Partial<ApprovalState>) {
      if (next.cards) state.cards = next.cards;
      if (next.sessions) state.sessions = next.sessions;
      if (next.decisions) state.decisions = next.decisions;
      push();
    },
    /** Pushes a raw payload without changing the state. */
    emitRaw(payload: unknown) {
      for (const cb of listeners) cb(payload);
    },
    /** Delivers a state with the sequence number the Go side gave it (app/events.go). */
    deliver(payload: unknown, seq: number) {
      for (const cb of listeners) cb(payload, seq);
    },
  };
}
