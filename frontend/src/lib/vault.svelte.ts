// The vault status as the backend last reported it, shared by every screen.
// It holds nothing the backend did not send, plus the local time the status
// arrived (countdowns such as retryAfterMs are relative to that moment).

import * as backend from './backend';
import type { VaultStatus } from './backend';

export class VaultStore {
  /** null until the first status arrives. */
  status = $state<VaultStatus | null>(null);
  /** Date.now() when status arrived. */
  receivedAt = $state(0);
  /** Set when the backend cannot be reached or sent something unreadable. */
  error = $state('');
  /** Set by setup: the app then opens on how to connect an agent. */
  justCreated = $state(false);
  /**
   * The view open in the unlocked app ("" before the first). It outlives
   * the app's screens, so unlocking returns to the view that was open when
   * the vault locked (Ctrl+L or auto-lock), not to the default one.
   */
  view = $state('');
  /**
   * Set while a backup is restored from the unlocked app: the restore locks
   * and unlocks the vault, and the app stays on the page that asked rather
   * than passing through the unlock screen.
   */
  restoring = $state(false);

  private unsubscribe: (() => void) | null = null;

  /**
   * Applies a status unless it is older than the one shown. The epoch only
   * grows (every lock and unlock raises it), so a reply that arrives after a
   * newer pushed event must not roll the screen back to the earlier state.
   */
  apply(s: VaultStatus): void {
    if (this.status && s.epoch < this.status.epoch) return;
    this.status = s;
    // Only the first unlock after setup opens on Connect an agent.
    if (s.state === 'locked') this.justCreated = false;
    this.receivedAt = Date.now();
    this.error = '';
  }

  /** Subscribes to pushed statuses, then reads the current one. */
  async start(): Promise<void> {
    try {
      await backend.waitForBackend();
      this.unsubscribe ??= backend.onVaultStatus(
        (s) => this.apply(s),
        (e) => (this.error = e.message),
      );
      this.apply(await backend.vaultStatus());
    } catch (err) {
      this.error = (err as Error).message;
    }
  }

  /** Re-reads the status, e.g. to learn retryAfterMs after a failed unlock. */
  async refresh(): Promise<void> {
    try {
      this.apply(await backend.vaultStatus());
    } catch (err) {
      this.error = (err as Error).message;
    }
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }
}
