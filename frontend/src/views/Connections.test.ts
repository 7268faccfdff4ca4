import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';
import { authorization, flowView, installOAuth, operation } from '../test/fakeOAuth';
import { installInventory } from '../test/fakeInventory';

const CANARY = 'CANARY-oauth-' + Math.random().toString(36).slice(2);

type Initial = Parameters<typeof installOAuth>[0];

async function openConnections(initial: Initial = {}) {
  installBridge(vaultStatus({ state: 'unlocked', epoch: 3 }));
  const oauth = installOAuth(initial);
  render(App);
  await fireEvent.click(await screen.findByTestId('nav-connections'));
  await screen.findByTestId('view-connections');
  await waitFor(() => expect(oauth.OAuthService.Authorizations).toHaveBeenCalled());
  return oauth;
}

async function fill(values: Record<string, string>) {
  for (const [id, value] of Object.entries(values)) {
    const el = screen.getByTestId(id) as HTMLInputElement;
    if (el.tagName === 'SELECT') await fireEvent.change(el, { target: { value } });
    else await fireEvent.input(el, { target: { value } });
  }
}

function input(id: string) {
  return screen.getByTestId(id) as HTMLInputElement;
}

describe('authorization inventory', () => {
  it('lists each authorization with its inventory, and nothing that looks like a token', async () => {
    await openConnections({
      authorizations: [
        // A backend bug adding a token field must still not reach the page.
        { ...authorization({ operations: ['tracker.create_issue'], scopes: ['repo', 'read:org'] }), accessToken: CANARY } as never,
      ],
    });
    const row = await screen.findByTestId('authorization-row');
    const r = within(row);
    expect(r.getByTestId('authorization-name').textContent).toBe('tracker (production)');
    expect(r.getByTestId('authorization-host').textContent).toBe('github.com');
    expect(r.getByTestId('authorization-account').textContent).toBe('ana@example.com');
    expect(r.getByTestId('authorization-environment').textContent).toBe('production');
    expect(r.getByTestId('authorization-scopes').textContent).toContain('read:org');
    expect(r.getByTestId('authorization-owner').textContent).toBe('ana@example.com');
    expect(r.getByTestId('authorization-backup').textContent).toBe('ops@example.com');
    expect(r.getByTestId('authorization-operations').textContent).toContain('tracker.create_issue');
    expect(r.getByTestId('authorization-state').textContent).toBe('Active');
    expect(row.textContent).toContain('authorization code + PKCE');
    expect(r.queryByTestId('authorization-uncontrolled')).toBeNull();
    expect(r.queryByTestId('inventory-form')).toBeNull();
    expect(document.body.innerHTML).not.toContain(CANARY);
  });

  it('says when nothing is connected', async () => {
    await openConnections();
    await screen.findByTestId('authorizations-empty');
  });

  it('flags a row not under control and fixes it through UpdateInventory', async () => {
    const oauth = await openConnections({
      authorizations: [
        authorization({
          id: 'auth-9',
          backupRevoker: '',
          reviewBy: '',
          controlled: false,
          problems: ['no backup revoker', 'no review date'],
        }),
      ],
    });
    const row = await screen.findByTestId('authorization-row');
    const flag = within(row).getByTestId('authorization-uncontrolled');
    expect(flag.textContent).toContain('Not under control');
    expect(within(flag).getByTestId('authorization-problems').textContent).toContain('no backup revoker');
    expect(flag.textContent).toContain('no review date');
    expect(screen.getByTestId('uncontrolled-summary').textContent).toContain('One authorization is');
    expect(input('inv-owner').value).toBe('ana@example.com');

    await fill({ 'inv-backup': '  ops@example.com ', 'inv-review': '2027-03-01', 'inv-disable': 'Revoke in Yett.' });
    await fireEvent.submit(screen.getByTestId('inventory-form'));
    await waitFor(() => expect(oauth.OAuthService.UpdateInventory).toHaveBeenCalledTimes(1));
    expect(oauth.OAuthService.UpdateInventory).toHaveBeenCalledWith('auth-9', {
      owner: 'ana@example.com',
      backupRevoker: 'ops@example.com',
      reviewBy: '2027-03-01',
      disableProcedure: 'Revoke in Yett.',
    });
    await waitFor(() => expect(screen.queryByTestId('authorization-uncontrolled')).toBeNull());
    expect(screen.queryByTestId('uncontrolled-summary')).toBeNull();
  });

  it('refuses an inventory without a backup revoker', async () => {
    const oauth = await openConnections({
      authorizations: [authorization({ backupRevoker: '', controlled: false, problems: ['no backup revoker'] })],
    });
    await fireEvent.submit(await screen.findByTestId('inventory-form'));
    expect(screen.getByTestId('inventory-error').textContent).toContain('backup revoker');
    expect(oauth.OAuthService.UpdateInventory).not.toHaveBeenCalled();
  });

  it('shows needs-reconnection with Reconnect, and a pending revocation', async () => {
    const oauth = await openConnections({
      authorizations: [
        authorization({ id: 'auth-r', state: 'needs_reconnection' }),
        authorization({ id: 'auth-p', name: 'old', state: 'disabled', revocation: 'pending' }),
      ],
    });
    const [first, second] = await screen.findAllByTestId('authorization-row');
    expect(within(first).getByTestId('authorization-state').textContent).toBe('Needs reconnection');
    expect(within(second).getByTestId('authorization-state').textContent).toBe('Disabled');
    expect(within(second).getByTestId('authorization-revocation').textContent).toBe('Revocation pending');
    expect(within(second).getByTestId('authorization-revocation-note').textContent).toContain('Yett retries');
    expect(within(second).queryByTestId('reconnect')).toBeNull();

    await fireEvent.click(within(first).getByTestId('reconnect'));
    expect(oauth.OAuthService.Reconnect).toHaveBeenCalledWith('auth-r');
    expect((await screen.findByTestId('flow-panel')).textContent).toContain('Finish signing in in your browser');
  });

  it('revokes only after a confirmation that says what happens in order, then shows the report', async () => {
    const oauth = await openConnections({ authorizations: [authorization({ id: 'auth-x' })] });
    await fireEvent.click(await screen.findByTestId('revoke'));
    const confirm = screen.getByTestId('revoke-confirm');
    const steps = [...confirm.querySelectorAll('ol > li')].map((li) => li.textContent ?? '');
    expect(steps).toHaveLength(3);
    expect(steps[0]).toContain('Disabled in Yett now');
    expect(steps[0]).toContain('refresh token is deleted');
    expect(steps[0]).toContain('cached access tokens are dropped');
    expect(steps[0]).toContain('sessions');
    expect(steps[0]).toContain('operations are refused');
    expect(steps[1]).toContain('Revoked at the provider');
    expect(steps[2]).toContain('Verified');

    await fireEvent.click(screen.getByTestId('revoke-cancel'));
    expect(oauth.OAuthService.Revoke).not.toHaveBeenCalled();

    await fireEvent.click(screen.getByTestId('revoke'));
    await fireEvent.click(screen.getByTestId('revoke-confirm-button'));
    expect(oauth.OAuthService.Revoke).toHaveBeenCalledWith('auth-x');
    const report = await screen.findByTestId('revoke-report');
    const rows = within(report).getAllByTestId('revoke-step');
    expect(rows.map((r) => r.dataset.step)).toEqual(['local_disable', 'provider_revocation', 'verification']);
    expect(rows[0].textContent).toContain('done');
    expect(rows[0].textContent).toContain('refresh token deleted');
    expect(rows[2].textContent).toContain('failed');
    expect(rows[2].textContent).toContain('introspection endpoint unreachable');
    await waitFor(() => expect(screen.getByTestId('authorization-state').textContent).toBe('Revoked'));
    expect(screen.getByTestId('revoke-report')).toBeTruthy();
  });

  it('reports each token of an authorization with a refresh token: the steps repeat per token', async () => {
    const oauth = await openConnections({ authorizations: [authorization()] });
    // backend/oauth revokes and verifies the refresh token, then the access token.
    oauth.OAuthService.Revoke.mockResolvedValueOnce({
      authorizationId: 'auth-1',
      steps: [
        { step: 'local_disable', ok: true, detail: 'disabled', at: '' , unverified: false },
        { step: 'provider_revocation', ok: true, detail: 'revoked the refresh token', at: '' , unverified: false },
        { step: 'verification', ok: true, detail: 'introspection reports the refresh token inactive', at: '' , unverified: false },
        { step: 'provider_revocation', ok: true, detail: 'revoked the access token', at: '' , unverified: false },
        { step: 'verification', ok: false, detail: 'the provider still reports the access token active', at: '' , unverified: false },
      ],
      retryPending: false,
    });
    await fireEvent.click(await screen.findByTestId('revoke'));
    await fireEvent.click(screen.getByTestId('revoke-confirm-button'));
    const rows = within(await screen.findByTestId('revoke-report')).getAllByTestId('revoke-step');
    expect(rows.map((r) => `${r.dataset.step}:${r.dataset.ok}`)).toEqual([
      'local_disable:true',
      'provider_revocation:true',
      'verification:true',
      'provider_revocation:true',
      'verification:false',
    ]);
    expect(rows[2].textContent).toContain('refresh token inactive');
    expect(rows[4].textContent).toContain('access token active');
  });

  it('says when the provider could not be reached and Yett retries', async () => {
    const oauth = await openConnections({ authorizations: [authorization()] });
    oauth.OAuthService.Revoke.mockResolvedValueOnce({
      authorizationId: 'auth-1',
      steps: [
        { step: 'local_disable', ok: true, detail: '', at: '' , unverified: false },
        { step: 'provider_revocation', ok: false, detail: 'github.com did not answer', at: '' , unverified: false },
      ],
      retryPending: true,
    });
    await fireEvent.click(await screen.findByTestId('revoke'));
    await fireEvent.click(screen.getByTestId('revoke-confirm-button'));
    expect((await screen.findByTestId('revoke-retry')).textContent).toContain('keeps retrying');
  });
});

/** Opens the connect form on GitHub. */
async function startConnect(initial: Initial = {}) {
  const oauth = await openConnections(initial);
  await fireEvent.click(screen.getByTestId('connect-start'));
  await screen.findByTestId('connect-form');
  await waitFor(() => expect(screen.getAllByRole('option').length).toBeGreaterThan(2));
  await fill({ 'oc-provider': 'github' });
  return oauth;
}

/** What every provider's form needs but its client authentication. */
const basics = {
  'oc-name': 'tracker (production)',
  'oc-client-id': 'Iv1.abc',
  'oc-environment': 'production',
  'oc-owner': 'ana@example.com',
  'oc-backup': 'ops@example.com',
};

describe('connect', () => {
  // GitHub refuses a client without its secret: its form starts with one.
  const github = { ...basics, 'oc-secret': CANARY };

  it('shows what is missing and sends nothing', async () => {
    const oauth = await startConnect();
    await fill({ 'oc-name': '' });
    await fireEvent.submit(screen.getByTestId('connect-form'));
    const form = screen.getByTestId('connect-form');
    expect(screen.getByTestId('connect-error-name')).toBeTruthy();
    expect(screen.getByTestId('connect-error-clientId')).toBeTruthy();
    expect(screen.getByTestId('connect-error-environment').textContent).toContain('environment');
    expect(screen.getByTestId('connect-error-owner')).toBeTruthy();
    expect(screen.getByTestId('connect-error-backupRevoker')).toBeTruthy();
    expect(form.textContent).toContain('never shared');
    expect(oauth.OAuthService.Connect).not.toHaveBeenCalled();
  });

  it('never offers the password grant', async () => {
    await startConnect();
    const flows = [...document.querySelectorAll('input[name="oc-flow"]')].map((i) => (i as HTMLInputElement).value);
    expect(flows).toEqual(['authorization_code', 'client_credentials', 'device_code']);
    expect(screen.getByTestId('connect-form').textContent?.toLowerCase()).not.toContain('password grant');
  });

  it('connects with a preset by authorization code and shows the sign-in address', async () => {
    const oauth = await startConnect();
    expect(input('oc-scopes').value).toBe('repo read:org');
    expect((input('oc-flow-code') as HTMLInputElement).checked).toBe(true);
    expect(input('oc-api-hosts').placeholder).toBe('api.github.com');
    expect(screen.getByTestId('oc-api-hosts-help').textContent).toContain('api.github.com');
    await fill({
      ...github,
      'oc-scopes': 'repo  read:org, workflow',
      'oc-review': '2027-01-31',
      'oc-api-hosts': 'api.github.com, uploads.github.com',
    });
    await fireEvent.submit(screen.getByTestId('connect-form'));
    await waitFor(() => expect(oauth.OAuthService.Connect).toHaveBeenCalledTimes(1));
    expect(oauth.OAuthService.Connect).toHaveBeenCalledWith({
      apiHosts: ['api.github.com', 'uploads.github.com'],
      name: 'tracker (production)',
      provider: 'github',
      tenant: '',
      issuer: '',
      authorizationEndpoint: '',
      tokenEndpoint: '',
      revocationEndpoint: '',
      introspectionEndpoint: '',
      deviceAuthorizationEndpoint: '',
      clientId: 'Iv1.abc',
      clientAuth: 'client_secret',
      clientSecret: CANARY,
      clientKeyId: '',
      scopes: ['repo', 'read:org', 'workflow'],
      environment: 'production',
      unattended: false,
      flow: 'authorization_code',
      owner: 'ana@example.com',
      backupRevoker: 'ops@example.com',
      reviewBy: '2027-01-31',
      disableProcedure: '',
      dpop: false,
    });

    const panel = await screen.findByTestId('flow-panel');
    expect(panel.textContent).toContain('Finish signing in in your browser');
    const url = oauth.state.nextFlow.authorizationUrl;
    expect(input('flow-auth-url').value).toBe(url);
    expect(screen.queryByTestId('connect-form')).toBeNull();
    expect(document.body.innerHTML).not.toContain(CANARY);

    await fireEvent.click(screen.getByTestId('flow-open-again'));
    expect(oauth.runtime.BrowserOpenURL).toHaveBeenCalledWith(url);
    await fireEvent.click(screen.getByTestId('flow-copy-url'));
    expect(oauth.runtime.ClipboardSetText).toHaveBeenCalledWith(url);

    await fireEvent.click(screen.getByTestId('flow-cancel'));
    expect(oauth.OAuthService.CancelFlow).toHaveBeenCalledWith('flow-1');
    await waitFor(() => expect(screen.queryByTestId('flow-panel')).toBeNull());
  });

  it('connects by device code and shows the user code, the address and the expiry', async () => {
    const oauth = await startConnect();
    oauth.state.nextFlow = flowView({
      flowId: 'flow-d',
      flow: 'device_code',
      authorizationUrl: '',
      userCode: 'WDJB-MJHT',
      verificationUri: 'https://github.com/login/device',
      verificationUriComplete: '',
      expiresAt: new Date(Date.now() + 15 * 60_000).toISOString(),
    });
    await fill(github);
    await fireEvent.click(screen.getByTestId('oc-flow-device'));
    await fireEvent.submit(screen.getByTestId('connect-form'));
    await waitFor(() => expect(oauth.OAuthService.Connect).toHaveBeenCalledTimes(1));
    expect(oauth.OAuthService.Connect.mock.calls[0][0]).toMatchObject({ flow: 'device_code', clientAuth: 'client_secret', environment: 'production' });

    expect((await screen.findByTestId('flow-user-code')).textContent).toBe('WDJB-MJHT');
    expect(screen.getByTestId('flow-verification-uri').textContent).toBe('https://github.com/login/device');
    expect(screen.getByTestId('flow-expiry').textContent).toMatch(/Code expires in 1[45]m/);
    await fireEvent.click(screen.getByTestId('flow-open-verification'));
    expect(oauth.runtime.BrowserOpenURL).toHaveBeenCalledWith('https://github.com/login/device');
    await fireEvent.click(screen.getByTestId('flow-copy-code'));
    expect(oauth.runtime.ClipboardSetText).toHaveBeenCalledWith('WDJB-MJHT');
  });

  it('returns to the list when the flow event says connected', async () => {
    const oauth = await startConnect();
    await fill(github);
    await fireEvent.submit(screen.getByTestId('connect-form'));
    await screen.findByTestId('flow-panel');
    expect(oauth.listenerCount('oauth:flow')).toBe(1);
    const before = oauth.OAuthService.Authorizations.mock.calls.length;
    oauth.state.authorizations.push(authorization({ id: 'auth-new', name: 'fresh' }));

    // An update for another flow is not this one.
    oauth.flow(flowView({ flowId: 'other', state: 'connected' }));
    expect(screen.getByTestId('flow-panel')).toBeTruthy();

    oauth.flow(flowView({ state: 'connected', authorizationId: 'auth-new' }));
    await waitFor(() => expect(screen.queryByTestId('flow-panel')).toBeNull());
    expect(screen.getByTestId('connections-notice').textContent).toContain('Connected');
    expect(await screen.findByText('fresh')).toBeTruthy();
    expect(oauth.OAuthService.Authorizations.mock.calls.length).toBeGreaterThan(before);
    expect(oauth.listenerCount('oauth:flow')).toBe(0);
  });

  it('polls the flow every 2 s when no event comes, and shows why it failed', async () => {
    const oauth = await startConnect();
    await fill(github);
    // Only intervals are faked, so the DOM queries' own timeouts still run.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      await fireEvent.submit(screen.getByTestId('connect-form'));
      await screen.findByTestId('flow-panel');
      oauth.state.nextFlow = flowView({ state: 'failed', error: 'The provider refused: access_denied.' });
      await vi.advanceTimersByTimeAsync(1900);
      expect(oauth.OAuthService.Flow).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(200);
      expect(oauth.OAuthService.Flow).toHaveBeenCalledWith('flow-1');
    } finally {
      vi.useRealTimers();
    }
    const failure = await screen.findByTestId('flow-failure');
    expect(failure.textContent).toContain('The connection failed.');
    expect(failure.textContent).toContain('access_denied');
    await fireEvent.click(screen.getByTestId('flow-close'));
    expect(screen.queryByTestId('flow-panel')).toBeNull();
  });

  it('shows an expired flow', async () => {
    const oauth = await startConnect();
    await fill(github);
    await fireEvent.submit(screen.getByTestId('connect-form'));
    await screen.findByTestId('flow-panel');
    oauth.flow(flowView({ state: 'expired', error: '' }));
    expect((await screen.findByTestId('flow-failure')).textContent).toContain('expired');
  });

  it('warns about unattended access only when it is chosen, and sends it', async () => {
    const oauth = await startConnect();
    expect(screen.queryByTestId('oc-unattended-warning')).toBeNull();
    await fireEvent.click(screen.getByTestId('oc-unattended'));
    const warning = screen.getByTestId('oc-unattended-warning');
    expect(warning.textContent).toContain('long-lived refresh token');
    expect(warning.textContent).toContain('without a person present');
    await fill(github);
    await fireEvent.submit(screen.getByTestId('connect-form'));
    await waitFor(() => expect(oauth.OAuthService.Connect).toHaveBeenCalledTimes(1));
    expect(oauth.OAuthService.Connect.mock.calls[0][0].unattended).toBe(true);
  });

  it('asks for the tenant when the preset has one and prefills its scopes', async () => {
    const oauth = await startConnect();
    expect(screen.queryByTestId('oc-tenant')).toBeNull();
    await fill({ 'oc-provider': 'microsoft' });
    expect(input('oc-scopes').value).toBe('offline_access User.Read');
    await fill(basics);
    await fireEvent.submit(screen.getByTestId('connect-form'));
    expect(screen.getByTestId('connect-error-tenant')).toBeTruthy();
    expect(oauth.OAuthService.Connect).not.toHaveBeenCalled();
    await fill({ 'oc-tenant': 'contoso.onmicrosoft.com' });
    await fireEvent.submit(screen.getByTestId('connect-form'));
    await waitFor(() => expect(oauth.OAuthService.Connect).toHaveBeenCalledTimes(1));
    expect(oauth.OAuthService.Connect.mock.calls[0][0]).toMatchObject({
      provider: 'microsoft',
      tenant: 'contoso.onmicrosoft.com',
      scopes: ['offline_access', 'User.Read'],
    });
  });

  it('sends a client secret write-only, and client credentials need one', async () => {
    const oauth = await startConnect();
    await fill(basics);
    await fireEvent.click(screen.getByTestId('oc-flow-client'));
    await fireEvent.click(screen.getByTestId('oc-auth-none'));
    await fireEvent.submit(screen.getByTestId('connect-form'));
    expect(screen.getByTestId('connect-error-clientAuth')).toBeTruthy();
    await fireEvent.click(screen.getByTestId('oc-auth-secret'));
    expect(input('oc-secret').type).toBe('password');
    await fill({ 'oc-secret': CANARY });
    oauth.state.nextFlow = flowView({ flow: 'client_credentials', state: 'connected', authorizationUrl: '' });
    await fireEvent.submit(screen.getByTestId('connect-form'));
    await waitFor(() => expect(oauth.OAuthService.Connect).toHaveBeenCalledTimes(1));
    expect(oauth.OAuthService.Connect.mock.calls[0][0]).toMatchObject({
      flow: 'client_credentials',
      clientAuth: 'client_secret',
      clientSecret: CANARY,
    });
    // Client credentials connect at once: straight back to the list.
    expect((await screen.findByTestId('connections-notice')).textContent).toContain('Connected');
    expect(screen.queryByTestId('flow-panel')).toBeNull();
    expect(document.body.innerHTML).not.toContain(CANARY);
  });

  it('fills the endpoints of another provider from discovery, with a generated client key and DPoP', async () => {
    const oauth = await startConnect();
    await fill({ 'oc-provider': 'custom' });
    expect(input('oc-scopes').value).toBe('');
    expect(screen.queryByTestId('oc-dpop')).toBeNull();
    await fill({ 'oc-issuer': 'https://auth.example.com' });
    await fireEvent.click(screen.getByTestId('oc-discover'));
    expect(oauth.OAuthService.Discover).toHaveBeenCalledWith('https://auth.example.com');
    await waitFor(() => expect(input('oc-tokenEndpoint').value).toBe('https://auth.example.com/token'));
    expect(input('oc-authorizationEndpoint').value).toBe('https://auth.example.com/authorize');
    expect(input('oc-revocationEndpoint').value).toBe('https://auth.example.com/revoke');
    expect(input('oc-deviceAuthorizationEndpoint').value).toBe('https://auth.example.com/device');
    expect(screen.getByTestId('oc-discovered').textContent).toContain('issues.write');

    await fireEvent.click(screen.getByTestId('oc-auth-key'));
    await fireEvent.click(screen.getByTestId('oc-generate-key'));
    expect(oauth.OAuthService.NewClientKey).toHaveBeenCalledTimes(1);
    expect((await screen.findByTestId('oc-jwks') as HTMLTextAreaElement).value).toContain('"kid":"key-7"');
    await fireEvent.click(screen.getByTestId('oc-copy-jwks'));
    expect(oauth.runtime.ClipboardSetText).toHaveBeenCalledWith('{"keys":[{"kty":"EC","crv":"P-256","kid":"key-7"}]}');

    await fireEvent.click(screen.getByTestId('oc-dpop'));
    await fill({ ...basics, 'oc-scopes': 'issues.write' });
    await fireEvent.submit(screen.getByTestId('connect-form'));
    await waitFor(() => expect(oauth.OAuthService.Connect).toHaveBeenCalledTimes(1));
    expect(oauth.OAuthService.Connect.mock.calls[0][0]).toMatchObject({
      provider: 'custom',
      issuer: 'https://auth.example.com',
      authorizationEndpoint: 'https://auth.example.com/authorize',
      tokenEndpoint: 'https://auth.example.com/token',
      revocationEndpoint: 'https://auth.example.com/revoke',
      introspectionEndpoint: 'https://auth.example.com/introspect',
      deviceAuthorizationEndpoint: 'https://auth.example.com/device',
      clientAuth: 'private_key_jwt',
      clientSecret: '',
      clientKeyId: 'key-7',
      scopes: ['issues.write'],
      dpop: true,
    });
  });

  it('refuses manual endpoints that are not https', async () => {
    const oauth = await startConnect();
    await fill({ 'oc-provider': 'custom' });
    await fill({ ...basics, 'oc-authorizationEndpoint': 'http://auth.example.com/authorize', 'oc-tokenEndpoint': 'https://auth.example.com/token' });
    await fireEvent.submit(screen.getByTestId('connect-form'));
    expect(screen.getByTestId('connect-error-authorizationEndpoint').textContent).toContain('https');
    expect(oauth.OAuthService.Connect).not.toHaveBeenCalled();
  });

  it('shows a backend refusal and keeps the form', async () => {
    const oauth = await startConnect();
    oauth.OAuthService.Connect.mockRejectedValueOnce('an authorization for production already exists for this account');
    await fill(github);
    await fireEvent.submit(screen.getByTestId('connect-form'));
    expect((await screen.findByTestId('connect-form-error')).textContent).toContain('already exists');
    expect(input('oc-name').value).toBe('tracker (production)');
  });
});

describe('named operations', () => {
  it('lists operations with their authorization, request, parameters and approval, and removes one', async () => {
    const oauth = await openConnections({
      authorizations: [authorization()],
      operations: [
        operation(),
        operation({ name: 'tracker.list', method: 'GET', urlTemplate: 'https://api.example.com/issues', params: [], approval: 'session' }),
      ],
    });
    const rows = await screen.findAllByTestId('operation-row');
    const r = within(rows[0]);
    expect(r.getByTestId('operation-name').textContent).toBe('tracker.create_issue');
    expect(r.getByTestId('operation-request').textContent).toBe('POST https://api.example.com/projects/{project}/issues');
    expect(r.getByTestId('operation-authorization').textContent).toContain('tracker (production)');
    expect(r.getByTestId('operation-params').textContent).toContain('alpha');
    expect(r.getByTestId('operation-params').textContent).toContain('beta');
    expect(r.getByTestId('operation-approval').textContent).toBe('Approve every call');
    expect(within(rows[1]).getByTestId('operation-approval').textContent).toBe('Approve per session');

    await fireEvent.click(r.getByTestId('operation-remove'));
    await fireEvent.click(r.getByTestId('operation-remove-confirm'));
    expect(oauth.OAuthService.RemoveOperation).toHaveBeenCalledWith('tracker.create_issue');
    await waitFor(() => expect(screen.getAllByTestId('operation-row')).toHaveLength(1));
  });

  it('saves an operation the person marks as only reading, and the list says so', async () => {
    const oauth = await openConnections({ authorizations: [authorization()] });
    await screen.findByTestId('authorization-row');
    await fill({
      'op-name': 'tracker.list_issues',
      'op-auth': 'auth-1',
      'op-method': 'GET',
      'op-url': 'https://api.example.com/issues',
    });
    const box = input('op-read-only');
    expect(box.checked).toBe(false);
    await fireEvent.click(box);
    await fireEvent.submit(screen.getByTestId('operation-form'));
    await waitFor(() => expect(oauth.OAuthService.SaveOperation).toHaveBeenCalledTimes(1));
    expect(oauth.OAuthService.SaveOperation).toHaveBeenCalledWith(expect.objectContaining({ name: 'tracker.list_issues', readOnly: true }));
    const row = await screen.findByTestId('operation-row');
    expect(row.querySelector('[data-testid="operation-read-only"]')?.textContent).toBe('Reads only');
  });

  it('refuses a placeholder without a parameter row, then saves the operation', async () => {
    const oauth = await openConnections({ authorizations: [authorization()] });
    await screen.findByTestId('authorization-row');
    await fill({
      'op-name': 'tracker.create_issue',
      'op-auth': 'auth-1',
      'op-description': 'Create an issue in a project',
      'op-method': 'POST',
      'op-url': 'https://api.example.com/projects/{project}/issues',
    });
    await fireEvent.submit(screen.getByTestId('operation-form'));
    expect(screen.getByTestId('op-error-url').textContent).toContain('{project}');
    expect(oauth.OAuthService.SaveOperation).not.toHaveBeenCalled();

    await fireEvent.click(screen.getByTestId('op-add-missing'));
    expect(screen.getAllByTestId('op-param')).toHaveLength(1);
    expect(input('op-param-name').value).toBe('project');
    await fill({ 'op-param-allowed': 'alpha, beta,alpha', 'op-body': '{"type":"object"}' });
    await fireEvent.submit(screen.getByTestId('operation-form'));
    await waitFor(() => expect(oauth.OAuthService.SaveOperation).toHaveBeenCalledTimes(1));
    expect(oauth.OAuthService.SaveOperation).toHaveBeenCalledWith({
      name: 'tracker.create_issue',
      authorizationId: 'auth-1',
      description: 'Create an issue in a project',
      method: 'POST',
      urlTemplate: 'https://api.example.com/projects/{project}/issues',
      params: [{ name: 'project', type: 'string', allowed: ['alpha', 'beta'], pattern: '', required: true }],
      bodySchema: '{"type":"object"}',
      approval: 'per_call',
      readOnly: false,
    });
    expect((await screen.findByTestId('operation-saved')).textContent).toContain('tracker.create_issue');
    expect(await screen.findByTestId('operation-row')).toBeTruthy();
    expect(input('op-name').value).toBe('');
  });

  it('refuses a bad name, a placeholder in the host and an integer parameter with text values', async () => {
    const oauth = await openConnections({ authorizations: [authorization()] });
    await screen.findByTestId('authorization-row');
    await fill({ 'op-name': 'Tracker Create', 'op-auth': 'auth-1', 'op-url': 'https://{tenant}.example.com/issues' });
    await fireEvent.click(screen.getByTestId('op-add-param'));
    await fill({ 'op-param-name': 'tenant', 'op-param-type': 'integer', 'op-param-allowed': 'one, 2' });
    await fireEvent.submit(screen.getByTestId('operation-form'));
    expect(screen.getByTestId('op-error-name').textContent).toContain('lowercase');
    expect(screen.getByTestId('op-error-url').textContent).toContain('host');
    expect(screen.getByTestId('op-error-param').textContent).toContain('“one” is not an integer');
    expect(oauth.OAuthService.SaveOperation).not.toHaveBeenCalled();
  });

  it('offers only authorizations that are not revoked', async () => {
    await openConnections({
      authorizations: [authorization(), authorization({ id: 'auth-gone', name: 'gone', state: 'revoked', revocation: 'done' })],
    });
    await screen.findAllByTestId('authorization-row');
    const options = [...(screen.getByTestId('op-auth') as HTMLSelectElement).options].map((o) => o.value);
    expect(options).toEqual(['', 'auth-1']);
  });
});

describe('events and settings', () => {
  afterEach(() => vi.useRealTimers());

  it('reads authorizations and operations again on oauth:changed, and stops listening when left', async () => {
    const oauth = await openConnections();
    await screen.findByTestId('authorizations-empty');
    expect(oauth.listenerCount('oauth:changed')).toBe(1);
    const a = oauth.OAuthService.Authorizations.mock.calls.length;
    const o = oauth.OAuthService.Operations.mock.calls.length;
    oauth.state.authorizations.push(authorization({ name: 'connected-elsewhere' }));
    oauth.state.operations.push(operation({ name: 'added.elsewhere' }));
    oauth.changed();
    expect(await screen.findByText('connected-elsewhere')).toBeTruthy();
    expect(await screen.findByText('added.elsewhere')).toBeTruthy();
    expect(oauth.OAuthService.Authorizations.mock.calls.length).toBe(a + 1);
    expect(oauth.OAuthService.Operations.mock.calls.length).toBe(o + 1);

    await fireEvent.click(screen.getByTestId('nav-credentials'));
    expect(oauth.listenerCount('oauth:changed')).toBe(0);
  });

  it('turns blocking of uncontrolled authorizations on', async () => {
    const oauth = await openConnections();
    const toggle = input('block-uncontrolled');
    await waitFor(() => expect(toggle.disabled).toBe(false));
    expect(toggle.checked).toBe(false);
    await fireEvent.click(toggle);
    expect(oauth.OAuthService.SetBlockUncontrolled).toHaveBeenCalledWith(true);
    await waitFor(() => expect(oauth.OAuthService.Settings).toHaveBeenCalledTimes(2));
    expect(toggle.checked).toBe(true);
  });

  it('shows a refused setting and leaves the box as it was', async () => {
    const oauth = await openConnections();
    oauth.OAuthService.SetBlockUncontrolled.mockRejectedValueOnce('The vault is locked.');
    const toggle = input('block-uncontrolled');
    await waitFor(() => expect(toggle.disabled).toBe(false));
    await fireEvent.click(toggle);
    expect((await screen.findByTestId('oauth-settings-error')).textContent).toBe('The vault is locked.');
    expect(toggle.checked).toBe(false);
  });

  it('shows a backend error instead of a list', async () => {
    installBridge(vaultStatus({ state: 'unlocked' }));
    const oauth = installOAuth();
    oauth.OAuthService.Authorizations.mockRejectedValue('The vault is locked.');
    render(App);
    await fireEvent.click(await screen.findByTestId('nav-connections'));
    expect((await screen.findByTestId('connections-error')).textContent).toBe('The vault is locked.');
  });
});

// Issue 20: custody's second round, as the window shows it.
describe('custody round two', () => {
  it('shows a suspended authorization (an unattended drill switches it off) and switches it back on', async () => {
    const oauth = await openConnections({
      authorizations: [authorization({ id: 'auth-s', state: 'suspended', stateReason: 'unattended revocation drill' })],
    });
    const row = await screen.findByTestId('authorization-row');
    expect(screen.queryByText(/does not understand/)).toBeNull();
    expect(within(row).getByTestId('authorization-state').textContent).toBe('Switched off');
    expect(within(row).getByTestId('authorization-suspended-note').textContent).toContain('unattended revocation drill');
    await fireEvent.click(within(row).getByTestId('resume'));
    await waitFor(() => expect(oauth.OAuthService.Resume).toHaveBeenCalledWith('auth-s'));
    await waitFor(() => expect(within(screen.getByTestId('authorization-row')).getByTestId('authorization-state').textContent).toBe('Active'));
  });

  it('reconnects a revoked authorization, each of its operations shown to keep or let go', async () => {
    const oauth = await openConnections({
      authorizations: [authorization({ id: 'auth-v', state: 'revoked', revocation: 'done', operations: ['tracker.list', 'tracker.delete'] })],
      operations: [operation({ name: 'tracker.list', authorizationId: 'auth-v' }), operation({ name: 'tracker.delete', authorizationId: 'auth-v' })],
    });
    const row = await screen.findByTestId('authorization-row');
    expect(within(row).queryByTestId('revoke')).toBeNull();
    await fireEvent.click(within(row).getByTestId('reconnect'));
    const panel = within(row).getByTestId('reconnect-panel');
    const boxes = within(panel).getAllByTestId('reconnect-keep-op') as HTMLInputElement[];
    expect(boxes.map((b) => [b.dataset.operation, b.checked])).toEqual([
      ['tracker.list', true],
      ['tracker.delete', true],
    ]);
    await fireEvent.click(boxes[1]);
    await fireEvent.click(within(panel).getByTestId('reconnect-start'));
    await waitFor(() => expect(oauth.OAuthService.Reconnect).toHaveBeenCalledWith('auth-v'));
    expect(oauth.OAuthService.RemoveOperation).toHaveBeenCalledTimes(1);
    expect(oauth.OAuthService.RemoveOperation).toHaveBeenCalledWith('tracker.delete');
    expect(oauth.OAuthService.RemoveOperation.mock.invocationCallOrder[0]).toBeLessThan(oauth.OAuthService.Reconnect.mock.invocationCallOrder[0]);
  });

  it('offers Revoke again only while tokens wait for the provider, and says what an unverified or failed revocation means', async () => {
    await openConnections({
      authorizations: [
        authorization({ id: 'auth-f', name: 'failed', state: 'revoked', revocation: 'failed', revocationEndpoint: '' }),
        authorization({ id: 'auth-u', name: 'unverified', state: 'revoked', revocation: 'unverified' }),
        authorization({ id: 'auth-w', name: 'waiting', state: 'disabled', revocation: 'pending', waitingRevocations: 2 }),
      ],
    });
    const rows = await screen.findAllByTestId('authorization-row');
    const [failed, unverified, waiting] = ['failed', 'unverified', 'waiting'].map(
      (n) => rows.find((r) => within(r).getByTestId('authorization-name').textContent === n)!,
    );
    expect(within(failed).queryByTestId('revoke')).toBeNull();
    expect(within(failed).getByTestId('authorization-revocation-note').textContent).toContain('no revocation endpoint');
    expect(within(unverified).getByTestId('authorization-revocation').textContent).toBe('Revoked, not verified');
    expect(within(unverified).getByTestId('authorization-revocation-note').textContent).toContain('introspection endpoint');
    expect(within(waiting).getByTestId('revoke').textContent).toContain('Revoke again');
    expect(within(waiting).queryByTestId('reconnect')).toBeNull();
  });

  it('adds an introspection endpoint after connecting, with the one plain-http rule', async () => {
    const oauth = await openConnections({ authorizations: [authorization({ id: 'auth-e' })] });
    const row = await screen.findByTestId('authorization-row');
    expect(within(row).getByTestId('authorization-introspection-endpoint').textContent).toContain('no introspection endpoint');
    await fireEvent.click(within(row).getByTestId('edit-endpoints'));
    await fireEvent.input(within(row).getByTestId('endpoint-introspection'), { target: { value: 'http://idp.example/introspect' } });
    await fireEvent.click(within(row).getByTestId('endpoints-save'));
    expect(within(row).getByTestId('endpoint-error-introspection').textContent).toContain('https://');
    expect(oauth.OAuthService.SetEndpoints).not.toHaveBeenCalled();
    await fireEvent.input(within(row).getByTestId('endpoint-introspection'), { target: { value: 'http://127.0.0.1:4445/admin/oauth2/introspect' } });
    await fireEvent.click(within(row).getByTestId('endpoints-save'));
    await waitFor(() =>
      expect(oauth.OAuthService.SetEndpoints).toHaveBeenCalledWith('auth-e', 'https://github.com/oauth/revoke', 'http://127.0.0.1:4445/admin/oauth2/introspect'),
    );
    await waitFor(() => expect(within(screen.getByTestId('authorization-row')).getByTestId('authorization-introspection-endpoint').textContent).toContain('127.0.0.1:4445'));
  });
});

// The bridge does not keep order: a reload started by an earlier change
// can be answered after one started by a later change. The older list
// must not replace the newer one.
describe('reloads answered out of order', () => {
  it('shows the newest reload’s list', async () => {
    const oauth = await openConnections({ authorizations: [authorization({ id: 'auth-1', name: 'first' })] });
    await screen.findByTestId('authorization-row');
    let releaseOld!: () => void;
    oauth.OAuthService.Authorizations.mockImplementationOnce(
      () => new Promise((ok) => (releaseOld = () => ok([authorization({ id: 'auth-1', name: 'first' })]))),
    );
    oauth.changed();
    oauth.state.authorizations = [authorization({ id: 'auth-1', name: 'first' }), authorization({ id: 'auth-2', name: 'second' })];
    oauth.changed();
    await waitFor(() => expect(screen.getAllByTestId('authorization-row')).toHaveLength(2));
    releaseOld();
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.getAllByTestId('authorization-row')).toHaveLength(2);
  });
});

// Issue 25 item 8: the connect steps contradicted the form, the form was
// three screens tall at 820 px, the operation editor showed with no
// account to run an operation through, and the block switch had two names.
describe('the connect form says what the form holds', () => {
  const steps = () => screen.getByTestId('oc-steps').querySelector('ol')!;
  const said = () => steps().textContent ?? '';
  const below = (id: string) => Boolean(steps().compareDocumentPosition(screen.getByTestId(id)) & Node.DOCUMENT_POSITION_FOLLOWING);

  it('names each field where it is, and asks for a client secret only as the form does', async () => {
    await startConnect();
    for (const provider of ['github', 'microsoft', 'custom']) {
      await fill({ 'oc-provider': provider });
      expect(said()).not.toMatch(/above/);
      expect(said()).toContain('redirect address below');
      expect(below('oc-redirect')).toBe(true);
      expect(below('oc-client-id')).toBe(true);
      expect(below('oc-auth-none')).toBe(true);
    }
    expect(said()).toContain('under Issuer below');
    expect(below('oc-issuer')).toBe(true);

    // Microsoft: a public client, and the tenant below.
    await fill({ 'oc-provider': 'microsoft' });
    expect(said()).toContain('into Tenant');
    expect(below('oc-tenant')).toBe(true);
    expect(input('oc-auth-none').checked).toBe(true);
    expect(said()).toContain('Client authentication below stays None');
    expect(said()).not.toContain('secret, and paste it');

    // GitHub refuses a client without its secret: the form starts with one.
    await fill({ 'oc-provider': 'github' });
    expect(input('oc-auth-secret').checked).toBe(true);
    expect(said()).toContain('paste it under Client secret below');
    expect(below('oc-secret')).toBe(true);
    await fireEvent.click(screen.getByTestId('oc-auth-none'));
    expect(said()).not.toContain('paste it under Client secret below');
    expect(said()).toContain('GitHub needs it, so choose Client secret under Client authentication below');
    await fireEvent.click(screen.getByTestId('oc-auth-key'));
    expect(said()).toContain('Choose Generate key under Client authentication below');
    expect(below('oc-generate-key')).toBe(true);
  });

  it('folds what few connections need, and opens a fold when a field in it is refused', async () => {
    const oauth = await startConnect();
    const more = screen.getByTestId('oc-more') as HTMLDetailsElement;
    expect(more.open).toBe(false);
    for (const id of ['oc-scopes', 'oc-api-hosts', 'oc-review', 'oc-disable']) expect(more.contains(screen.getByTestId(id))).toBe(true);
    // What the fold holds for a preset is said without opening it.
    expect(more.querySelector('summary')?.textContent).toContain('repo read:org');
    expect(screen.getByTestId('connect-form').querySelectorAll('details[open]')).toHaveLength(0);

    await fill({ 'oc-provider': 'custom' });
    const endpoints = screen.getByTestId('oc-endpoints') as HTMLDetailsElement;
    expect(endpoints.open).toBe(false);
    expect(endpoints.contains(screen.getByTestId('oc-tokenEndpoint'))).toBe(true);
    expect(endpoints.contains(screen.getByTestId('oc-issuer'))).toBe(false);
    // No preset, so no scopes to take as they are: the field is in view.
    expect(screen.getByTestId('oc-more').contains(screen.getByTestId('oc-scopes'))).toBe(false);

    await fill({ ...basics, 'oc-tokenEndpoint': 'https://auth.example.com/token' });
    await fireEvent.submit(screen.getByTestId('connect-form'));
    expect(screen.getByTestId('connect-error-authorizationEndpoint')).toBeTruthy();
    expect(endpoints.open).toBe(true);
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('oc-authorizationEndpoint')));
    expect(oauth.OAuthService.Connect).not.toHaveBeenCalled();
  });

  it('shows the named-operation editor only once an account can run an operation', async () => {
    await openConnections();
    await screen.findByTestId('authorizations-empty');
    expect(screen.queryByTestId('operation-form')).toBeNull();
    expect(screen.getByTestId('operations-need-account').textContent).toContain('Connect an account above to add one');
    cleanup();
    await openConnections({ authorizations: [authorization({ state: 'revoked', revocation: 'done' })] });
    await screen.findByTestId('authorization-row');
    expect(screen.queryByTestId('operation-form')).toBeNull();
    cleanup();
    await openConnections({ authorizations: [authorization()] });
    await screen.findByTestId('authorization-row');
    expect(screen.getByTestId('operation-form')).toBeTruthy();
    expect(screen.queryByTestId('operations-need-account')).toBeNull();
  });

  it('names the block switch as the Inventory does: it is one switch', async () => {
    installBridge(vaultStatus({ state: 'unlocked', epoch: 3 }));
    installOAuth();
    installInventory();
    render(App);
    const label = (id: string) => screen.getByTestId(id).closest('label')?.textContent?.replace(/\s+/g, ' ').trim();
    await fireEvent.click(await screen.findByTestId('nav-inventory'));
    await screen.findByTestId('inventory-block-uncontrolled');
    const there = label('inventory-block-uncontrolled');
    await fireEvent.click(screen.getByTestId('nav-connections'));
    await screen.findByTestId('block-uncontrolled');
    expect(label('block-uncontrolled')).toBe(there);
    expect(there).toContain('not under control');
  });
});
