import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';

async function locked(over = {}) {
  const bridge = installBridge(vaultStatus({ state: 'locked', epoch: 3, ...over }));
  render(App);
  await screen.findByTestId('unlock-screen');
  const pass = screen.getByTestId('unlock-passphrase') as HTMLInputElement;
  const submit = screen.getByTestId('unlock-submit') as HTMLButtonElement;
  return { bridge, pass, submit };
}

describe('Unlock', () => {
  afterEach(() => vi.useRealTimers());

  it('unlocks with the right passphrase', async () => {
    const { bridge, pass } = await locked();
    await fireEvent.input(pass, { target: { value: 'right passphrase 1' } });
    await fireEvent.submit(screen.getByTestId('unlock-screen'));
    expect(bridge.VaultService.Unlock).toHaveBeenCalledWith('right passphrase 1');
    await screen.findByTestId('shell');
  });

  it('shows a wrong passphrase clearly and empties the field', async () => {
    const { bridge, pass } = await locked();
    await fireEvent.input(pass, { target: { value: 'wrong one' } });
    expect(pass.value).toBe('wrong one');
    await fireEvent.submit(screen.getByTestId('unlock-screen'));
    await waitFor(() => expect(screen.getByTestId('unlock-error').textContent).toBe('wrong passphrase'));
    expect(bridge.VaultService.Unlock).toHaveBeenCalledWith('wrong one');
    expect(pass.value).toBe('');
    expect(screen.getByTestId('unlock-screen')).toBeTruthy();
  });

  it('counts down a throttle the backend reports and blocks the button meanwhile', async () => {
    vi.useFakeTimers();
    const { bridge, pass, submit } = await locked();
    bridge.VaultService.Unlock.mockImplementationOnce(async () => {
      bridge.status = vaultStatus({ state: 'locked', epoch: 3, retryAfterMs: 3000 });
      throw 'wrong passphrase';
    });
    await fireEvent.input(pass, { target: { value: 'wrong one' } });
    await fireEvent.submit(screen.getByTestId('unlock-screen'));
    await vi.advanceTimersByTimeAsync(0);
    expect(screen.getByTestId('unlock-wait-remaining').textContent).toBe('3s');

    await fireEvent.input(pass, { target: { value: 'right passphrase 1' } });
    expect(submit.disabled).toBe(true);
    await fireEvent.submit(screen.getByTestId('unlock-screen'));
    expect(bridge.VaultService.Unlock).toHaveBeenCalledTimes(1);

    await vi.advanceTimersByTimeAsync(1000);
    expect(screen.getByTestId('unlock-wait-remaining').textContent).toBe('2s');
    await vi.advanceTimersByTimeAsync(2100);
    expect(screen.queryByTestId('unlock-wait')).toBeNull();
    expect(submit.disabled).toBe(false);
  });

  it('a status with no throttle arriving between the clock\'s ticks leaves the button usable', async () => {
    // The countdown's clock ticks every 250 ms; a status pushed just after
    // a tick (the lock's own event, a Touch's) must not count as a wait
    // until the next one: the button stays enabled, no wait is shown, and
    // Enter submits.
    vi.useFakeTimers();
    const { bridge, pass, submit } = await locked();
    await fireEvent.input(pass, { target: { value: 'wrong one' } });
    await vi.advanceTimersByTimeAsync(260);
    await vi.advanceTimersByTimeAsync(100);
    bridge.emit(vaultStatus({ state: 'locked', epoch: 3 }));
    await vi.advanceTimersByTimeAsync(0);
    expect(submit.disabled).toBe(false);
    expect(screen.queryByTestId('unlock-wait')).toBeNull();
    await fireEvent.submit(screen.getByTestId('unlock-screen'));
    expect(bridge.VaultService.Unlock).toHaveBeenCalledWith('wrong one');
  });

  it('honours a throttle already running when the screen opens', async () => {
    const { pass, submit } = await locked({ retryAfterMs: 60_000 });
    await fireEvent.input(pass, { target: { value: 'right passphrase 1' } });
    expect(submit.disabled).toBe(true);
    expect(screen.getByTestId('unlock-wait-remaining').textContent).toBe('1m 00s');
  });

  it('offers keyring unlock only when enabled', async () => {
    await locked({ keyringEnabled: false });
    expect(screen.queryByTestId('unlock-keyring')).toBeNull();
  });

  it('unlocks with the keyring, or falls back to the passphrase with a message', async () => {
    const { bridge } = await locked({ keyringEnabled: true });
    bridge.VaultService.UnlockWithKeyring.mockRejectedValueOnce('the keyring item is missing');
    await fireEvent.click(screen.getByTestId('unlock-keyring'));
    const msg = await screen.findByTestId('unlock-keyring-error');
    expect(msg.textContent).toContain('the keyring item is missing');
    expect(msg.textContent).toContain('Unlock with your passphrase instead');

    await fireEvent.click(screen.getByTestId('unlock-keyring'));
    await screen.findByTestId('shell');
  });
});
