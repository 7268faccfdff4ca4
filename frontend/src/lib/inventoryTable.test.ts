import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_COLUMNS,
  applyEdit,
  checkEdit,
  dayText,
  editValue,
  matches,
  missingElsewhere,
  nextSort,
  sortRows,
  storeColumns,
  storedColumns,
  visibleColumns,
} from './inventoryTable';
import { inventoryRow } from '../test/fakeInventory';

const rows = [
  inventoryRow({ id: 'b', name: 'Beta', owner: 'zed@example.com', lastRefresh: '2026-11-01T00:00:00Z' }),
  inventoryRow({ id: 'a', name: 'alpha', owner: '', controlled: false, missing: ['owner'], lastRefresh: '' }),
  inventoryRow({ id: 'c', name: 'gamma', owner: 'amy@example.com', lastRefresh: '2026-12-01T00:00:00Z', state: 'revoked' }),
  inventoryRow({ id: 'd', name: 'Beta', owner: 'zed@example.com', lastRefresh: '2026-10-01T00:00:00Z', state: 'disabled' }),
];
const ids = (rs: { id: string }[]) => rs.map((r) => r.id);

describe('sorting', () => {
  it('sorts case-insensitively with ties by name then id, and leaves the input alone', () => {
    expect(ids(sortRows(rows, { key: 'name', dir: 'asc' }))).toEqual(['a', 'b', 'd', 'c']);
    expect(ids(sortRows(rows, { key: 'name', dir: 'desc' }))).toEqual(['c', 'b', 'd', 'a']);
    expect(ids(rows)).toEqual(['b', 'a', 'c', 'd']);
  });
  it('puts empty values last in both directions', () => {
    expect(ids(sortRows(rows, { key: 'owner', dir: 'asc' }))).toEqual(['c', 'b', 'd', 'a']);
    expect(ids(sortRows(rows, { key: 'owner', dir: 'desc' }))).toEqual(['b', 'd', 'c', 'a']);
    expect(ids(sortRows(rows, { key: 'lastRefresh', dir: 'desc' }))).toEqual(['c', 'b', 'd', 'a']);
  });
  it('puts rows nobody controls first when sorting by control', () => {
    expect(ids(sortRows(rows, { key: 'controlled', dir: 'asc' }))[0]).toBe('a');
  });
  it('flips the direction on the same column and starts ascending on another', () => {
    expect(nextSort({ key: 'name', dir: 'asc' }, 'name')).toEqual({ key: 'name', dir: 'desc' });
    expect(nextSort({ key: 'name', dir: 'desc' }, 'owner')).toEqual({ key: 'owner', dir: 'asc' });
  });
});

describe('filtering', () => {
  it('needs every word somewhere in the row', () => {
    expect(rows.filter((r) => matches(r, 'BETA zed', ''))).toHaveLength(2);
    expect(rows.filter((r) => matches(r, 'beta amy', ''))).toHaveLength(0);
    expect(rows.filter((r) => matches(r, 'tracker.create_issue', ''))).toHaveLength(4);
    expect(rows.filter((r) => matches(r, '   ', ''))).toHaveLength(4);
  });
  it('filters by state as the backend does', () => {
    expect(ids(rows.filter((r) => matches(r, '', 'not_under_control')))).toEqual(['a']);
    expect(ids(rows.filter((r) => matches(r, '', 'revoked')))).toEqual(['c', 'd']);
    expect(rows.filter((r) => matches(r, '', 'needs_reconnection'))).toHaveLength(0);
    expect(rows.filter((r) => matches(r, '', 'bogus' as never))).toHaveLength(0);
  });
});

describe('editing', () => {
  it('starts from the value shown and applies the same edit the backend makes', () => {
    const r = rows[0];
    expect(editValue(r, 'review_by')).toBe('2027-02-18');
    expect(editValue(r, 'backup_revoker')).toBe('ops@example.com');
    expect(applyEdit(r, 'owner', '  x@example.com ').owner).toBe('x@example.com');
    expect(applyEdit(r, 'review_by', '2027-05-01').reviewBy).toBe('2027-05-01T00:00:00Z');
    expect(applyEdit(r, 'review_by', '').reviewBy).toBe('');
    expect(applyEdit(r, 'environment', 'staging').environment).toBe('staging');
    expect(r.owner).toBe('zed@example.com');
  });
  it('says what the row misses after the edit, as the backend will', () => {
    const r = rows[1];
    const owned = applyEdit(r, 'owner', 'x@example.com');
    expect(owned.missing).toEqual([]);
    expect(owned.controlled).toBe(true);
    const cleared = applyEdit(rows[0], 'backup_revoker', ' ');
    expect(cleared.missing).toEqual(['backup revoker']);
    expect(cleared.controlled).toBe(false);
    // What has no column stays missing.
    const scoped = applyEdit({ ...r, missing: ['scopes', 'owner'] }, 'owner', 'x');
    expect(scoped.missing).toEqual(['scopes']);
  });
  it('checks a value before it is sent', () => {
    expect(checkEdit('owner', '')).toBe('');
    expect(checkEdit('owner', 'a\nb')).toContain('one line');
    expect(checkEdit('owner', 'x'.repeat(257))).toContain('256');
    expect(checkEdit('environment', 'prod')).toContain('development, staging or production');
    expect(checkEdit('environment', 'production')).toBe('');
    expect(checkEdit('review_by', '2027-5-1')).toContain('YYYY-MM-DD');
    expect(checkEdit('review_by', '')).toBe('');
  });
  it('writes a review date as its calendar day', () => {
    expect(dayText('')).toBe('—');
    expect(dayText('2027-02-18T00:00:00Z')).toContain('2027');
  });
});

describe('columns', () => {
  afterEach(() => localStorage.clear());

  it('draws the name and the chosen columns in the table order', () => {
    expect(visibleColumns(new Set(['nextDrill', 'owner'])).map((c) => c.key)).toEqual(['name', 'owner', 'nextDrill']);
    expect(visibleColumns(DEFAULT_COLUMNS).map((c) => c.key)).toEqual([
      'name', 'environment', 'owner', 'backupRevoker', 'controlled', 'state', 'lastUsed', 'nextDrill',
    ]);
  });
  it('lists as missing elsewhere only what no drawn column shows', () => {
    const r = { ...rows[1], missing: ['scopes', 'owner', 'review date'] };
    expect(missingElsewhere(r, visibleColumns(DEFAULT_COLUMNS))).toEqual(['scopes', 'review date']);
    expect(missingElsewhere(r, visibleColumns(new Set(['reviewBy'])))).toEqual(['scopes', 'owner']);
  });
  it('remembers a choice, forgets the default one, and reads a damaged one as the default', () => {
    expect(storedColumns()).toEqual(new Set(DEFAULT_COLUMNS));
    storeColumns(new Set(['provider', 'owner']));
    expect(storedColumns()).toEqual(new Set(['provider', 'owner']));
    storeColumns(new Set(DEFAULT_COLUMNS));
    expect(localStorage.length).toBe(0);
    localStorage.setItem('yett.inventory.columns', '{not json');
    expect(storedColumns()).toEqual(new Set(DEFAULT_COLUMNS));
    localStorage.setItem('yett.inventory.columns', '["owner","name","bogus"]');
    expect(storedColumns()).toEqual(new Set(['owner']));
  });
});
