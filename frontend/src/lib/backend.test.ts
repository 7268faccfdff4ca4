import { afterEach, describe, expect, it, vi } from 'vitest';
import * as backend from './backend';
import { BackendError, BackendUnavailableError, ProtocolError } from './backend';
import { credentialView, installBridge, vaultStatus } from '../test/fakeBridge';

describe('bound methods', () => {
  const cases: {
    name: string;
    run: () => Promise<unknown>;
    method: string;
    args: unknown[];
  }[] = [
    { name: 'vaultStatus', run: () => backend.vaultStatus(), method: 'Status', args: [] },
    { name: 'vaultCreate', run: () => backend.vaultCreate('p'.repeat(12), true), method: 'Create', args: ['p'.repeat(12), true] },
    { name: 'vaultUnlock', run: () => backend.vaultUnlock('right passphrase 1'), method: 'Unlock', args: ['right passphrase 1'] },
    { name: 'vaultUnlockWithKeyring', run: () => backend.vaultUnlockWithKeyring(), method: 'UnlockWithKeyring', args: [] },
    { name: 'vaultLock', run: () => backend.vaultLock(), method: 'Lock', args: [] },
    { name: 'vaultSetAutoLockMinutes', run: () => backend.vaultSetAutoLockMinutes(15), method: 'SetAutoLockMinutes', args: [15] },
    { name: 'vaultEnableKeyring', run: () => backend.vaultEnableKeyring(true), method: 'EnableKeyring', args: [true] },
    { name: 'vaultTouch', run: () => backend.vaultTouch(), method: 'Touch', args: [] },
    { name: 'vaultListCredentials', run: () => backend.vaultListCredentials(), method: 'ListCredentials', args: [] },
    { name: 'vaultRemoveCredential', run: () => backend.vaultRemoveCredential('cred-9'), method: 'RemoveCredential', args: ['cred-9'] },
  ];
  for (const c of cases) {
    it(`${c.name} calls VaultService.${c.method} with its arguments`, async () => {
      const bridge = installBridge();
      await c.run();
      const fn = bridge.VaultService[c.method as keyof typeof bridge.VaultService];
      expect(fn).toHaveBeenCalledTimes(1);
      expect(fn).toHaveBeenCalledWith(...c.args);
    });
  }

  it('addCredential sends the form as is and returns the parsed view', async () => {
    const bridge = installBridge();
    const form = {
      name: 'gh',
      secret: 'CANARY-unit-add',
      format: 'header' as const,
      headerName: 'X-Api-Key',
      template: 'Token {secret}',
      username: '',
      hosts: ['api.example.com'],
      pathPrefixes: ['/v1/'],
      approval: 'per_call' as const,
      rotateEveryDays: 90,
      owner: 'ana',
      backupRevoker: 'luis',
      environment: 'staging' as const,
    };
    const view = await backend.vaultAddCredential(form);
    expect(bridge.VaultService.AddCredential).toHaveBeenCalledWith(form);
    expect(view.name).toBe('gh');
    expect(JSON.stringify(view)).not.toContain('CANARY');
  });

  it('returns the status the backend sent', async () => {
    installBridge(vaultStatus({ state: 'unlocked', epoch: 42 }));
    const s = await backend.vaultStatus();
    expect(s.state).toBe('unlocked');
    expect(s.epoch).toBe(42);
  });
});

describe('errors', () => {
  it('turns a Wails rejection string into a BackendError with that text', async () => {
    const bridge = installBridge();
    bridge.VaultService.Unlock.mockRejectedValueOnce('wrong passphrase');
    const err = await backend.vaultUnlock('nope').catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.message).toBe('wrong passphrase');
  });

  it('uses a generic message when the rejection carries none', async () => {
    const bridge = installBridge();
    bridge.VaultService.Lock.mockRejectedValueOnce(undefined);
    await expect(backend.vaultLock()).rejects.toThrow('Yett could not complete the request.');
  });

  it('reports a missing bridge instead of pretending', async () => {
    await expect(backend.vaultStatus()).rejects.toBeInstanceOf(BackendUnavailableError);
    expect(() => backend.onVaultStatus(() => {})).toThrow(BackendUnavailableError);
  });

  it('refuses a status with a state it does not know', async () => {
    const bridge = installBridge();
    bridge.VaultService.Status.mockResolvedValueOnce({ ...vaultStatus(), state: 'half-open' });
    await expect(backend.vaultStatus()).rejects.toBeInstanceOf(ProtocolError);
  });

  it('refuses a status with a missing field', async () => {
    const bridge = installBridge();
    const { epoch: _epoch, ...noEpoch } = vaultStatus();
    bridge.VaultService.Status.mockResolvedValueOnce(noEpoch);
    await expect(backend.vaultStatus()).rejects.toBeInstanceOf(ProtocolError);
  });
});

describe('credential views', () => {
  it('keeps only the known fields, so an unexpected secret field never reaches the UI', () => {
    const raw = { ...credentialView(), secret: 'CANARY-unit-extra', value: 'CANARY-unit-value' };
    const view = backend.parseView('CredentialView', raw);
    expect(JSON.stringify(view)).not.toContain('CANARY');
    expect(view.name).toBe('github-api');
  });

  it('reads Go nil slices (null) as empty lists', async () => {
    const bridge = installBridge();
    bridge.VaultService.ListCredentials.mockResolvedValueOnce(null);
    expect(await backend.vaultListCredentials()).toEqual([]);
    expect(backend.parseView('CredentialView', { ...credentialView(), pathPrefixes: null }).pathPrefixes).toEqual([]);
  });

  it('refuses a view with an unknown format or approval', () => {
    expect(() => backend.parseView('CredentialView', { ...credentialView(), format: 'cookie' })).toThrow(ProtocolError);
    expect(() => backend.parseView('CredentialView', { ...credentialView(), approval: 'never' })).toThrow(ProtocolError);
  });
});

describe('vault:status events', () => {
  it('delivers parsed statuses until unsubscribed', () => {
    const bridge = installBridge();
    const seen: number[] = [];
    const off = backend.onVaultStatus((s) => seen.push(s.epoch));
    bridge.emit(vaultStatus({ epoch: 7 }));
    off();
    bridge.emit(vaultStatus({ epoch: 8 }));
    expect(seen).toEqual([7]);
    expect(bridge.listenerCount('vault:status')).toBe(0);
  });

  it('reports a malformed payload to onError and not as a status', () => {
    const bridge = installBridge();
    const onStatus = vi.fn();
    const onError = vi.fn();
    backend.onVaultStatus(onStatus, onError);
    bridge.emitRaw({ state: 'unlocked' });
    expect(onStatus).not.toHaveBeenCalled();
    expect(onError).toHaveBeenCalledWith(expect.any(ProtocolError));
  });
});

describe('waitForBackend', () => {
  afterEach(() => vi.useRealTimers());

  it('resolves once the bridge appears', async () => {
    vi.useFakeTimers();
    let done = false;
    const p = backend.waitForBackend(1000, 50).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(200);
    expect(done).toBe(false);
    installBridge();
    await vi.advanceTimersByTimeAsync(60);
    await p;
    expect(done).toBe(true);
  });

  it('gives up after the timeout', async () => {
    vi.useFakeTimers();
    const p = backend.waitForBackend(1000, 50);
    const check = expect(p).rejects.toBeInstanceOf(BackendUnavailableError);
    await vi.advanceTimersByTimeAsync(1100);
    await check;
  });
});
