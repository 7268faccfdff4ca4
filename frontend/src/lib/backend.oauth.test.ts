import { describe, expect, it } from 'vitest';
import * as backend from './backend';
import { BackendError, ProtocolError } from './backend';
import { installBridge } from '../test/fakeBridge';
import { authorization, flowView, installOAuth, operation } from '../test/fakeOAuth';

const CANARY = 'CANARY-oauth-unit';

function setup() {
  installBridge();
  return installOAuth({
    authorizations: [authorization(), authorization({ id: 'auth-2', state: 'suspended' })],
    operations: [operation()],
  });
}

describe('OAuthService wrappers', () => {
  const form = {
    name: 'n', provider: 'github' as const, tenant: '', issuer: '', authorizationEndpoint: '', tokenEndpoint: '',
    revocationEndpoint: '', introspectionEndpoint: '', deviceAuthorizationEndpoint: '', clientId: 'c',
    clientAuth: 'client_secret' as const, clientSecret: CANARY, clientKeyId: '', scopes: ['repo'],
    environment: 'production' as const, unattended: false, flow: 'authorization_code' as const, owner: 'o',
    backupRevoker: 'b', reviewBy: '', disableProcedure: '', dpop: false,
  };
  const inv = { owner: 'o', backupRevoker: 'b', reviewBy: '2027-01-01', disableProcedure: '' };
  const cases: { method: string; run: () => Promise<unknown>; args: unknown[] }[] = [
    { method: 'Presets', run: () => backend.oauthPresets(), args: [] },
    { method: 'Discover', run: () => backend.oauthDiscover('https://auth.example.com'), args: ['https://auth.example.com'] },
    { method: 'NewClientKey', run: () => backend.oauthNewClientKey(), args: [] },
    { method: 'Connect', run: () => backend.oauthConnect(form), args: [form] },
    { method: 'Reconnect', run: () => backend.oauthReconnect('auth-1'), args: ['auth-1'] },
    { method: 'Flow', run: () => backend.oauthFlow('flow-1'), args: ['flow-1'] },
    { method: 'CancelFlow', run: () => backend.oauthCancelFlow('flow-1'), args: ['flow-1'] },
    { method: 'Authorizations', run: () => backend.oauthAuthorizations(), args: [] },
    { method: 'UpdateInventory', run: () => backend.oauthUpdateInventory('auth-1', inv), args: ['auth-1', inv] },
    { method: 'Revoke', run: () => backend.oauthRevoke('auth-1'), args: ['auth-1'] },
    {
      method: 'SetEndpoints',
      run: () => backend.oauthSetEndpoints('auth-1', 'https://idp.example/revoke', 'http://127.0.0.1:4445/introspect'),
      args: ['auth-1', 'https://idp.example/revoke', 'http://127.0.0.1:4445/introspect'],
    },
    { method: 'Resume', run: () => backend.oauthResume('auth-2'), args: ['auth-2'] },
    { method: 'Operations', run: () => backend.oauthOperations(), args: [] },
    { method: 'SaveOperation', run: () => backend.oauthSaveOperation(operation()), args: [operation()] },
    { method: 'RemoveOperation', run: () => backend.oauthRemoveOperation('tracker.create_issue'), args: ['tracker.create_issue'] },
    { method: 'Settings', run: () => backend.oauthSettings(), args: [] },
    { method: 'SetBlockUncontrolled', run: () => backend.oauthSetBlockUncontrolled(true), args: [true] },
  ];
  for (const c of cases) {
    it(`calls OAuthService.${c.method} with its arguments`, async () => {
      const oauth = setup();
      await c.run();
      const fn = oauth.OAuthService[c.method as keyof typeof oauth.OAuthService];
      expect(fn).toHaveBeenCalledTimes(1);
      expect(fn).toHaveBeenCalledWith(...c.args);
    });
  }

  it('covers every bound method', () => {
    const oauth = setup();
    expect(cases.map((c) => c.method).sort()).toEqual(Object.keys(oauth.OAuthService).sort());
  });

  it('turns a rejection into a readable BackendError', async () => {
    const oauth = setup();
    oauth.OAuthService.Discover.mockRejectedValueOnce('the issuer https://auth.example.com did not answer');
    await expect(backend.oauthDiscover('https://auth.example.com')).rejects.toThrow(
      new BackendError('the issuer https://auth.example.com did not answer'),
    );
  });
});

describe('OAuth parsers', () => {
  it('copy only known authorization fields, and read Go nil slices as empty', async () => {
    const oauth = setup();
    oauth.OAuthService.Authorizations.mockResolvedValueOnce([
      { ...authorization(), scopes: null, operations: null, problems: null, refreshToken: CANARY },
    ]);
    const [a] = await backend.oauthAuthorizations();
    expect(a.scopes).toEqual([]);
    expect(a.problems).toEqual([]);
    expect(JSON.stringify(a)).not.toContain(CANARY);
    expect(Object.keys(a).sort()).toEqual(Object.keys(authorization()).sort());
  });

  it('reads a nil list as empty', async () => {
    const oauth = setup();
    oauth.OAuthService.Operations.mockResolvedValueOnce(null);
    expect(await backend.oauthOperations()).toEqual([]);
  });

  const bad: { name: string; run: () => unknown }[] = [
    { name: 'an unknown authorization state', run: () => backend.parseView('AuthorizationView', authorization({ state: 'paused' as never })) },
    { name: 'an unknown revocation state', run: () => backend.parseView('AuthorizationView', authorization({ revocation: 'maybe' as never })) },
    { name: 'a missing controlled flag', run: () => backend.parseView('AuthorizationView', { ...authorization(), controlled: undefined }) },
    { name: 'an unknown flow state', run: () => backend.parseView('FlowView', flowView({ state: 'done' as never })) },
    { name: 'an unknown grant', run: () => backend.parseView('FlowView', flowView({ flow: 'password' as never })) },
    { name: 'an unknown method', run: () => backend.parseView('OperationView', operation({ method: 'TRACE' as never })) },
    { name: 'an unknown parameter type', run: () => backend.parseView('OperationView', operation({ params: [{ name: 'p', type: 'float' as never, allowed: [], pattern: '', required: true }] })) },
    { name: 'an unknown revoke step', run: () => backend.parseView('RevokeReport', { authorizationId: 'a', retryPending: false, steps: [{ step: 'shred', ok: true, detail: '', at: '' }] }) },
    { name: 'a client key without its JWKS', run: () => backend.parseView('ClientKeyView', { keyId: 'k', publicJwk: '{}' }) },
  ];
  for (const c of bad) {
    it(`refuse ${c.name}`, () => expect(c.run).toThrow(ProtocolError));
  }

  it('pass a flow update to the listener and an unreadable one to onError', () => {
    const oauth = setup();
    const got: unknown[] = [];
    const errors: unknown[] = [];
    const off = backend.onOAuthFlow((f) => got.push(f.flowId), (e) => errors.push(e));
    oauth.flow(flowView({ flowId: 'f-2' }));
    oauth.flow({ flowId: 'f-3' } as never);
    expect(got).toEqual(['f-2']);
    expect(errors[0]).toBeInstanceOf(ProtocolError);
    off();
    expect(oauth.listenerCount('oauth:flow')).toBe(0);
  });
});

describe('openExternal', () => {
  it('opens https addresses in the system browser and nothing else', () => {
    const oauth = setup();
    backend.openExternal('https://github.com/login/device');
    expect(oauth.runtime.BrowserOpenURL).toHaveBeenCalledWith('https://github.com/login/device');
    expect(() => backend.openExternal('javascript:alert(1)')).toThrow(BackendError);
    expect(() => backend.openExternal('file:///etc/passwd')).toThrow(BackendError);
    expect(oauth.runtime.BrowserOpenURL).toHaveBeenCalledTimes(1);
  });
});
