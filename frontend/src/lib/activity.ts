// Tells the backend the person is still here, so the idle auto-lock timer
// restarts. At most one Touch per interval: input events fire hundreds of
// times a second and each Touch is an IPC round trip.

import { vaultTouch } from './backend';

export const TOUCH_INTERVAL_MS = 30_000;

const EVENTS = ['pointerdown', 'keydown', 'wheel'] as const;

/**
 * Listens for user input on target and calls Touch at most once per
 * intervalMs. Returns a function that stops listening.
 */
export function watchActivity(
  target: EventTarget = window,
  intervalMs = TOUCH_INTERVAL_MS,
  now: () => number = Date.now,
): () => void {
  let last = -Infinity;
  const onInput = () => {
    const t = now();
    if (t - last < intervalMs) return;
    last = t;
    // A failed Touch only means the timer was not restarted; the status
    // event tells the UI if the vault locked meanwhile.
    vaultTouch().catch(() => {});
  };
  for (const e of EVENTS) target.addEventListener(e, onInput, { passive: true });
  return () => {
    for (const e of EVENTS) target.removeEventListener(e, onInput);
  };
}
