import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';

const GOOD = 'correct horse battery staple';

async function setup(over = {}) {
  const bridge = installBridge(vaultStatus({ state: 'uninitialised', epoch: 0, ...over }));
  render(App);
  await screen.findByTestId('setup-screen');
  const pass = screen.getByTestId('setup-passphrase') as HTMLInputElement;
  const confirm = screen.getByTestId('setup-confirm') as HTMLInputElement;
  const submit = screen.getByTestId('setup-submit') as HTMLButtonElement;
  return { bridge, pass, confirm, submit };
}

describe('Setup', () => {
  it('enables Create only for a long enough passphrase typed twice', async () => {
    const { pass, confirm, submit } = await setup();
    expect(submit.disabled).toBe(true);

    await fireEvent.input(pass, { target: { value: 'short' } });
    await fireEvent.input(confirm, { target: { value: 'short' } });
    expect(submit.disabled).toBe(true);
    expect(screen.getByTestId('setup-strength').dataset.strength).toBe('too short');

    await fireEvent.input(pass, { target: { value: GOOD } });
    expect(screen.getByTestId('setup-mismatch')).toBeTruthy();
    expect(submit.disabled).toBe(true);

    await fireEvent.input(confirm, { target: { value: GOOD } });
    expect(screen.queryByTestId('setup-mismatch')).toBeNull();
    expect(screen.getByTestId('setup-strength').dataset.strength).toBe('strong');
    expect(submit.disabled).toBe(false);
  });

  it('creates the vault with the chosen unlock methods and clears the fields', async () => {
    const { bridge, pass, confirm } = await setup();
    await fireEvent.input(pass, { target: { value: GOOD } });
    await fireEvent.input(confirm, { target: { value: GOOD } });
    await fireEvent.click(screen.getByTestId('setup-keyring'));
    await fireEvent.submit(screen.getByTestId('setup-screen'));
    expect(bridge.VaultService.Create).toHaveBeenCalledWith(GOOD, true);
    expect(pass.value).toBe('');
    expect(confirm.value).toBe('');
    await screen.findByTestId('shell');
  });

  it('does not offer the keyring when it is unavailable, and says why', async () => {
    const { bridge, pass, confirm } = await setup({ keyringAvailable: false, keyringNote: 'no Secret Service on the session bus' });
    const box = screen.getByTestId('setup-keyring') as HTMLInputElement;
    expect(box.disabled).toBe(true);
    expect(screen.getByTestId('keyring-unavailable').textContent).toContain('no Secret Service on the session bus');
    await fireEvent.input(pass, { target: { value: GOOD } });
    await fireEvent.input(confirm, { target: { value: GOOD } });
    await fireEvent.submit(screen.getByTestId('setup-screen'));
    expect(bridge.VaultService.Create).toHaveBeenCalledWith(GOOD, false);
  });

  it('explains what the keyring does not protect against', async () => {
    await setup();
    expect(screen.getByTestId('setup-screen').textContent).toMatch(/any program running as your user can read Secret Service items/);
  });

  it('shows a failure and leaves no passphrase behind', async () => {
    const { bridge, pass, confirm } = await setup();
    bridge.VaultService.Create.mockRejectedValueOnce('cannot write the vault file: disk full');
    await fireEvent.input(pass, { target: { value: GOOD } });
    await fireEvent.input(confirm, { target: { value: GOOD } });
    await fireEvent.submit(screen.getByTestId('setup-screen'));
    await waitFor(() => expect(screen.getByTestId('setup-error').textContent).toContain('disk full'));
    expect(pass.value).toBe('');
    expect(confirm.value).toBe('');
    expect(screen.getByTestId('setup-screen')).toBeTruthy();
  });
});
