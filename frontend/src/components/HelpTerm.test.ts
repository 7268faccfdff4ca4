import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen } from '@testing-library/svelte';
import HelpTerm from './HelpTerm.svelte';
import About from '../views/About.svelte';
import { GLOSSARY, TERM_IDS } from '../lib/glossary';

describe('HelpTerm', () => {
  it('opens the word’s meaning on demand, and Escape closes it and gives focus back', async () => {
    render(HelpTerm, { term: 'backupRevoker' });
    const q = screen.getByTestId('help-backupRevoker');
    expect(q.getAttribute('aria-label')).toBe('What is “backup revoker”?');
    expect(q.getAttribute('aria-expanded')).toBe('false');
    expect(screen.queryByTestId('help-backupRevoker-text')).toBeNull();

    await fireEvent.click(q);
    const text = screen.getByTestId('help-backupRevoker-text');
    expect(q.getAttribute('aria-expanded')).toBe('true');
    expect(q.getAttribute('aria-controls')).toBe(text.id);
    expect(text.textContent).toContain(GLOSSARY.backupRevoker.meaning);

    text.focus();
    await fireEvent.keyDown(text, { key: 'Escape' });
    expect(screen.queryByTestId('help-backupRevoker-text')).toBeNull();
    expect(document.activeElement).toBe(q);
  });

  it('closes on a click elsewhere, and on the button again', async () => {
    render(HelpTerm, { term: 'checkpoint' });
    const q = screen.getByTestId('help-checkpoint');
    await fireEvent.click(q);
    await fireEvent.click(document.body);
    expect(screen.queryByTestId('help-checkpoint-text')).toBeNull();
    await fireEvent.click(q);
    await fireEvent.click(q);
    expect(screen.queryByTestId('help-checkpoint-text')).toBeNull();
  });

  it('moves left so it never passes the window’s right edge, and again when the window narrows', async () => {
    const wide = window.innerWidth;
    // jsdom draws nothing: the box says where it would end (unmoved, as
    // drawn before the shift) and the window how wide it is.
    const rect = vi.spyOn(HTMLElement.prototype, 'getBoundingClientRect').mockReturnValue({ right: wide + 80 } as DOMRect);
    try {
      render(HelpTerm, { term: 'underControl' });
      await fireEvent.click(screen.getByTestId('help-underControl'));
      const text = screen.getByTestId('help-underControl-text');
      expect(text.style.translate).toBe('-88px 0');
      rect.mockReturnValue({ right: wide + 80 - 88 } as DOMRect);
      window.innerWidth = wide - 100;
      await fireEvent(window, new Event('resize'));
      expect(text.style.translate).toBe('-188px 0');
    } finally {
      rect.mockRestore();
      window.innerWidth = wide;
    }
  });

  it('About lists every word from the same glossary', () => {
    render(About, { viewNames: [] });
    const list = screen.getByTestId('glossary');
    for (const id of TERM_IDS) expect(list.textContent).toContain(GLOSSARY[id].meaning);
  });
});
