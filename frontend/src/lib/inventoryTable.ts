// The owner inventory table's state, apart from the view so it can be
// tested alone: which columns it has, how it sorts, how it filters (the same
// rules as backend/inventory's Row.Matches, so an export of the filtered
// table holds the rows on screen), and the edit of one cell.

import type { InventoryField, InventoryRowView, InventoryStateFilter } from './backend';
import { formatAge, formatWhen } from './time';

export type SortKey =
  | 'name'
  | 'provider'
  | 'accountRef'
  | 'environment'
  | 'owner'
  | 'backupRevoker'
  | 'createdVia'
  | 'connectedAt'
  | 'lastUsed'
  | 'lastRefresh'
  | 'reviewBy'
  | 'lastDrillAt'
  | 'nextDrill'
  | 'state'
  | 'controlled';

export interface Column {
  key: SortKey;
  label: string;
  /** The field a person edits in this column's cells, if any. */
  edit?: InventoryField;
  /** The backend's name for this column in a row's missing list (backend/inventory's Col*). */
  missing?: string;
  /** Shown until the person chooses otherwise. */
  shown?: boolean;
}

/**
 * Seed 002's columns. Shown by default are those that say who answers for
 * a row and whether it is under control, which fit a small window without
 * scrolling sideways; the person adds the others, which take their place
 * in this order. Scopes, operations and the disable procedure show in the
 * row's details.
 */
export const COLUMNS: readonly Column[] = [
  { key: 'name', label: 'Authorization', shown: true },
  { key: 'provider', label: 'Provider or host', missing: 'provider' },
  { key: 'accountRef', label: 'Account', missing: 'account' },
  { key: 'environment', label: 'Environment', edit: 'environment', missing: 'environment', shown: true },
  { key: 'owner', label: 'Owner', edit: 'owner', missing: 'owner', shown: true },
  { key: 'backupRevoker', label: 'Backup revoker', edit: 'backup_revoker', missing: 'backup revoker', shown: true },
  { key: 'controlled', label: 'Under control', shown: true },
  { key: 'state', label: 'State', shown: true },
  { key: 'createdVia', label: 'Created via', missing: 'created via' },
  { key: 'connectedAt', label: 'Connected', missing: 'connected at' },
  { key: 'lastUsed', label: 'Last used', shown: true },
  { key: 'lastRefresh', label: 'Last refresh' },
  { key: 'reviewBy', label: 'Review by', edit: 'review_by', missing: 'review date' },
  { key: 'lastDrillAt', label: 'Last drill' },
  { key: 'nextDrill', label: 'Next drill', shown: true },
];

/** The columns a person may hide or show: all but the name, which opens a row. */
export const CHOOSABLE = COLUMNS.filter((c) => c.key !== 'name');

export const DEFAULT_COLUMNS: ReadonlySet<SortKey> = new Set(CHOOSABLE.filter((c) => c.shown).map((c) => c.key));

/** The columns drawn, in the table's order, for the keys chosen. */
export function visibleColumns(chosen: ReadonlySet<SortKey>): Column[] {
  return COLUMNS.filter((c) => c.key === 'name' || chosen.has(c.key));
}

/** What a row misses that no drawn column shows (those cells say it themselves). */
export function missingElsewhere(r: InventoryRowView, drawn: readonly Column[]): string[] {
  return r.missing.filter((m) => !drawn.some((c) => c.missing === m));
}

// The columns chosen are a display preference of this window, like the
// theme (lib/theme.ts): nothing about the vault.
const COLUMNS_KEY = 'yett.inventory.columns';

/** The columns the person chose last, or the default ones. */
export function storedColumns(): Set<SortKey> {
  try {
    const raw = localStorage.getItem(COLUMNS_KEY);
    if (raw === null) return new Set(DEFAULT_COLUMNS);
    const keys = JSON.parse(raw);
    if (!Array.isArray(keys)) return new Set(DEFAULT_COLUMNS);
    return new Set(CHOOSABLE.map((c) => c.key).filter((k) => keys.includes(k)));
  } catch {
    return new Set(DEFAULT_COLUMNS);
  }
}

/** Remembers the choice; the default one is forgotten, so a later default applies. */
export function storeColumns(chosen: ReadonlySet<SortKey>): void {
  try {
    const same = chosen.size === DEFAULT_COLUMNS.size && [...chosen].every((k) => DEFAULT_COLUMNS.has(k));
    if (same) localStorage.removeItem(COLUMNS_KEY);
    else localStorage.setItem(COLUMNS_KEY, JSON.stringify([...chosen]));
  } catch {
    // Storage refused: the choice lasts until the window closes.
  }
}

export const STATE_FILTERS: readonly { value: InventoryStateFilter; label: string }[] = [
  { value: '', label: 'Every row' },
  { value: 'not_under_control', label: 'Not under control' },
  { value: 'drill_overdue', label: 'Drill overdue' },
  { value: 'review_due', label: 'Review due' },
  { value: 'needs_reconnection', label: 'Needs reconnection' },
  { value: 'suspended', label: 'Switched off (suspended)' },
  { value: 'revoked', label: 'Revoked' },
];

export const ENVIRONMENTS = ['development', 'staging', 'production'] as const;

/**
 * Rows drawn at a time: a table of a thousand rows of fifteen columns takes
 * seconds to lay out, and the filter reaches every row anyway.
 */
export const PAGE_SIZE = 200;

export interface Sort {
  key: SortKey;
  dir: 'asc' | 'desc';
}

/** Whether a row passes the filter: one state, and every word somewhere in its columns. */
export function matches(r: InventoryRowView, text: string, state: InventoryStateFilter): boolean {
  switch (state) {
    case '':
      break;
    case 'not_under_control':
      if (r.controlled) return false;
      break;
    case 'drill_overdue':
      if (!r.drillOverdue) return false;
      break;
    case 'review_due':
      if (!r.reviewDue) return false;
      break;
    case 'needs_reconnection':
      if (r.state !== 'needs_reconnection') return false;
      break;
    case 'suspended':
      if (r.state !== 'suspended') return false;
      break;
    case 'revoked':
      if (r.state !== 'revoked' && r.state !== 'disabled') return false;
      break;
    default:
      return false;
  }
  const words = text.toLowerCase().trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const hay = [
    r.id, r.name, r.provider, r.accountRef, r.environment, r.owner, r.backupRevoker, r.createdVia, r.state, r.heldOn,
    ...r.scopes, ...r.operations,
  ]
    .join('\u0000')
    .toLowerCase();
  return words.every((w) => hay.includes(w));
}

function sortValue(r: InventoryRowView, key: SortKey): string | number {
  switch (key) {
    case 'controlled':
      // Rows nobody controls first when ascending: they need the person.
      return r.controlled ? 1 : 0;
    default: {
      const v = r[key];
      return typeof v === 'string' ? v.toLowerCase() : String(v);
    }
  }
}

/**
 * Sorts a copy. Empty values go last in both directions (a row never
 * refreshed is not "the oldest"), ties by name then id, so the order is
 * stable.
 */
export function sortRows(rows: readonly InventoryRowView[], sort: Sort): InventoryRowView[] {
  const sign = sort.dir === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const va = sortValue(a, sort.key);
    const vb = sortValue(b, sort.key);
    if (va === '' && vb !== '') return 1;
    if (vb === '' && va !== '') return -1;
    if (va < vb) return -sign;
    if (va > vb) return sign;
    const n = a.name.toLowerCase().localeCompare(b.name.toLowerCase());
    return n !== 0 ? n : a.id.localeCompare(b.id);
  });
}

/** Clicking a column's header: sorts by it ascending, or flips the direction. */
export function nextSort(cur: Sort, key: SortKey): Sort {
  if (cur.key === key) return { key, dir: cur.dir === 'asc' ? 'desc' : 'asc' };
  return { key, dir: 'asc' };
}

/** The value a cell's editor starts from: review dates as YYYY-MM-DD. */
export function editValue(r: InventoryRowView, field: InventoryField): string {
  switch (field) {
    case 'owner':
      return r.owner;
    case 'backup_revoker':
      return r.backupRevoker;
    case 'environment':
      return r.environment;
    case 'review_by':
      return r.reviewBy.slice(0, 10);
  }
}

/**
 * The same edit the backend will make, for the row shown until the table
 * re-reads: the value, and what the row misses and whether it is under
 * control (backend/inventory's missing()).
 */
export function applyEdit(r: InventoryRowView, field: InventoryField, value: string): InventoryRowView {
  const v = value.trim();
  let next: InventoryRowView;
  switch (field) {
    case 'owner':
      next = { ...r, owner: v };
      break;
    case 'backup_revoker':
      next = { ...r, backupRevoker: v };
      break;
    case 'environment':
      next = { ...r, environment: v };
      break;
    case 'review_by':
      next = { ...r, reviewBy: v === '' ? '' : `${v}T00:00:00Z` };
      break;
  }
  const name = COLUMNS.find((c) => c.edit === field)?.missing;
  if (name === undefined) return next;
  const others = r.missing.filter((m) => m !== name);
  const missing = v === '' ? [...others, name] : others;
  return { ...next, missing, controlled: missing.length === 0 };
}

/** A one-line check before sending, the backend's own rules; '' when fine. */
export function checkEdit(field: InventoryField, value: string): string {
  const v = value.trim();
  if (v.length > 256 || /[\r\n]/.test(v)) return 'At most 256 characters on one line.';
  if (field === 'environment' && !(ENVIRONMENTS as readonly string[]).includes(v)) {
    return 'Choose development, staging or production.';
  }
  if (field === 'review_by' && v !== '' && !/^\d{4}-\d{2}-\d{2}$/.test(v)) return 'Write the date as YYYY-MM-DD.';
  return '';
}

/** Words for the machine names of states, flows and drills. */
export const WORDS: Record<string, string> = {
  active: 'active',
  suspended: 'suspended',
  needs_reconnection: 'needs reconnection',
  disabled: 'disabled',
  revoked: 'revoked',
  authorization_code: 'authorization code',
  device_code: 'device',
  client_credentials: 'client credentials',
  manual_secret: 'manual secret',
  oauth: 'OAuth',
  http_credential: 'HTTP credential',
  full: 'full',
  unattended: 'unattended',
  person: 'started by a person',
  schedule: 'scheduled',
};

export function word(v: string): string {
  return WORDS[v] ?? v;
}

// One formatter each, made once: a table of 1,000 rows formats thousands of
// dates, and making an Intl formatter per date (as toLocaleString does) is
// most of the cost of drawing it. Same output as lib/time's.
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dayFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

/** A local date and time for an RFC 3339 timestamp; '—' for none. */
export function whenText(rfc3339: string): string {
  if (rfc3339 === '') return '—';
  const t = Date.parse(rfc3339);
  return Number.isNaN(t) ? rfc3339 : dateTimeFormat.format(t);
}

/** The calendar day of an RFC 3339 timestamp, as written (not shifted by the zone); '—' for none. */
export function dayText(rfc3339: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(rfc3339);
  if (!m) return rfc3339 === '' ? '—' : rfc3339;
  return dayFormat.format(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
}

/** A cell's text, as the Inventory and the Team view draw it; now is the clock's time for "how long ago". */
export function columnText(r: InventoryRowView, key: SortKey, now: number): string {
  switch (key) {
    case 'connectedAt':
    case 'lastRefresh':
      return whenText(r[key]);
    case 'lastUsed':
      // How long ago, or how soon (nextDrill) fits a narrow column; the
      // details give the time.
      return r.lastUsed === '' ? 'never' : formatAge(r.lastUsed, now);
    case 'nextDrill':
      // A revoked or disabled row is drilled no more until it is reconnected.
      return r.nextDrill === '' ? (r.drillable ? 'none until reconnected' : '—') : formatWhen(r.nextDrill, now);
    case 'reviewBy':
      return dayText(r[key]);
    case 'lastDrillAt':
      return r.lastDrillAt ? `${dayText(r.lastDrillAt)}, ${word(r.lastDrillKind)} ${r.lastDrillPassed ? 'passed' : 'failed'}` : 'never';
    case 'createdVia':
    case 'state':
      return word(r[key]);
    case 'controlled':
      return r.controlled ? 'yes' : 'no';
    default:
      return (r[key] as string) || '—';
  }
}
