import { describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor } from '@testing-library/svelte';
import App from './App.svelte';
import { installBridge, vaultStatus } from './test/fakeBridge';

describe('App follows the backend state', () => {
  it('shows the screen for each state it is told, and only then', async () => {
    const bridge = installBridge(vaultStatus({ state: 'uninitialised', epoch: 0 }));
    render(App);
    await screen.findByTestId('setup-screen');

    bridge.emit(vaultStatus({ state: 'locked', epoch: 1 }));
    await screen.findByTestId('unlock-screen');
    expect(screen.queryByTestId('setup-screen')).toBeNull();

    bridge.emit(vaultStatus({ state: 'unlocked', epoch: 2 }));
    await screen.findByTestId('shell');
    expect(screen.getByTestId('status-state').textContent?.trim()).toBe('unlocked');

    // Idle auto-lock happens in Go; the UI learns it from the event alone.
    bridge.emit(vaultStatus({ state: 'locked', epoch: 3 }));
    await screen.findByTestId('unlock-screen');
    expect(screen.queryByTestId('shell')).toBeNull();
  });

  it('ignores a status older than the one shown', async () => {
    const bridge = installBridge(vaultStatus({ state: 'unlocked', epoch: 5 }));
    render(App);
    await screen.findByTestId('shell');
    bridge.emitRaw(vaultStatus({ state: 'locked', epoch: 4 }));
    await new Promise((r) => setTimeout(r, 20));
    expect(screen.getByTestId('shell')).toBeTruthy();
    expect(screen.queryByTestId('unlock-screen')).toBeNull();
  });

  it('shows the damage and offers no repair', async () => {
    installBridge(vaultStatus({ state: 'damaged', damaged: 'record cred-7: authentication failed' }));
    render(App);
    const detail = await screen.findByTestId('damaged-detail');
    expect(detail.textContent).toContain('record cred-7: authentication failed');
    expect(screen.getByTestId('damaged-screen').textContent).toContain('left the vault file exactly as it found it');
    for (const b of screen.getAllByRole('button')) expect(b.textContent).not.toMatch(/repair|reset|delete/i);
  });

  it('reports an unknown state as an error instead of guessing a screen', async () => {
    const bridge = installBridge();
    bridge.VaultService.Status.mockResolvedValue({ ...vaultStatus(), state: 'sealed' });
    render(App);
    const err = await screen.findByTestId('app-error');
    expect(err.textContent).toContain('does not understand');
    expect(screen.queryByTestId('unlock-screen')).toBeNull();
  });

  it('keeps the last screen and shows an error when an event cannot be read', async () => {
    const bridge = installBridge(vaultStatus({ state: 'unlocked', epoch: 2 }));
    render(App);
    await screen.findByTestId('shell');
    bridge.emitRaw({ state: 'locked' });
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('does not understand'));
    expect(screen.getByTestId('shell')).toBeTruthy();
  });

  it('says so when there is no backend', async () => {
    vi.useFakeTimers();
    try {
      render(App);
      expect(screen.getByTestId('app-loading')).toBeTruthy();
      // waitForBackend gives up after its timeout.
      await vi.advanceTimersByTimeAsync(10_100);
      expect(screen.getByTestId('app-error').textContent).toContain('not reachable');
    } finally {
      vi.useRealTimers();
    }
  });
});
