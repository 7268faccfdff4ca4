import { describe, expect, it } from 'vitest';
import { ApprovalStore, secondsLeft } from './approvals.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';
import { approvalCard, installApprovals } from '../test/fakeApprovals';

describe('secondsLeft', () => {
  it('counts down from when the state arrived and never below zero', () => {
    const card = approvalCard({ secondsLeft: 120 });
    expect(secondsLeft(card, 10_000, 10_000)).toBe(120);
    expect(secondsLeft(card, 10_000, 15_500)).toBe(115);
    expect(secondsLeft(card, 10_000, 200_000)).toBe(0);
    // A clock that last ticked before the state arrived adds nothing.
    expect(secondsLeft(card, 10_000, 9_000)).toBe(120);
  });
});

describe('ApprovalStore', () => {
  it('keeps a pushed state over an initial read that answers later', async () => {
    installBridge(vaultStatus({ state: 'unlocked' }));
    const approvals = installApprovals({ cards: [approvalCard()] });
    let release!: () => void;
    approvals.ApprovalService.Pending.mockImplementationOnce(
      () => new Promise((resolve) => (release = () => resolve([approvalCard()]))),
    );
    const store = new ApprovalStore();
    const started = store.start();
    // The card is withdrawn while the first read is still in flight.
    approvals.set({ cards: [] });
    release();
    await started;
    expect(store.cards).toEqual([]);
    store.stop();
    expect(approvals.listenerCount()).toBe(0);
  });

  // Wails' dev server writes each event from a goroutine of its own, so the
  // state pushed when a session card was answered (no card) could arrive
  // after the one that brought the call card: the call card vanished and
  // the agent waited for an answer nobody could give (a flaky e2e step).
  it('keeps the newer state when an older push arrives after it', async () => {
    installBridge(vaultStatus({ state: 'unlocked' }));
    const approvals = installApprovals({ cards: [] });
    const store = new ApprovalStore();
    await store.start();
    const call = approvalCard({ id: 'call-2', kind: 'call' });
    approvals.deliver({ cards: [call], sessions: [], decisions: [], grants: [] }, 12);
    approvals.deliver({ cards: [], sessions: [], decisions: [], grants: [] }, 11);
    expect(store.cards.map((c) => c.id)).toEqual(['call-2']);
    approvals.deliver({ cards: [], sessions: [], decisions: [], grants: [] }, 13);
    expect(store.cards).toEqual([]);
    store.stop();
  });

  it('reports a missing backend instead of showing nothing', async () => {
    installBridge(vaultStatus({ state: 'unlocked' }));
    delete (window.go!.app as Record<string, unknown>).ApprovalService;
    const store = new ApprovalStore();
    await store.start();
    expect(store.error).toContain('not reachable');
    store.stop();
  });
});
