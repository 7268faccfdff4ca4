import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';

describe('status bar', () => {
  afterEach(() => vi.useRealTimers());

  it('shows state and the auto-lock countdown, no jargon, and says "locking" rather than guessing "locked"', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-29T18:00:00Z') });
    installBridge(vaultStatus({ state: 'unlocked', epoch: 12, lockDeadline: '2026-11-29T18:00:05Z' }));
    render(App);
    await vi.advanceTimersByTimeAsync(0);
    expect(screen.getByTestId('status-state').textContent?.trim()).toBe('unlocked');
    expect(screen.getByTestId('status-bar').textContent).not.toMatch(/epoch/i);
    expect(screen.getByTestId('status-autolock').textContent).toContain('5s');
    await vi.advanceTimersByTimeAsync(6000);
    expect(screen.getByTestId('status-autolock').textContent).toContain('Locking…');
    expect(screen.getByTestId('shell')).toBeTruthy();
  });

  it('says when auto-lock is off', async () => {
    installBridge(vaultStatus({ state: 'unlocked', lockDeadline: '' }));
    render(App);
    expect((await screen.findByTestId('status-autolock')).textContent).toContain('Auto-lock off');
  });

  it('locks now', async () => {
    const bridge = installBridge(vaultStatus({ state: 'unlocked', epoch: 2 }));
    render(App);
    await fireEvent.click(await screen.findByTestId('lock-now'));
    expect(bridge.VaultService.Lock).toHaveBeenCalledTimes(1);
    await screen.findByTestId('unlock-screen');
  });

  it('restarts the idle timer on input, throttled', async () => {
    const bridge = installBridge(vaultStatus({ state: 'unlocked' }));
    render(App);
    await screen.findByTestId('shell');
    await fireEvent.keyDown(window, { key: 'a' });
    await fireEvent.keyDown(window, { key: 'b' });
    expect(bridge.VaultService.Touch).toHaveBeenCalledTimes(1);
  });
});

describe('settings', () => {
  async function openSettings(over = {}) {
    const bridge = installBridge(vaultStatus({ state: 'unlocked', autoLockMinutes: 480, ...over }));
    render(App);
    await fireEvent.click(await screen.findByTestId('nav-settings'));
    await screen.findByTestId('view-settings');
    return bridge;
  }

  it('saves the auto-lock minutes', async () => {
    const bridge = await openSettings();
    expect((screen.getByTestId('autolock-480') as HTMLInputElement).checked).toBe(true);
    await fireEvent.click(screen.getByTestId('autolock-15'));
    await fireEvent.submit(screen.getByTestId('settings-autolock'));
    expect(bridge.VaultService.SetAutoLockMinutes).toHaveBeenCalledWith(15);
    await fireEvent.click(screen.getByTestId('autolock-custom'));
    const input = screen.getByTestId('autolock-minutes') as HTMLInputElement;
    await fireEvent.input(input, { target: { value: '30' } });
    await fireEvent.submit(screen.getByTestId('settings-autolock'));
    expect(bridge.VaultService.SetAutoLockMinutes).toHaveBeenCalledWith(30);
  });

  it('refuses zero or more than 7 days without calling the backend, and focuses the field', async () => {
    const bridge = await openSettings();
    await fireEvent.click(screen.getByTestId('autolock-custom'));
    await fireEvent.input(screen.getByTestId('autolock-minutes'), { target: { value: '0' } });
    await fireEvent.submit(screen.getByTestId('settings-autolock'));
    expect(screen.getByTestId('autolock-error').textContent).toContain('from 1 up to 7 days');
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('autolock-minutes')));
    await fireEvent.input(screen.getByTestId('autolock-minutes'), { target: { value: '10081' } });
    await fireEvent.submit(screen.getByTestId('settings-autolock'));
    expect(screen.getByTestId('autolock-error')).toBeTruthy();
    expect(bridge.VaultService.SetAutoLockMinutes).not.toHaveBeenCalled();
  });

  it('turns keyring unlock on and shows what the backend then reports', async () => {
    const bridge = await openSettings();
    expect(screen.getByTestId('keyring-state').textContent).toBe('off');
    await fireEvent.click(screen.getByTestId('keyring-toggle'));
    expect(bridge.VaultService.EnableKeyring).toHaveBeenCalledWith(true);
    await waitFor(() => expect(screen.getByTestId('keyring-state').textContent).toBe('on'));
  });

  it('cannot turn on an unavailable keyring, and says why', async () => {
    await openSettings({ keyringAvailable: false, keyringNote: 'keyctl is not permitted here' });
    expect((screen.getByTestId('keyring-toggle') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('keyring-unavailable').textContent).toContain('keyctl is not permitted here');
  });
});
