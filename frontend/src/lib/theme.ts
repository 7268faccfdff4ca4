// The colour theme: the system's, or one the person picked in Settings. It
// is a display preference of this window (nothing about the vault), kept in
// the window's local storage and applied as data-theme on <html>, which
// app.css reads.

export type Theme = 'system' | 'light' | 'dark';

export const THEMES: readonly Theme[] = ['system', 'light', 'dark'];
const KEY = 'yett.theme';

export function storedTheme(): Theme {
  try {
    const t = localStorage.getItem(KEY);
    return THEMES.includes(t as Theme) ? (t as Theme) : 'system';
  } catch {
    return 'system';
  }
}

/** Applies t to the document and remembers it. */
export function applyTheme(t: Theme, root: HTMLElement = document.documentElement): void {
  if (t === 'system') root.removeAttribute('data-theme');
  else root.setAttribute('data-theme', t);
  try {
    if (t === 'system') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, t);
  } catch {
    // Storage refused: the choice lasts until the window closes.
  }
}
