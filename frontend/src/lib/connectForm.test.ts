import { describe, expect, it } from 'vitest';
import {
  applyDiscovery,
  CUSTOM_PROVIDER,
  emptyConnect,
  offersDevice,
  reconnectReason,
  splitScopes,
  validateConnect,
} from './connectForm';
import { discovery, preset } from '../test/fakeOAuth';

const github = preset();

// A public client unless a case says otherwise.
function complete(over: Partial<ReturnType<typeof emptyConnect>> = {}) {
  return {
    ...emptyConnect(github),
    clientAuth: 'none' as const,
    name: 'tracker',
    clientId: 'Iv1.abc',
    environment: 'staging' as const,
    owner: 'ana',
    backupRevoker: 'ops',
    ...over,
  };
}

describe('splitScopes', () => {
  it('splits on spaces and commas, once each', () => {
    expect(splitScopes(' repo  read:org,repo\nworkflow ')).toEqual(['repo', 'read:org', 'workflow']);
    expect(splitScopes('')).toEqual([]);
  });
});

describe('emptyConnect', () => {
  it('prefills the preset scopes and the authorization code flow, and no environment', () => {
    const d = emptyConnect(github);
    expect(d.scopes).toBe('repo read:org');
    expect(d.flow).toBe('authorization_code');
    expect(d.environment).toBe('');
    expect(d.unattended).toBe(false);
    expect(emptyConnect().provider).toBe(CUSTOM_PROVIDER);
  });
  it('starts with the client authentication the provider’s steps ask for', () => {
    expect(emptyConnect(github).clientAuth).toBe('client_secret');
    expect(emptyConnect(preset({ id: 'microsoft' })).clientAuth).toBe('none');
    expect(emptyConnect().clientAuth).toBe('none');
  });
});

describe('validateConnect', () => {
  it('builds the form of a preset, with endpoints and unused secrets empty', () => {
    const { errors, form } = validateConnect(
      complete({ clientSecret: 'left over', clientKeyId: 'k', authorizationEndpoint: 'https://x', tenant: 't', dpop: true }),
      github,
    );
    expect(errors).toEqual({});
    expect(form).toMatchObject({
      provider: 'github',
      tenant: '',
      authorizationEndpoint: '',
      clientAuth: 'none',
      clientSecret: '',
      clientKeyId: '',
      scopes: ['repo', 'read:org'],
      environment: 'staging',
      dpop: false,
    });
  });

  const cases: { name: string; over: Partial<ReturnType<typeof emptyConnect>>; field: string; want: string }[] = [
    { name: 'no environment', over: { environment: '' }, field: 'environment', want: 'environment' },
    { name: 'no owner', over: { owner: ' ' }, field: 'owner', want: 'owns' },
    { name: 'no backup revoker', over: { backupRevoker: '' }, field: 'backupRevoker', want: 'revoke' },
    { name: 'no client id', over: { clientId: '' }, field: 'clientId', want: 'client ID' },
    { name: 'a missing client secret', over: { clientAuth: 'client_secret' }, field: 'clientSecret', want: 'Paste' },
    { name: 'a secret with a line break', over: { clientAuth: 'client_secret', clientSecret: 'a\nb' }, field: 'clientSecret', want: 'line break' },
    { name: 'a key not generated', over: { clientAuth: 'private_key_jwt' }, field: 'clientKeyId', want: 'Generate' },
    { name: 'client credentials without client auth', over: { flow: 'client_credentials' }, field: 'clientAuth', want: 'secret or a key' },
    { name: 'a bad review date', over: { reviewBy: '31/01/2027' }, field: 'reviewBy', want: 'YYYY-MM-DD' },
  ];
  for (const c of cases) {
    it(`refuses ${c.name}`, () => {
      const { errors } = validateConnect(complete(c.over), github);
      expect((errors as Record<string, string>)[c.field]).toContain(c.want);
    });
  }

  it('refuses the device flow when the preset has none', () => {
    const noDevice = preset({ hasDevice: false });
    expect(validateConnect(complete({ flow: 'device_code' }), noDevice).errors.flow).toContain('no device flow');
    expect(validateConnect(complete({ flow: 'device_code' }), github).errors.flow).toBeUndefined();
  });

  it('asks a custom provider for https endpoints', () => {
    const d = complete({ provider: CUSTOM_PROVIDER, issuer: 'http://auth.example.com' });
    const { errors } = validateConnect(d, undefined);
    expect(errors.issuer).toContain('https');
    expect(errors.tokenEndpoint).toContain('token endpoint');
    expect(errors.authorizationEndpoint).toContain('authorization endpoint');
    const withCreds = validateConnect(
      complete({
        provider: CUSTOM_PROVIDER,
        tokenEndpoint: 'https://user:pw@auth.example.com/token',
        flow: 'client_credentials',
        clientAuth: 'client_secret',
        clientSecret: 's',
      }),
      undefined,
    );
    expect(withCreds.errors.tokenEndpoint).toContain('user name or password');
    expect(withCreds.errors.authorizationEndpoint).toBeUndefined();
  });

  it('accepts plain http only for a provider on this computer, as the backend does', () => {
    const custom = (url: string) =>
      validateConnect(
        complete({
          provider: CUSTOM_PROVIDER,
          issuer: url,
          tokenEndpoint: `${url}/oauth2/token`,
          introspectionEndpoint: `${url}/admin/oauth2/introspect`,
          flow: 'client_credentials',
          clientAuth: 'client_secret',
          clientSecret: 's',
        }),
        undefined,
      ).errors;
    for (const local of ['http://127.0.0.1:4444', 'http://127.1.2.3', 'http://localhost:8080', 'http://LOCALHOST', 'http://[::1]:4444']) {
      expect(custom(local), local).toEqual({});
    }
    for (const remote of ['http://auth.example.com', 'http://128.0.0.1', 'http://127.0.0.1.example.com', 'http://[::2]', 'ftp://127.0.0.1']) {
      const errors = custom(remote);
      expect(errors.issuer, remote).toContain('https');
      expect(errors.tokenEndpoint, remote).toContain('https');
      expect(errors.introspectionEndpoint, remote).toContain('https');
    }
  });

  it('sends a custom provider its discovered endpoints and DPoP', () => {
    const d = applyDiscovery(complete({ provider: CUSTOM_PROVIDER, issuer: 'https://auth.example.com', dpop: true }), discovery());
    const { errors, form } = validateConnect(d, undefined);
    expect(errors).toEqual({});
    expect(form).toMatchObject({ provider: 'custom', tokenEndpoint: 'https://auth.example.com/token', dpop: true });
  });
});

describe('applyDiscovery', () => {
  it('replaces every endpoint and drops DPoP and the device flow the issuer does not offer', () => {
    const d = complete({ provider: CUSTOM_PROVIDER, revocationEndpoint: 'https://old/revoke', dpop: true, flow: 'device_code' });
    const next = applyDiscovery(d, discovery({ revocationEndpoint: '', deviceAuthorizationEndpoint: '', dpop: false }));
    expect(next.revocationEndpoint).toBe('');
    expect(next.tokenEndpoint).toBe('https://auth.example.com/token');
    expect(next.dpop).toBe(false);
    expect(next.flow).toBe('authorization_code');
    expect(offersDevice(next, undefined)).toBe(false);
  });
});

describe('reconnectReason', () => {
  it('explains each reason Yett records, and falls back for others', () => {
    expect(reconnectReason('invalid_grant')).toContain('invalid_grant');
    expect(reconnectReason('response_lost')).toContain('does not resend');
    expect(reconnectReason('vault_reset')).toContain('vault was reset');
    expect(reconnectReason('something_new')).toBe('The provider no longer accepts this authorization.');
  });
});
