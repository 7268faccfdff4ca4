import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { tick } from 'svelte';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';
import { authorization, installOAuth } from '../test/fakeOAuth';
import { drillReport, installInventory, inventoryRow } from '../test/fakeInventory';
import { formatTimestamp } from '../lib/time';
import { dayText } from '../lib/inventoryTable';

// A page of 5 rows, so paging is tested without drawing hundreds of rows
// in jsdom.
vi.mock('../lib/inventoryTable', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../lib/inventoryTable')>()),
  PAGE_SIZE: 5,
}));

const CANARY = 'CANARY-inventory-' + Math.random().toString(36).slice(2);

type Initial = Parameters<typeof installInventory>[0];

async function openInventory(initial: Initial = {}) {
  installBridge(vaultStatus({ state: 'unlocked', epoch: 3 }));
  const inv = installInventory(initial);
  render(App);
  await fireEvent.click(await screen.findByTestId('nav-inventory'));
  await screen.findByTestId('view-inventory');
  await screen.findByTestId('inventory-table');
  return inv;
}

function names(): string[] {
  return screen.getAllByTestId('inventory-row').map((r) => within(r).getByTestId('inventory-open').textContent ?? '');
}

function rowOf(name: string): HTMLElement {
  const row = screen.getAllByTestId('inventory-row').find((r) => within(r).getByTestId('inventory-open').textContent === name);
  if (!row) throw new Error(`no row ${name}`);
  return row;
}

const three = () => [
  inventoryRow({ id: 'az-1', name: 'tracker', owner: 'ana@example.com', environment: 'production' }),
  inventoryRow({
    id: 'cr-2', kind: 'http_credential', name: 'status page', provider: 'status.example.com', owner: '', backupRevoker: '',
    environment: '', createdVia: 'manual_secret', controlled: false, missing: ['environment', 'owner', 'backup revoker'],
    drillable: false, nextDrill: '', operations: ['http.request (session approval)'], lastRefresh: '',
  }),
  inventoryRow({
    id: 'az-3', name: 'mail', provider: 'accounts.google.com', owner: 'bea@example.com', environment: 'staging',
    state: 'needs_reconnection', reviewDue: true, reviewBy: '2026-11-01T00:00:00Z', drillOverdue: true,
  }),
];

afterEach(() => {
  delete window.go;
  delete window.runtime;
  localStorage.clear();
});

function headers(): string[] {
  return [...screen.getByTestId('inventory-table').querySelectorAll('thead th')].map((th) => th.textContent?.replace(/[▲▼]/g, '').trim() ?? '');
}

async function showColumn(label: string, on = true) {
  const box = within(screen.getByTestId('inventory-columns')).getByLabelText(label) as HTMLInputElement;
  if (box.checked !== on) await fireEvent.click(box);
}

// Issue 25 item 7: the table opened as a wall of sixteen squeezed
// columns. It shows by default what says who answers for a row and
// whether it is under control; the person adds the rest.
describe('the columns shown', () => {
  const DEFAULT = ['Authorization', 'Environment', 'Owner', 'Backup revoker', 'Under control', 'State', 'Last used', 'Next drill'];

  it('shows who answers for each row and whether it is under control, and the rest on request, remembered', async () => {
    await openInventory({ rows: three() });
    expect(headers()).toEqual(DEFAULT);
    // The kind shows under the name.
    expect(within(rowOf('status page')).getByTestId('inventory-cell-name').textContent).toContain('HTTP credential');
    const chooser = screen.getByTestId('inventory-columns');
    expect(chooser.querySelector('summary')?.textContent).toContain('8 of 15');
    await showColumn('Provider or host');
    await showColumn('Review by');
    expect(headers()).toEqual(['Authorization', 'Provider or host', ...DEFAULT.slice(1, 7), 'Review by', 'Next drill']);
    expect(within(rowOf('mail')).getByTestId('inventory-cell-provider').textContent?.trim()).toBe('accounts.google.com');
    await showColumn('Owner', false);
    expect(headers()).not.toContain('Owner');
    // The name is always shown: it is how a row is opened.
    expect(within(chooser).queryByLabelText('Authorization')).toBeNull();

    // Another visit to the view shows the same columns.
    cleanup();
    await openInventory({ rows: three() });
    expect(headers()).toEqual(['Authorization', 'Provider or host', 'Environment', 'Backup revoker', 'Under control', 'State', 'Last used', 'Review by', 'Next drill']);
    const again = screen.getByTestId('inventory-columns') as HTMLDetailsElement;
    again.open = true;
    await fireEvent.click(within(again).getByTestId('inventory-columns-default'));
    expect(headers()).toEqual(DEFAULT);
    // Esc closes the chooser, focus on its button.
    await fireEvent.keyDown(within(again).getByTestId('inventory-columns-default'), { key: 'Escape' });
    expect(again.open).toBe(false);
    expect(document.activeElement).toBe(again.querySelector('summary'));
  });

  it('names a missing value in its own cell, and in the Under control cell only what no shown column holds', async () => {
    const rows = three();
    rows.push(inventoryRow({ id: 'az-4', name: 'wiki', reviewBy: '', controlled: false, missing: ['review date'] }));
    await openInventory({ rows });
    const status = rowOf('status page');
    for (const col of ['environment', 'owner', 'backupRevoker']) {
      const cell = within(status).getByTestId(`inventory-cell-${col}`);
      expect(cell.textContent).toContain('missing');
      expect(cell.classList.contains('missing')).toBe(true);
    }
    expect(within(status).getByTestId('inventory-not-controlled').textContent).toBe('no');
    expect(within(status).queryByTestId('inventory-missing')).toBeNull();
    expect(within(rowOf('tracker')).getByTestId('inventory-cell-owner').classList.contains('missing')).toBe(false);

    const wiki = () => rowOf('wiki');
    expect(within(wiki()).getByTestId('inventory-missing').textContent).toBe('missing: review date');
    await showColumn('Review by');
    expect(within(wiki()).queryByTestId('inventory-missing')).toBeNull();
    expect(within(wiki()).getByTestId('inventory-cell-reviewBy').textContent).toContain('missing');
  });

  it('says how long ago a row was last used and how soon its next drill is, and the times in its details', async () => {
    // Noon so many calendar days away, whatever the zone and its clock changes.
    const noon = (days: number) => {
      const day = new Date();
      day.setDate(day.getDate() + days);
      day.setHours(12, 0, 0, 0);
      return day.toISOString();
    };
    const used = noon(-3);
    const rows = three();
    rows[0].lastUsed = used;
    rows[0].nextDrill = noon(10);
    rows[1].lastUsed = '';
    await openInventory({ rows });
    expect(within(rowOf('tracker')).getByTestId('inventory-cell-lastUsed').textContent?.trim()).toBe('3 days ago');
    expect(within(rowOf('status page')).getByTestId('inventory-cell-lastUsed').textContent?.trim()).toBe('never');
    expect(within(rowOf('tracker')).getByTestId('inventory-cell-nextDrill').textContent?.trim()).toBe('in 10 days');
    await fireEvent.click(within(rowOf('tracker')).getByTestId('inventory-open'));
    expect((await screen.findByTestId('inventory-last-used')).textContent).toBe(formatTimestamp(used));
    expect(screen.getByTestId('inventory-details').textContent).toContain(`Next drill: ${dayText(rows[0].nextDrill)}`);
  });

  it('sorts by name again when the sorted column is hidden', async () => {
    await openInventory({ rows: three() });
    await fireEvent.click(screen.getByTestId('inventory-sort-owner'));
    expect(names()).toEqual(['tracker', 'mail', 'status page']);
    await showColumn('Owner', false);
    expect(names()).toEqual(['mail', 'status page', 'tracker']);
    expect(screen.getByTestId('inventory-sort-name').closest('th')?.getAttribute('aria-sort')).toBe('ascending');
  });

  it('says once, above the table, which rows revocation drills apply to', async () => {
    await openInventory({ rows: three() });
    const note = screen.getByTestId('inventory-drills-note');
    expect(note.textContent).toContain('OAuth authorizations');
    expect(note.compareDocumentPosition(screen.getByTestId('inventory-table')) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    await fireEvent.click(within(rowOf('status page')).getByTestId('inventory-open'));
    await screen.findByTestId('inventory-details');
    const said = (document.body.textContent ?? '').match(/drills apply to OAuth/gi) ?? [];
    expect(said).toHaveLength(1);
    expect(within(rowOf('status page')).getByTestId('inventory-cell-nextDrill').textContent?.trim()).toBe('—');
  });
});

describe('the owner inventory table', () => {
  it('shows one row per authorization, marks rows nobody controls and names what they miss', async () => {
    const rows = three();
    // A backend bug adding a token field must still not reach the page.
    (rows[0] as unknown as Record<string, string>).refreshToken = CANARY;
    await openInventory({ rows });
    expect(names()).toEqual(['mail', 'status page', 'tracker']);
    const status = rowOf('status page');
    expect(within(status).getByTestId('inventory-not-controlled').textContent).toBe('no');
    // Each missing value is said in its own cell.
    for (const col of ['environment', 'owner', 'backupRevoker']) {
      expect(within(status).getByTestId(`inventory-cell-${col}`).textContent).toContain('missing');
    }
    expect(within(rowOf('tracker')).queryByTestId('inventory-not-controlled')).toBeNull();
    expect(screen.getByTestId('inventory-uncontrolled-count').textContent).toContain('1 of 3 rows are not under control');
    expect(within(rowOf('mail')).getByTestId('inventory-review-due')).toBeTruthy();
    expect(within(rowOf('mail')).getByTestId('inventory-drill-overdue')).toBeTruthy();
    expect(document.body.innerHTML).not.toContain(CANARY);
  });

  it('explains “backup revoker” and “not under control” where it uses them', async () => {
    await openInventory({ rows: three() });
    await fireEvent.click(screen.getByTestId('help-underControl'));
    expect(screen.getByTestId('help-underControl-text').textContent).toContain('an owner, a backup revoker and an environment');
    await fireEvent.click(screen.getByTestId('help-backupRevoker'));
    expect(screen.getByTestId('help-backupRevoker-text').textContent).toContain('when its owner cannot');
  });

  it('sorts by a column, flips on a second click, and keeps empty values last', async () => {
    await openInventory({ rows: three() });
    await fireEvent.click(screen.getByTestId('inventory-sort-owner'));
    expect(names()).toEqual(['tracker', 'mail', 'status page']);
    expect(screen.getByTestId('inventory-sort-owner').closest('th')?.getAttribute('aria-sort')).toBe('ascending');
    await fireEvent.click(screen.getByTestId('inventory-sort-owner'));
    expect(names()).toEqual(['mail', 'tracker', 'status page']);
    expect(screen.getByTestId('inventory-sort-owner').closest('th')?.getAttribute('aria-sort')).toBe('descending');
    await fireEvent.click(screen.getByTestId('inventory-sort-controlled'));
    expect(names()[0]).toBe('status page');
  });

  it('filters by words and by state', async () => {
    await openInventory({ rows: three() });
    await fireEvent.input(screen.getByTestId('inventory-filter'), { target: { value: 'google' } });
    expect(names()).toEqual(['mail']);
    await fireEvent.input(screen.getByTestId('inventory-filter'), { target: { value: 'http.request status' } });
    expect(names()).toEqual(['status page']);
    await fireEvent.input(screen.getByTestId('inventory-filter'), { target: { value: '' } });
    const state = screen.getByTestId('inventory-state-filter');
    for (const [value, want] of [
      ['not_under_control', ['status page']],
      ['review_due', ['mail']],
      ['drill_overdue', ['mail']],
      ['needs_reconnection', ['mail']],
      ['', ['mail', 'status page', 'tracker']],
    ] as const) {
      await fireEvent.change(state, { target: { value } });
      expect(names()).toEqual(want);
    }
    await fireEvent.change(state, { target: { value: 'revoked' } });
    expect(screen.queryAllByTestId('inventory-row')).toHaveLength(0);
    expect(screen.getByTestId('inventory-no-match')).toBeTruthy();
    expect(screen.getByTestId('inventory-count').textContent?.trim()).toBe('0 of 3 rows match the filter; showing 0.');
  });

  it('edits owner, backup revoker, environment and review date in place', async () => {
    const inv = await openInventory({ rows: three() });
    const status = rowOf('status page');
    await fireEvent.click(within(status).getByTestId('inventory-edit-owner'));
    const editor = screen.getByTestId('inventory-editor') as HTMLInputElement;
    expect(document.activeElement).toBe(editor);
    await fireEvent.input(editor, { target: { value: '  carol@example.com ' } });
    await fireEvent.keyDown(editor, { key: 'Enter' });
    await waitFor(() => expect(inv.InventoryService.SetField).toHaveBeenCalledWith('cr-2', 'owner', 'carol@example.com'));
    await waitFor(() => expect(within(rowOf('status page')).getByTestId('inventory-cell-owner').textContent).toContain('carol@example.com'));
    expect(screen.queryByTestId('inventory-editor')).toBeNull();

    // Esc leaves the value as it was and sends nothing.
    inv.InventoryService.SetField.mockClear();
    await fireEvent.click(within(rowOf('status page')).getByTestId('inventory-edit-backup_revoker'));
    await fireEvent.input(screen.getByTestId('inventory-editor'), { target: { value: 'nobody' } });
    await fireEvent.keyDown(screen.getByTestId('inventory-editor'), { key: 'Escape' });
    expect(screen.queryByTestId('inventory-editor')).toBeNull();
    expect(inv.InventoryService.SetField).not.toHaveBeenCalled();

    // A date that is not YYYY-MM-DD is refused before it is sent.
    await showColumn('Review by');
    await fireEvent.click(within(rowOf('tracker')).getByTestId('inventory-edit-review_by'));
    expect((screen.getByTestId('inventory-editor') as HTMLInputElement).value).toBe('2027-02-18');
    await fireEvent.input(screen.getByTestId('inventory-editor'), { target: { value: '18/02/2027' } });
    await fireEvent.keyDown(screen.getByTestId('inventory-editor'), { key: 'Enter' });
    expect(screen.getByTestId('inventory-editor-error').textContent).toContain('YYYY-MM-DD');
    expect(inv.InventoryService.SetField).not.toHaveBeenCalled();
    await fireEvent.input(screen.getByTestId('inventory-editor'), { target: { value: '2027-05-01' } });
    await fireEvent.keyDown(screen.getByTestId('inventory-editor'), { key: 'Enter' });
    await waitFor(() => expect(inv.InventoryService.SetField).toHaveBeenCalledWith('az-1', 'review_by', '2027-05-01'));

    // The environment is a choice of three.
    await fireEvent.click(within(rowOf('status page')).getByTestId('inventory-edit-environment'));
    const env = screen.getByTestId('inventory-editor') as HTMLSelectElement;
    expect([...env.options].map((o) => o.value)).toEqual(['', 'development', 'staging', 'production']);
    await fireEvent.change(env, { target: { value: 'staging' } });
    await waitFor(() => expect(inv.InventoryService.SetField).toHaveBeenCalledWith('cr-2', 'environment', 'staging'));
  });

  it('shows the backend refusing an edit next to the cell', async () => {
    const inv = await openInventory({ rows: three() });
    inv.InventoryService.SetField.mockRejectedValueOnce('Owner must be at most 256 characters on one line.');
    await fireEvent.click(within(rowOf('tracker')).getByTestId('inventory-edit-owner'));
    await fireEvent.input(screen.getByTestId('inventory-editor'), { target: { value: 'x' } });
    await fireEvent.keyDown(screen.getByTestId('inventory-editor'), { key: 'Enter' });
    expect((await screen.findByTestId('inventory-editor-error')).textContent).toContain('at most 256 characters');
  });

  it('is one tab stop that arrow keys move through; Enter edits or opens', async () => {
    const inv = await openInventory({ rows: three() });
    const table = screen.getByTestId('inventory-table');
    const focusable = table.querySelectorAll('[tabindex="0"]');
    expect(focusable).toHaveLength(1);
    const first = focusable[0] as HTMLElement;
    first.focus();
    await fireEvent.keyDown(first, { key: 'ArrowDown' });
    await waitFor(() => expect(document.activeElement?.id).toBe('inv-cell-1-0'));
    await fireEvent.keyDown(document.activeElement!, { key: 'ArrowRight' });
    await waitFor(() => expect(document.activeElement?.id).toBe('inv-cell-1-1'));
    await fireEvent.keyDown(document.activeElement!, { key: 'End' });
    await waitFor(() => expect(document.activeElement?.id).toBe('inv-cell-1-7'));
    await fireEvent.keyDown(document.activeElement!, { key: 'Home' });
    // Name, Environment, then Owner.
    for (let i = 0; i < 2; i++) await fireEvent.keyDown(document.activeElement!, { key: 'ArrowRight' });
    await waitFor(() => expect(document.activeElement?.getAttribute('data-testid')).toBe('inventory-cell-owner'));
    expect(table.querySelectorAll('[tabindex="0"]')).toHaveLength(1);
    // Row 1 is "status page": Enter on its owner cell edits it.
    await fireEvent.keyDown(document.activeElement!, { key: 'Enter' });
    const editor = await screen.findByTestId('inventory-editor');
    await waitFor(() => expect(document.activeElement).toBe(editor));
    await fireEvent.input(editor, { target: { value: 'dan@example.com' } });
    await fireEvent.keyDown(editor, { key: 'Enter' });
    await waitFor(() => expect(inv.InventoryService.SetField).toHaveBeenCalledWith('cr-2', 'owner', 'dan@example.com'));
    await waitFor(() => expect(document.activeElement?.id).toBe('inv-cell-1-2'));
    // Enter on a name opens the row's details.
    await fireEvent.keyDown(document.activeElement!, { key: 'Home' });
    await fireEvent.keyDown(document.activeElement!, { key: 'ArrowUp' });
    await fireEvent.keyDown(document.activeElement!, { key: 'Enter' });
    expect((await screen.findByTestId('inventory-details')).getAttribute('aria-label')).toBe('Details of mail');
  });

  it('exports what the filter shows, as CSV or JSON', async () => {
    const inv = await openInventory({ rows: three() });
    await fireEvent.input(screen.getByTestId('inventory-filter'), { target: { value: 'mail' } });
    await fireEvent.change(screen.getByTestId('inventory-state-filter'), { target: { value: 'review_due' } });
    await fireEvent.click(screen.getByTestId('inventory-export-csv'));
    await waitFor(() => expect(inv.InventoryService.Export).toHaveBeenCalledWith('csv', { text: 'mail', state: 'review_due' }));
    expect((await screen.findByTestId('inventory-exported')).textContent).toContain('/home/ana/yett-inventory.csv');
    await fireEvent.click(screen.getByTestId('inventory-export-json'));
    await waitFor(() => expect(inv.InventoryService.Export).toHaveBeenCalledWith('json', { text: 'mail', state: 'review_due' }));
  });

  it('draws a page of rows at a time, and Show more or Show all draws the rest', async () => {
    const rows = Array.from({ length: 12 }, (_, i) => inventoryRow({ id: `az-${i}`, name: `auth ${String(i).padStart(2, '0')}` }));
    await openInventory({ rows });
    expect(screen.getAllByTestId('inventory-row')).toHaveLength(5);
    expect(screen.getByTestId('inventory-count').textContent?.trim()).toBe('Showing 5 of 12.');
    expect(screen.getByTestId('inventory-table').getAttribute('aria-rowcount')).toBe('13');
    await fireEvent.click(screen.getByTestId('inventory-more'));
    expect(screen.getAllByTestId('inventory-row')).toHaveLength(10);
    // The filter reaches rows not drawn yet.
    await fireEvent.input(screen.getByTestId('inventory-filter'), { target: { value: 'auth 11' } });
    expect(names()).toEqual(['auth 11']);
    await fireEvent.input(screen.getByTestId('inventory-filter'), { target: { value: '' } });
    await fireEvent.click(screen.getByTestId('inventory-all'));
    expect(screen.getAllByTestId('inventory-row')).toHaveLength(12);
    expect(screen.queryByTestId('inventory-more')).toBeNull();
  });

  it('re-reads the table when the backend says it changed', async () => {
    const inv = await openInventory({ rows: three() });
    inv.state.rows.push(inventoryRow({ id: 'az-9', name: 'zeta' }));
    inv.changed();
    await waitFor(() => expect(names()).toContain('zeta'));
  });
});

describe('revocation drills from the inventory', () => {
  it('asks before a full drill, then shows its report step by step', async () => {
    const inv = await openInventory({ rows: three() });
    await fireEvent.click(within(rowOf('tracker')).getByTestId('inventory-open'));
    const details = await screen.findByTestId('inventory-details');
    expect(within(details).getByTestId('inventory-operations').textContent).toBe('tracker.create_issue');
    expect(within(details).getByTestId('inventory-disable').textContent).toContain('RFC 7009');

    await fireEvent.click(within(details).getByTestId('drill-run-full'));
    expect(inv.InventoryService.RunDrill).not.toHaveBeenCalled();
    expect(screen.getByTestId('drill-full-confirm').textContent).toContain('leaves it revoked');
    await fireEvent.click(screen.getByTestId('drill-full-cancel'));
    expect(screen.queryByTestId('drill-full-confirm')).toBeNull();
    expect(inv.InventoryService.RunDrill).not.toHaveBeenCalled();

    await fireEvent.click(within(details).getByTestId('drill-run-full'));
    await fireEvent.click(screen.getByTestId('drill-full-confirm-button'));
    await waitFor(() => expect(inv.InventoryService.RunDrill).toHaveBeenCalledWith('az-1', 'full'));
    const report = await screen.findByTestId('drill-report');
    expect(within(report).getByTestId('drill-verdict').textContent).toBe('passed');
    const steps = within(report).getAllByTestId('drill-step');
    expect(steps.map((s) => s.getAttribute('data-step'))).toEqual(['local_disable', 'provider_revocation']);
    expect(within(steps[1]).getByTestId('drill-step-verdict').textContent).toBe('pass');
    expect(within(steps[1]).getByTestId('drill-step-duration').textContent).toBe('240 ms');
    expect(within(steps[1]).getByTestId('drill-step-evidence').textContent).toContain('revocation answered HTTP 200');
    expect(within(report).getByTestId('drill-advice').textContent).toContain('Ended revoked.');

    await fireEvent.click(within(report).getByTestId('drill-export'));
    await waitFor(() => expect(inv.InventoryService.ExportDrill).toHaveBeenCalledWith('dr-1'));
  });

  it('runs an unattended drill without asking, and shows a failed step, that it switched the row back on, and what was not exercised or checked', async () => {
    const inv = await openInventory({ rows: three() });
    inv.state.nextReport = drillReport({
      id: 'dr-2', kind: 'unattended', passed: false, endState: 'active', resumed: true,
      advice: 'The drill stopped at “The revocation endpoint answers”, and Yett switched the authorization back on: it serves as it did before the drill.',
      notChecked: ['that the provider still honours the refresh token (no introspection endpoint)'],
      steps: [
        { ...drillReport().steps[0], name: 'local_disable' },
        {
          name: 'revocation_endpoint', title: 'The revocation endpoint answers', passed: false, did: 'Probed it.',
          evidence: ['revocation: connection refused'], startedAt: '2026-12-01T10:00:01Z', durationMs: 31, auditIndex: 52,
        },
      ],
      notExercised: ['Step 2, the provider revocation of the tokens in service.'],
    });
    await fireEvent.click(within(rowOf('tracker')).getByTestId('inventory-open'));
    await fireEvent.click(await screen.findByTestId('drill-run-unattended'));
    await waitFor(() => expect(inv.InventoryService.RunDrill).toHaveBeenCalledWith('az-1', 'unattended'));
    const report = await screen.findByTestId('drill-report');
    expect(within(report).getByTestId('drill-verdict').textContent).toBe('failed');
    const failed = within(report).getAllByTestId('drill-step')[1];
    expect(within(failed).getByTestId('drill-step-verdict').textContent).toBe('fail');
    expect(within(report).getByTestId('drill-not-exercised').textContent).toContain('Step 2');
    expect(within(report).getByTestId('drill-advice').textContent).toContain('Ended active, switched back on by the drill.');
    expect(within(report).getByTestId('drill-not-checked').textContent).toContain('refresh token');
  });

  it('shows a running drill as its steps arrive', async () => {
    const inv = await openInventory({ rows: three() });
    await fireEvent.click(within(rowOf('tracker')).getByTestId('inventory-open'));
    await screen.findByTestId('inventory-details');
    inv.drill(drillReport({ id: 'dr-live', running: true, finishedAt: '', steps: [drillReport().steps[0]], endState: '', advice: '' }));
    const report = await screen.findByTestId('drill-report');
    expect(within(report).getByTestId('drill-verdict').textContent).toBe('running');
    expect(within(report).getAllByTestId('drill-step')).toHaveLength(1);
    // Another row's drill does not replace it.
    inv.drill(drillReport({ id: 'dr-other', authorizationId: 'az-3', running: true }));
    expect(within(screen.getByTestId('drill-report')).getAllByTestId('drill-step')).toHaveLength(1);
  });

  it('keeps an ended report when an older snapshot of the same drill arrives late', async () => {
    const inv = await openInventory({ rows: three() });
    await fireEvent.click(within(rowOf('tracker')).getByTestId('inventory-open'));
    await fireEvent.click(await screen.findByTestId('drill-run-unattended'));
    await waitFor(() => expect(within(screen.getByTestId('drill-report')).getByTestId('drill-verdict').textContent).toBe('passed'));
    inv.drill(drillReport({ running: true, finishedAt: '', steps: [drillReport().steps[0]], endState: '', advice: '' }));
    inv.drill(drillReport({ running: true, finishedAt: '', steps: [], endState: '', advice: '' }));
    await tick();
    expect(within(screen.getByTestId('drill-report')).getByTestId('drill-verdict').textContent).toBe('passed');
    expect(within(screen.getByTestId('drill-report')).getAllByTestId('drill-step')).toHaveLength(2);
  });

  it('offers no drill on an HTTP credential', async () => {
    await openInventory({ rows: three() });
    await fireEvent.click(within(rowOf('status page')).getByTestId('inventory-open'));
    await screen.findByTestId('inventory-details');
    expect(screen.queryByTestId('drill-run-full')).toBeNull();
    expect(screen.queryByTestId('drill-run-unattended')).toBeNull();
  });

  it('saves a drill schedule', async () => {
    const inv = await openInventory({ rows: three() });
    await fireEvent.click(within(rowOf('tracker')).getByTestId('inventory-open'));
    await fireEvent.input(await screen.findByTestId('drill-every'), { target: { value: '30' } });
    await fireEvent.change(screen.getByTestId('drill-kind'), { target: { value: 'full' } });
    await fireEvent.click(screen.getByTestId('drill-schedule-save'));
    await waitFor(() => expect(inv.InventoryService.SetDrillSchedule).toHaveBeenCalledWith('az-1', 30, 'full'));
  });
});

// Issue 20: a suspended row can be found and switched back on, and a
// revoked one is history: no edit links, no next drill.
describe('suspended and revoked rows', () => {
  it('filters suspended rows, switches one back on, and shows revoked rows without edits or a next drill', async () => {
    installBridge(vaultStatus({ state: 'unlocked', epoch: 3 }));
    const rows = [
      inventoryRow({ id: 'az-s', name: 'drilled', state: 'suspended', stateReason: 'unattended revocation drill' }),
      inventoryRow({ id: 'az-r', name: 'gone', state: 'revoked', nextDrill: '', drillOverdue: false }),
      inventoryRow({ id: 'az-a', name: 'live' }),
    ];
    installInventory({ rows });
    const oauth = installOAuth({ authorizations: [authorization({ id: 'az-s', state: 'suspended' })] });
    render(App);
    await fireEvent.click(await screen.findByTestId('nav-inventory'));
    await screen.findByTestId('inventory-table');
    await fireEvent.change(screen.getByTestId('inventory-state-filter'), { target: { value: 'suspended' } });
    expect(names()).toEqual(['drilled']);
    await fireEvent.change(screen.getByTestId('inventory-state-filter'), { target: { value: '' } });

    const gone = rowOf('gone');
    expect(within(gone).queryAllByRole('button', { name: /^Edit / })).toHaveLength(0);
    expect(within(gone).getByTestId('inventory-cell-nextDrill').textContent?.trim()).toBe('none until reconnected');
    expect(within(rowOf('live')).queryAllByRole('button', { name: /^Edit / }).length).toBeGreaterThan(0);

    await fireEvent.click(within(rowOf('drilled')).getByTestId('inventory-open'));
    const note = await screen.findByTestId('inventory-suspended');
    expect(note.textContent).toContain('unattended revocation drill');
    await fireEvent.click(within(note).getByTestId('inventory-resume'));
    await waitFor(() => expect(oauth.OAuthService.Resume).toHaveBeenCalledWith('az-s'));
  });
});
