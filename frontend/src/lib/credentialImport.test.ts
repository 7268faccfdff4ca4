import { describe, expect, it } from 'vitest';
import { checkRows, entryFacts, entryTitle, rowsOf, sharedDefaults, valueWords } from './credentialImport';
import { importEntry, importPreview } from '../test/fakeImport';

describe('credential import rows', () => {
  it('start from what the preview suggests, none chosen', () => {
    const rows = rowsOf(importPreview({ entries: [importEntry({ username: 'octo', host: 'github.com', suggestedName: 'GitHub' })] }));
    expect(rows).toHaveLength(1);
    expect(rows[0].chosen).toBe(false);
    expect(rows[0].draft).toMatchObject({ name: 'GitHub', hosts: 'github.com', username: 'octo', format: 'bearer', secret: '' });
  });

  it('check only the chosen rows, as the add form does, and names against the stored ones and each other', () => {
    const entries = [0, 1, 2, 3, 4].map((index) => importEntry({ index, suggestedName: `n${index}`, host: 'api.example.com' }));
    const rows = rowsOf(importPreview({ entries }));
    rows.forEach((r) => (r.chosen = true));
    rows[4].chosen = false;
    rows[0].draft.name = 'Stored';
    rows[1].draft.name = 'twin';
    rows[2].draft.name = 'TWIN ';
    rows[3].draft.format = 'basic';
    rows[4].draft.hosts = '';
    const { errors, choices } = checkRows(rows, { ...sharedDefaults(), owner: ' ana ', approval: 'per_call' }, ['stored']);
    expect([...errors.keys()]).toEqual([0, 1, 2, 3]);
    expect(errors.get(0)?.name).toBe('A stored credential is already named “Stored”: choose another name.');
    expect(errors.get(1)?.name).toBe('Two chosen entries have this name: give each its own.');
    expect(errors.get(3)?.username).toBe('Enter the user name for basic authentication.');
    expect(choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    expect(choices[2].form).toMatchObject({ name: 'TWIN', secret: '', hosts: ['api.example.com'], approval: 'per_call', owner: 'ana', environment: 'development' });
  });

  it('describe an entry without its value', () => {
    expect(valueWords(importEntry({ kind: 'url', length: 1 }))).toBe('a URL, 1 character');
    expect(valueWords(importEntry({ kind: 'unknown' }))).toBe('');
    expect(entryTitle(importEntry({ name: '', line: 7 }))).toBe('Line 7');
    expect(entryTitle(importEntry({ name: 'Stripe', field: 'secret key' }))).toBe('Stripe · secret key');
    expect(entryFacts(importEntry({ line: 3, kind: 'flag', length: 4, username: 'ci', host: '' }))).toBe('line 3 · true or false, 4 characters · user ci');
  });
});
