// Keyboard shortcuts of the unlocked app. The About page lists SHORTCUTS,
// so what it says is what handleShortcut does.
//
// Answering a card takes a single letter, so it works only while keyboard
// focus is on that very card (WCAG 2.1.4): typing elsewhere never answers
// one. After an answer focus moves to the next card itself, and a letter
// answers it only when it is a fresh press (not a held key's repeat) and the
// card has been in front of the person for READ_MS: the key that answered
// one card never answers the next.

export interface ShortcutActions {
  lock(): void;
  /** Opens the view at this 0-based position; false when there is none. */
  view(index: number): boolean;
  /** Focuses the open view's search field; false when it has none. */
  search(): boolean;
  /** Opens About and shortcuts (F1), whatever its position. */
  help(): boolean;
  /** Shows the approval cards and focuses the oldest; false when none waits. */
  approvals(): boolean;
}

/** How long a card that received focus waits before A or D answer it. */
export const READ_MS = 700;

export const IS_MAC = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
export const MOD = IS_MAC ? '⌘' : 'Ctrl';

export interface ShortcutHelp {
  keys: string;
  does: string;
}

export function shortcutHelp(viewNames: string[]): ShortcutHelp[] {
  return [
    { keys: `${MOD}+L`, does: 'Lock the vault now' },
    ...viewNames.slice(0, 9).map((name, i) => ({ keys: `${MOD}+${i + 1}`, does: `Open ${name}` })),
    { keys: 'F1', does: 'Open About and the list of shortcuts' },
    { keys: `${MOD}+F`, does: 'Search or filter the open page (Credentials, Activity)' },
    { keys: `${MOD}+J`, does: 'Go to the oldest waiting approval card' },
    { keys: 'A', does: 'Approve the approval card that has keyboard focus' },
    { keys: 'D', does: 'Deny the approval card that has keyboard focus' },
    { keys: 'Esc', does: 'Cancel a confirmation or close an open form' },
  ];
}

function modifier(e: KeyboardEvent): boolean {
  return (IS_MAC ? e.metaKey : e.ctrlKey) && !e.altKey;
}

/** The approval card holding keyboard focus, if any. */
function focusedCard(): HTMLElement | null {
  const el = document.activeElement;
  return el instanceof HTMLElement ? el.closest<HTMLElement>('[data-testid="approval-card"]') : null;
}

function answerFocusedCard(approve: boolean, now: number): boolean {
  const card = focusedCard();
  const since = Number(card?.dataset.focusedAt ?? 0);
  if (card && document.activeElement === card && since > 0 && now - since < READ_MS) return false;
  const button = card?.querySelector<HTMLButtonElement>(
    approve ? '[data-testid="approval-approve"]' : '[data-testid="approval-deny"]',
  );
  if (!button || button.disabled) return false;
  button.click();
  return true;
}

/** Handles e if it is a shortcut; returns whether it did. */
export function handleShortcut(e: KeyboardEvent, a: ShortcutActions): boolean {
  if (e.defaultPrevented || e.isComposing) return false;
  if (modifier(e) && !e.shiftKey) {
    const k = e.key.toLowerCase();
    if (k === 'l') {
      a.lock();
      return true;
    }
    if (k === 'f') return a.search();
    if (k === 'j') return a.approvals();
    if (/^[1-9]$/.test(e.key)) return a.view(Number(e.key) - 1);
    return false;
  }
  if (!e.ctrlKey && !e.metaKey && !e.altKey && !e.shiftKey) {
    if (e.key === 'F1') return a.help();
    const k = e.key.toLowerCase();
    if ((k === 'a' || k === 'd') && !e.repeat) return answerFocusedCard(k === 'a', Date.now());
  }
  return false;
}
