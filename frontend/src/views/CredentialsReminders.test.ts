import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import App from '../App.svelte';
import { credentialView, installBridge, vaultStatus } from '../test/fakeBridge';

// What a password manager's user expects of the credentials: each one's
// age and last rotation, a rotation reminder the backend says is due, and
// a removal that can be undone for 30 seconds.

const NOW = Date.parse('2026-12-10T12:00:00Z');

// Intervals and the clock are faked (the countdowns read both); the DOM
// queries' own timeouts still run.
function fakeClock() {
  vi.useFakeTimers({ now: NOW, toFake: ['setInterval', 'clearInterval', 'Date'] });
}

describe('credential ages and rotation reminders', () => {
  afterEach(() => vi.useRealTimers());

  it('shows each credential’s age and last rotation, the full dates in the title, and flags only what the backend says is due', async () => {
    fakeClock();
    const bridge = installBridge(vaultStatus({ state: 'unlocked', rotationsDue: 1 }));
    bridge.credentials.push(
      credentialView({ id: 'a', name: 'old', createdAt: '2026-07-01T09:00:00Z', secretSetAt: '2026-07-01T09:00:00Z', updatedAt: '2026-07-01T09:00:00Z' }),
      credentialView({
        id: 'b', name: 'due', hosts: ['b.example.com'], createdAt: '2026-01-05T09:00:00Z', updatedAt: '2026-09-01T09:00:00Z',
        secretSetAt: '2026-09-01T09:00:00Z', rotateEveryDays: 90, rotationDueAt: '2026-11-30T09:00:00Z', rotationDue: true,
      }),
      credentialView({
        id: 'c', name: 'fresh', hosts: ['c.example.com'], createdAt: '2026-12-09T09:00:00Z', updatedAt: '2026-12-09T09:00:00Z',
        secretSetAt: '2026-12-09T09:00:00Z', rotateEveryDays: 30, rotationDueAt: '2027-01-08T09:00:00Z',
      }),
    );
    render(App);
    const rows = await screen.findAllByTestId('credential-row');
    const row = (name: string) => within(rows.find((r) => within(r).getByTestId('credential-name').textContent === name)!);

    expect(row('old').getByTestId('credential-age').textContent?.replace(/\s+/g, ' ').trim()).toBe('added 5 months ago · never rotated');
    const due = row('due').getByTestId('credential-age');
    expect(due.textContent?.replace(/\s+/g, ' ').trim()).toBe('added 11 months ago · rotated 3 months ago');
    expect(due.getAttribute('title')).toMatch(/^Added .*2026.*; secret last rotated .*2026/);
    expect(row('fresh').getByTestId('credential-age').textContent).toContain('added yesterday');

    expect(row('due').getByTestId('credential-rotation-due').textContent?.trim()).toBe('Rotation due');
    expect(row('old').queryByTestId('credential-rotation-due')).toBeNull();
    expect(row('fresh').queryByTestId('credential-rotation-due')).toBeNull();

    await fireEvent.click(row('fresh').getByTestId('credential-details'));
    expect(row('fresh').getByTestId('credential-reminder').textContent?.replace(/\s+/g, ' ')).toMatch(/Every 30 days; due .*2027.* \(in 29 days\)/);
    await fireEvent.click(row('old').getByTestId('credential-details'));
    expect(row('old').getByTestId('credential-reminder').textContent).toContain('no reminder; Edit sets one');

    // The count is in the sidebar, from the status, on Credentials only.
    const nav = screen.getByTestId('nav-credentials');
    const count = within(nav).getByTestId('reminder-credentials');
    expect(count.textContent).toBe('1, 1 credential is due for rotation');
    expect(count.getAttribute('title')).toBe('1 credential is due for rotation');
    expect(nav.textContent).toContain('Credentials');
    expect(screen.queryByTestId('reminder-settings')).toBeNull();
  });

  it('counts what the status says, and nothing when nothing is due', async () => {
    const bridge = installBridge(vaultStatus({ state: 'unlocked', rotationsDue: 3, backupDue: true, backupReminderDays: 14 }));
    render(App);
    expect((await screen.findByTestId('reminder-credentials')).textContent).toBe('3, 3 credentials are due for rotation');
    expect(screen.getByTestId('reminder-settings').textContent).toBe('backup, no backup in the last 14 days');
    bridge.emit(vaultStatus({ state: 'unlocked', epoch: 2, rotationsDue: 0, backupDue: false }));
    await waitFor(() => expect(screen.queryByTestId('reminder-credentials')).toBeNull());
    expect(screen.queryByTestId('reminder-settings')).toBeNull();
  });

  it('edits the reminder with the rest, offering a reminder set elsewhere among the choices', async () => {
    const bridge = installBridge(vaultStatus({ state: 'unlocked' }));
    bridge.credentials.push(credentialView({ id: 'a', name: 'gh', rotateEveryDays: 45, rotationDueAt: '2027-01-01T00:00:00Z' }));
    render(App);
    const row = within(await screen.findByTestId('credential-row'));
    await fireEvent.click(row.getByTestId('credential-edit'));
    const select = row.getByTestId('cred-rotate-every') as HTMLSelectElement;
    expect(select.value).toBe('45');
    expect([...select.options].map((o) => o.textContent)).toEqual(['Never', 'every 30 days', 'every 45 days', 'every 60 days', 'every 90 days', 'every 180 days', 'every year']);
    // The form explains its approval words where it uses them.
    await fireEvent.click(row.getByTestId('help-approvalModes'));
    expect(row.getByTestId('help-approvalModes-text').textContent).toContain('Reads once per run, every write');
    await fireEvent.click(row.getByTestId('help-sessionVsCall'));
    expect(row.getByTestId('help-sessionVsCall-text').textContent).toContain('a session never stands in for it');
    await fireEvent.change(select, { target: { value: '0' } });
    await fireEvent.submit(row.getByTestId('credential-form'));
    await waitFor(() => expect(bridge.VaultService.UpdateCredential).toHaveBeenCalledTimes(1));
    expect(bridge.VaultService.UpdateCredential.mock.calls[0][2]).toMatchObject({ rotateEveryDays: 0 });
  });
});

describe('undoing a removal', () => {
  afterEach(() => vi.useRealTimers());

  async function removeOne() {
    fakeClock();
    const bridge = installBridge(vaultStatus({ state: 'unlocked' }));
    bridge.credentials.push(credentialView({ id: 'cred-a', name: 'gh' }));
    render(App);
    await screen.findByTestId('credential-row');
    await fireEvent.click(screen.getByTestId('credential-remove'));
    expect(screen.getByTestId('credential-remove-question').textContent).toContain('undo for 30 seconds');
    await fireEvent.click(screen.getByTestId('credential-remove-confirm'));
    await screen.findByTestId('credentials-empty');
    return bridge;
  }

  it('offers Undo for 30 seconds, says the removal stands if the vault locks or Yett quits, and restores the credential', async () => {
    const bridge = await removeOne();
    const undo = await screen.findByTestId('credential-undo');
    expect(undo.textContent).toContain('Removed “gh”: agents can no longer use it.');
    expect(undo.textContent).toContain('If the vault locks or Yett quits first, the removal stands.');
    expect(screen.getByTestId('credential-undo-left').textContent).toBe('30 s');
    expect(screen.getByTestId('credential-undo-button').getAttribute('aria-label')).toBe('Undo removing “gh”');
    await vi.advanceTimersByTimeAsync(12_000);
    expect(screen.getByTestId('credential-undo-left').textContent).toBe('18 s');

    await fireEvent.click(screen.getByTestId('credential-undo-button'));
    expect(bridge.VaultService.UndoRemoveCredential).toHaveBeenCalledWith('cred-a');
    const row = await screen.findByTestId('credential-row');
    expect(within(row).getByTestId('credential-name').textContent).toBe('gh');
    expect(screen.getByTestId('credential-added').textContent).toContain('Restored “gh” as it was (now version 2)');
    expect(screen.queryByTestId('credential-undo')).toBeNull();
    await waitFor(() => expect(document.activeElement?.id).toBe('stored-title'));
  });

  it('takes Undo away when the 30 seconds pass: the removal stood', async () => {
    const bridge = await removeOne();
    await screen.findByTestId('credential-undo');
    await vi.advanceTimersByTimeAsync(30_000);
    await waitFor(() => expect(screen.queryByTestId('credential-undo')).toBeNull());
    expect(screen.getByTestId('credential-removed').textContent).toBe('Removed “gh”.');
    expect(bridge.VaultService.UndoRemoveCredential).not.toHaveBeenCalled();
  });

  it('says so when the backend finds it too late (the vault locked meanwhile)', async () => {
    const bridge = await removeOne();
    bridge.VaultService.UndoRemoveCredential.mockRejectedValueOnce('Too late to undo: the removal stands (30 seconds passed, or the vault locked since). Add the credential again if you need it.');
    await fireEvent.click(await screen.findByTestId('credential-undo-button'));
    expect((await screen.findByTestId('credentials-error')).textContent).toContain('Too late to undo: the removal stands');
  });

  it('offers the removals the backend can still undo when the view opens again', async () => {
    fakeClock();
    const bridge = installBridge(vaultStatus({ state: 'unlocked' }));
    bridge.VaultService.RemovedCredentials.mockResolvedValue([{ id: 'cred-z', name: 'ci', undoUntil: new Date(NOW + 9_000).toISOString() }]);
    render(App);
    expect((await screen.findByTestId('credential-undo')).textContent).toContain('Removed “ci”');
    expect(screen.getByTestId('credential-undo-left').textContent).toBe('9 s');
  });
});
