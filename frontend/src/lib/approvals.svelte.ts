// The approval cards and live sessions as the backend last reported them.
// The backend pushes the whole state on every change, so this store replaces
// what it holds instead of patching it: a card the backend withdrew (agent
// exited, vault locked, timeout) is gone with the next push.

import * as backend from './backend';
import type { ApprovalCard, ApprovalState, DecisionView, LiveGrant, LiveSession } from './backend';

export class ApprovalStore {
  cards = $state<ApprovalCard[]>([]);
  sessions = $state<LiveSession[]>([]);
  /** Time-boxed grants in force, oldest first. */
  grants = $state<LiveGrant[]>([]);
  /** Recent answers and expiries, newest first. */
  decisions = $state<DecisionView[]>([]);
  /** Date.now() when the state arrived: card countdowns start there. */
  receivedAt = $state(0);
  /** False until the first state arrived. */
  loaded = $state(false);
  error = $state('');
  /** The panel is folded into a badge (the person chose it; small windows). */
  collapsed = $state(false);

  private unsubscribe: (() => void) | null = null;
  /** Counts pushed states, so a slower initial read cannot undo a push. */
  private pushes = 0;

  apply(s: ApprovalState): void {
    // Folded for these cards only: the next card after none opens it.
    if (s.cards.length === 0) this.collapsed = false;
    this.cards = s.cards;
    this.sessions = s.sessions;
    this.decisions = s.decisions;
    this.grants = s.grants;
    this.receivedAt = Date.now();
    this.loaded = true;
    this.error = '';
  }

  /** Subscribes to pushed states, then reads the current one. */
  async start(): Promise<void> {
    try {
      this.unsubscribe ??= backend.onApprovalChanged(
        (s) => {
          this.pushes++;
          this.apply(s);
        },
        (e) => (this.error = e.message),
      );
      const before = this.pushes;
      const [cards, sessions, decisions, grants] = await Promise.all([
        backend.approvalPending(),
        backend.approvalSessions(),
        backend.approvalDecisions(),
        backend.approvalGrants(),
      ]);
      if (this.pushes === before) this.apply({ cards, sessions, decisions, grants });
    } catch (err) {
      this.error = (err as Error).message;
    }
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }
}

/** Seconds left on a card at `now`, counted from when its state arrived. */
export function secondsLeft(card: ApprovalCard, receivedAt: number, now: number): number {
  // A clock that last ticked before the state arrived must not add time.
  const elapsed = Math.max(0, now - receivedAt);
  return Math.max(0, Math.ceil(card.secondsLeft - elapsed / 1000));
}
