// Adds the import calls to the fake app.VaultService. Call it after
// installBridge. Like the Go side, the fake answers with previews that
// name entries and hold no value, and an id that is used up by an import
// or a cancel.

import { vi } from 'vitest';
import type { ImportChoice, ImportEntry, ImportPreview } from '../lib/backend';
import type { FakeVaultService } from './bindings';

export function importEntry(over: Partial<ImportEntry> = {}): ImportEntry {
  return {
    index: 0,
    name: 'GITHUB_TOKEN',
    field: '',
    username: '',
    host: 'api.github.com',
    line: 1,
    kind: 'text',
    length: 40,
    problem: '',
    suggestedName: 'GITHUB_TOKEN',
    duplicate: false,
    ...over,
  };
}

export function importPreview(over: Partial<ImportPreview> = {}): ImportPreview {
  const entries = over.entries ?? [
    importEntry(),
    importEntry({ index: 1, name: '', host: '', line: 2, kind: 'unknown', length: 0, problem: 'The line is not KEY=value.', suggestedName: '' }),
    importEntry({ index: 2, name: 'gh', host: '', line: 3, length: 12, suggestedName: 'gh', duplicate: true }),
    importEntry({ index: 3, name: 'DB_PASSWORD', host: '', line: 4, length: 20, suggestedName: 'DB_PASSWORD' }),
  ];
  return {
    chosen: true,
    id: 'import-1',
    format: 'env',
    source: 'import.env',
    expiresAt: '2026-12-07T10:10:00Z',
    entries,
    importable: entries.filter((e) => e.problem === '').length,
    ...over,
  };
}

export function installImport(preview: ImportPreview = importPreview()) {
  const vs = window.go?.app?.VaultService as Record<string, unknown> | undefined;
  if (!vs) throw new Error('installBridge first');
  let live = new Set([preview.id]);
  const fake = {
    ReadImportText: vi.fn(async (_text: string): Promise<unknown> => {
      live = new Set([preview.id]);
      return preview;
    }),
    OpenImportFile: vi.fn(async (): Promise<unknown> => {
      live = new Set([preview.id]);
      return preview;
    }),
    ImportCredentials: vi.fn(async (id: string, choices: ImportChoice[]): Promise<unknown> => {
      if (!live.delete(id)) throw 'This import has ended. Open the file or paste again.';
      return {
        added: choices.map((c, i) => ({ index: c.index, id: `cred-imp-${i}`, name: c.form.name, note: '' })),
        failed: [],
      };
    }),
    CancelImport: vi.fn(async (id: string): Promise<void> => {
      live.delete(id);
    }),
  } satisfies FakeVaultService;
  Object.assign(vs, fake);
  return fake;
}
