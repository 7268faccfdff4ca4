import { describe, expect, it } from 'vitest';
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

  it('About lists every word from the same glossary', () => {
    render(About, { viewNames: [] });
    const list = screen.getByTestId('glossary');
    for (const id of TERM_IDS) expect(list.textContent).toContain(GLOSSARY[id].meaning);
  });
});
