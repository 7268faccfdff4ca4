// Validation of the add-credential form before anything is sent. The backend
// validates again; this catches the common slips early and with a message
// next to the field. No message ever includes the secret.

import type { BindingOverlap, CredentialEditForm, CredentialView, NewCredentialForm } from './backend';

/** What the form fields hold while the person types: the form, with its lists as typed. */
export type CredentialDraft = Omit<NewCredentialForm, 'hosts' | 'pathPrefixes'> & {
  /** Hosts separated by commas, spaces or new lines. */
  hosts: string;
  /** Path prefixes separated by commas, spaces or new lines. */
  pathPrefixes: string;
};

export const SECRET_PLACEHOLDER = '{secret}';

export function emptyDraft(): CredentialDraft {
  return {
    name: '',
    secret: '',
    format: 'bearer',
    headerName: '',
    template: SECRET_PLACEHOLDER,
    username: '',
    hosts: '',
    pathPrefixes: '',
    approval: 'session',
    rotateEveryDays: 0,
    owner: '',
    backupRevoker: '',
    environment: 'development',
  };
}

/** The draft of an existing credential, for the edit form (no secret). */
export function draftFromView(c: CredentialView): CredentialDraft {
  return {
    name: c.name,
    secret: '',
    format: c.format,
    headerName: c.headerName,
    template: c.format === 'header' ? c.template : SECRET_PLACEHOLDER,
    username: c.username,
    hosts: c.hosts.join('\n'),
    // "/" is what an empty list means; the field shows it empty.
    pathPrefixes: c.pathPrefixes.filter((p) => p !== '/').join('\n'),
    approval: c.approval,
    rotateEveryDays: c.rotateEveryDays,
    // Who answers for it is edited in the Inventory, not here.
    owner: '',
    backupRevoker: '',
    environment: 'development',
  };
}

export type DraftErrors = Partial<Record<keyof CredentialDraft, string>>;

// RFC 9110 token characters.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function splitList(text: string): string[] {
  const seen = new Set<string>();
  for (const part of text.split(/[\s,]+/)) {
    if (part !== '') seen.add(part);
  }
  return [...seen];
}

function hostError(host: string): string | null {
  if (host.includes('://')) return `“${host}”: enter the host only, without https://`;
  if (host.includes('/')) return `“${host}”: enter the host only; put paths under path prefixes`;
  if (host.includes('@')) return `“${host}”: a host cannot contain @`;
  return null;
}

/**
 * Returns the errors per field (empty when the draft can be sent) and the
 * form to send. Fields that do not belong to the chosen format are sent
 * empty, so a header template typed before switching to "basic" is not kept.
 */
export function validateDraft(d: CredentialDraft, withSecret = true): { errors: DraftErrors; form: NewCredentialForm } {
  const errors: DraftErrors = {};
  const name = d.name.trim();
  const hosts = splitList(d.hosts.toLowerCase());
  const pathPrefixes = splitList(d.pathPrefixes);

  if (name === '') errors.name = 'Give the credential a name agents will use.';
  if (withSecret) {
    const e = secretError(d.secret);
    if (e) errors.secret = e;
  }

  if (d.format === 'header') {
    if (!HEADER_NAME.test(d.headerName.trim())) errors.headerName = 'Enter a header name such as X-Api-Key.';
    if (!d.template.includes(SECRET_PLACEHOLDER)) errors.template = `The template must contain ${SECRET_PLACEHOLDER}.`;
  }
  if (d.format === 'basic') {
    if (d.username.trim() === '') errors.username = 'Enter the user name for basic authentication.';
    else if (d.username.includes(':')) errors.username = 'A basic-auth user name cannot contain a colon.';
  }

  if (hosts.length === 0) errors.hosts = 'Name at least one host this credential may be sent to.';
  else {
    const bad = hosts.map(hostError).find((e) => e !== null);
    if (bad) errors.hosts = bad;
  }
  const badPath = pathPrefixes.find((p) => !p.startsWith('/'));
  if (badPath !== undefined) errors.pathPrefixes = `“${badPath}”: a path prefix starts with /`;

  const form: NewCredentialForm = {
    name,
    secret: d.secret,
    format: d.format,
    headerName: d.format === 'header' ? d.headerName.trim() : '',
    template: d.format === 'header' ? d.template : '',
    username: d.format === 'basic' ? d.username.trim() : '',
    hosts,
    pathPrefixes,
    approval: d.approval,
    rotateEveryDays: d.rotateEveryDays,
    owner: d.owner.trim(),
    backupRevoker: d.backupRevoker.trim(),
    environment: d.environment,
  };
  return { errors, form };
}

/** The rotation reminders the form offers, in days (0: none). */
export const ROTATION_CHOICES = [0, 30, 60, 90, 180, 365] as const;

/** The reminder's choices for a credential: the offered ones and its own. */
export function rotationChoices(current: number): number[] {
  const all: number[] = [...ROTATION_CHOICES];
  if (!all.includes(current)) all.push(current);
  return all.sort((a, b) => a - b);
}

/** A reminder's interval in words: "never", "every 30 days", "every year". */
export function everyWords(days: number): string {
  if (days <= 0) return 'never';
  if (days === 1) return 'every day';
  if (days === 365) return 'every year';
  return `every ${days} days`;
}

/** Why a secret cannot be stored as typed, or null. */
export function secretError(secret: string): string | null {
  if (secret === '') return 'Paste the secret value.';
  if (/[\r\n]/.test(secret)) return 'The secret contains a line break; paste it again without one.';
  return null;
}

/** The edit form: the draft without its secret. */
export function editForm(form: NewCredentialForm): CredentialEditForm {
  const { secret: _secret, owner: _owner, backupRevoker: _backup, environment: _env, ...rest } = form;
  return rest;
}

/**
 * A sentence for one overlap found before saving: which credential it meets,
 * where, and which one an agent's call would use.
 */
export function overlapWords(o: BindingOverlap, editing: boolean): string {
  const self = editing ? 'this credential' : 'the new credential';
  const other = `“${o.otherName}”`;
  const at = `a call to ${o.example}`;
  const start = o.duplicate ? `Same hosts and paths as ${other}.` : `Overlaps ${other}.`;
  switch (o.winner) {
    case 'candidate':
      return `${start} For ${at}, Yett would use ${self}: its binding is more specific.`;
    case 'other':
      return `${start} For ${at}, Yett would use ${other}: its binding is more specific.`;
    case 'third':
      return `${start} For ${at}, Yett would use “${o.winnerName}”, bound more specifically than both.`;
    default:
      return `${start} Both are bound equally specifically, so ${at} would be refused as ambiguous until you narrow one of them.`;
  }
}
