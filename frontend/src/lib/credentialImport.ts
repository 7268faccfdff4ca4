// What the import panel does with a preview before anything is sent: one
// row per entry the person chose, checked as the add-credential form checks
// its fields (validateDraft), names checked against the stored credentials
// and each other, and the choices sent to the Go side. The preview names
// the entries and never holds a value; nothing here ever sees one.

import type { ApprovalMode, Environment, ImportChoice, ImportEntry, ImportFormat, ImportPreview, ImportValueKind } from './backend';
import { emptyDraft, validateDraft, type CredentialDraft, type DraftErrors } from './credentialForm';

/** One entry as the person sets it up: chosen or not, and the credential it becomes. */
export interface ImportRow {
  entry: ImportEntry;
  chosen: boolean;
  /** Name, hosts, paths and how it is sent, as the add-credential form holds them. */
  draft: CredentialDraft;
}

/** What every chosen entry shares: its approval, rotation reminder and who answers for it. */
export interface ImportShared {
  approval: ApprovalMode;
  rotateEveryDays: number;
  owner: string;
  backupRevoker: string;
  environment: Environment;
}

export function rowsOf(p: ImportPreview): ImportRow[] {
  return p.entries.map((entry) => {
    const draft = emptyDraft();
    draft.name = entry.suggestedName;
    draft.hosts = entry.host;
    draft.username = entry.username;
    return { entry, chosen: false, draft };
  });
}

export function sharedDefaults(): ImportShared {
  return { approval: 'session', rotateEveryDays: 0, owner: '', backupRevoker: '', environment: 'development' };
}

export type RowErrors = Omit<DraftErrors, 'secret'>;

/**
 * Checks the chosen rows: each as the add-credential form does, and its
 * name against the stored credentials' (taken, any case) and the other
 * chosen rows'. Returns the errors by entry index (only rows with errors)
 * and the choices to send.
 */
export function checkRows(rows: ImportRow[], shared: ImportShared, taken: string[]): { errors: Map<number, RowErrors>; choices: ImportChoice[] } {
  const errors = new Map<number, RowErrors>();
  const choices: ImportChoice[] = [];
  const names = new Set(taken.map((n) => n.trim().toLowerCase()));
  const chosenNames = new Map<string, number>();
  for (const r of rows) {
    if (!r.chosen) continue;
    const key = r.draft.name.trim().toLowerCase();
    chosenNames.set(key, (chosenNames.get(key) ?? 0) + 1);
  }
  for (const r of rows) {
    if (!r.chosen) continue;
    const checked = validateDraft(r.draft, false);
    const e: RowErrors = { ...checked.errors };
    const key = r.draft.name.trim().toLowerCase();
    if (!e.name && names.has(key)) e.name = `A stored credential is already named “${r.draft.name.trim()}”: choose another name.`;
    else if (!e.name && (chosenNames.get(key) ?? 0) > 1) e.name = 'Two chosen entries have this name: give each its own.';
    if (Object.keys(e).length > 0) errors.set(r.entry.index, e);
    // The add form, whole; its secret stays empty (the entry has the value).
    choices.push({
      index: r.entry.index,
      form: {
        ...checked.form,
        secret: '',
        approval: shared.approval,
        rotateEveryDays: shared.rotateEveryDays,
        owner: shared.owner.trim(),
        backupRevoker: shared.backupRevoker.trim(),
        environment: shared.environment,
      },
    });
  }
  return { errors, choices };
}

const FORMAT_WORDS: Record<ImportFormat, string> = {
  env: '.env lines',
  'bitwarden-json': 'a Bitwarden export (JSON)',
  'bitwarden-csv': 'a Bitwarden export (CSV)',
  '1password-csv': 'a 1Password export (CSV)',
};

export function formatWords(f: ImportFormat): string {
  return FORMAT_WORDS[f];
}

const KIND_WORDS: Record<ImportValueKind, string> = {
  text: 'text',
  url: 'a URL',
  number: 'a number',
  flag: 'true or false',
  empty: 'empty',
  unknown: '',
};

/**
 * What the person is told about an entry's value: what it looks like and
 * its length ("text, 40 characters"), never the value.
 */
export function valueWords(e: ImportEntry): string {
  const kind = KIND_WORDS[e.kind];
  if (kind === '' || e.kind === 'empty') return kind;
  return `${kind}, ${e.length} character${e.length === 1 ? '' : 's'}`;
}

/** The entry's title: its name and field, or its line when it has no name. */
export function entryTitle(e: ImportEntry): string {
  if (e.name === '') return `Line ${e.line}`;
  return e.field === '' ? e.name : `${e.name} · ${e.field}`;
}

/** Where the entry came from and what it looks like, in one line. */
export function entryFacts(e: ImportEntry): string {
  const parts = [`line ${e.line}`];
  const value = valueWords(e);
  if (value) parts.push(value);
  if (e.username) parts.push(`user ${e.username}`);
  if (e.host) parts.push(`for ${e.host}`);
  return parts.join(' · ');
}
