import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';

// Settings' backups: the last backup the vault recorded, the reminder when
// none was made in N days, and N, all from the vault's status.

async function openSettings(over = {}) {
  vi.useFakeTimers({ now: Date.parse('2026-12-10T12:00:00Z'), toFake: ['setInterval', 'clearInterval', 'Date'] });
  const bridge = installBridge(vaultStatus({ state: 'unlocked', ...over }));
  render(App);
  await fireEvent.click(await screen.findByTestId('nav-settings'));
  await screen.findByTestId('settings-backup');
  return bridge;
}

describe('backup reminder', () => {
  afterEach(() => vi.useRealTimers());

  it('says when and where the last backup went', async () => {
    await openSettings({ lastBackupAt: '2026-11-28T08:30:00Z', lastBackupPath: '/home/ana/yett-2026-11-28.yettbackup' });
    const last = screen.getByTestId('backup-last').textContent!.replace(/\s+/g, ' ');
    expect(last).toMatch(/Last backup 12 days ago \(Nov 28, 2026.*\), to \/home\/ana\/yett-2026-11-28\.yettbackup\./);
    expect(screen.queryByTestId('backup-due')).toBeNull();
  });

  it('reminds when the backend says a backup is due, and says when none was recorded', async () => {
    await openSettings({ backupDue: true, backupReminderDays: 30 });
    expect(screen.getByTestId('backup-last').textContent).toContain('No backup recorded yet.');
    expect(screen.getByTestId('backup-due').textContent).toContain('No backup in the last 30 days.');
    expect(screen.getByTestId('reminder-settings')).toBeTruthy();
  });

  it('sets the reminder’s days, or turns it off, and shows the status the backend answers with', async () => {
    const bridge = await openSettings({ backupDue: true, backupReminderDays: 30 });
    const select = screen.getByTestId('backup-reminder') as HTMLSelectElement;
    expect(select.value).toBe('30');
    expect((screen.getByTestId('backup-reminder-save') as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.change(select, { target: { value: '0' } });
    await fireEvent.submit(select.closest('form')!);
    expect(bridge.VaultService.SetBackupReminderDays).toHaveBeenCalledWith(0);
    await waitFor(() => expect(screen.queryByTestId('backup-due')).toBeNull());
    expect(screen.queryByTestId('reminder-settings')).toBeNull();
    expect(screen.getByText('Saved.')).toBeTruthy();
  });

  it('shows why a change was refused and keeps focus on the choice', async () => {
    const bridge = await openSettings();
    bridge.VaultService.SetBackupReminderDays.mockRejectedValueOnce('The vault is locked.');
    const select = screen.getByTestId('backup-reminder') as HTMLSelectElement;
    await fireEvent.change(select, { target: { value: '7' } });
    await fireEvent.submit(select.closest('form')!);
    expect((await screen.findByTestId('backup-reminder-error')).textContent).toBe('The vault is locked.');
    await waitFor(() => expect(document.activeElement).toBe(select));
  });
});
