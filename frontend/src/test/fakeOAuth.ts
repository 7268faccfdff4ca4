// Adds a stand-in for app.OAuthService to the fake Wails bridge, plus the
// runtime's BrowserOpenURL and ClipboardSetText. Call it after installBridge.
// Tests push "oauth:changed" and "oauth:flow" as the Go side's EventsEmit
// would, and change the fake's state in between.

import { vi } from 'vitest';
import type {
  AuthorizationView,
  ConnectForm,
  DiscoveryView,
  FlowView,
  OperationView,
  PresetView,
  RevokeReport,
} from '../lib/backend';
import type { FakeOAuthService } from './bindings';
import type { app } from '../lib/wailsjs/go/models';

export function preset(over: Partial<PresetView> = {}): PresetView {
  return {
    id: 'github',
    name: 'GitHub',
    defaultScopes: ['repo', 'read:org'],
    tenant: false,
    notes: 'Register an OAuth app under Settings → Developer settings.',
    hasDevice: true,
    hasRevocation: true,
    apiHosts: ['api.github.com'],
    ...over,
  };
}

export function authorization(over: Partial<AuthorizationView> = {}): AuthorizationView {
  return {
    id: 'auth-1',
    name: 'tracker (production)',
    provider: 'github',
    providerHost: 'github.com',
    accountRef: 'ana@example.com',
    scopes: ['repo'],
    owner: 'ana@example.com',
    backupRevoker: 'ops@example.com',
    environment: 'production',
    createdHow: 'authorization_code',
    connectedAt: '2026-11-20T10:00:00Z',
    lastRefresh: '2026-11-29T09:00:00Z',
    lastUsed: '',
    reviewBy: '2027-02-01T00:00:00Z',
    disableProcedure: '',
    operations: [],
    state: 'active',
    stateReason: '',
    revocation: 'none',
    unattended: false,
    dpop: false,
    clientAuth: 'none',
    controlled: true,
    problems: [],
    apiHosts: ['api.github.com'],
    revocationEndpoint: 'https://github.com/oauth/revoke',
    introspectionEndpoint: '',
    waitingRevocations: 0,
    ...over,
  };
}

export function flowView(over: Partial<FlowView> = {}): FlowView {
  return {
    flowId: 'flow-1',
    flow: 'authorization_code',
    state: 'waiting',
    authorizationUrl: 'https://github.com/login/oauth/authorize?client_id=abc&code_challenge=xyz',
    userCode: '',
    verificationUri: '',
    verificationUriComplete: '',
    expiresAt: '',
    authorizationId: '',
    error: '',
    ...over,
  };
}

export function discovery(over: Partial<DiscoveryView> = {}): DiscoveryView {
  return {
    issuer: 'https://auth.example.com',
    authorizationEndpoint: 'https://auth.example.com/authorize',
    tokenEndpoint: 'https://auth.example.com/token',
    revocationEndpoint: 'https://auth.example.com/revoke',
    introspectionEndpoint: 'https://auth.example.com/introspect',
    deviceAuthorizationEndpoint: 'https://auth.example.com/device',
    scopesSupported: ['openid', 'issues.write'],
    dpop: true,
    authMethods: ['private_key_jwt', 'client_secret_basic'],
    ...over,
  };
}

export function operation(over: Partial<OperationView> = {}): OperationView {
  return {
    name: 'tracker.create_issue',
    authorizationId: 'auth-1',
    description: 'Create an issue',
    method: 'POST',
    urlTemplate: 'https://api.example.com/projects/{project}/issues',
    params: [{ name: 'project', type: 'string', allowed: ['alpha', 'beta'], pattern: '', required: true }],
    bodySchema: '',
    approval: 'per_call',
    readOnly: false,
    ...over,
  };
}

type Listener = (...data: unknown[]) => void;

export function installOAuth(initial: { authorizations?: AuthorizationView[]; operations?: OperationView[]; presets?: PresetView[] } = {}) {
  if (!window.go?.app || !window.runtime) throw new Error('installBridge first');
  const state = {
    authorizations: initial.authorizations ?? [],
    operations: initial.operations ?? [],
    presets: initial.presets ?? [preset(), preset({ id: 'microsoft', name: 'Microsoft', tenant: true, hasDevice: true, defaultScopes: ['offline_access', 'User.Read'] })],
    blockUncontrolled: false,
    nextFlow: flowView(),
  };
  const listeners = new Map<string, Set<Listener>>();
  const emit = (name: string, payload?: unknown) => {
    for (const cb of listeners.get(name) ?? []) cb(payload);
  };

  const OAuthService = {
    Presets: vi.fn(async (): Promise<unknown> => structuredClone(state.presets)),
    Discover: vi.fn(async (_issuer: string): Promise<unknown> => discovery()),
    NewClientKey: vi.fn(async (): Promise<unknown> => ({
      keyId: 'key-7',
      publicJwk: '{"kty":"EC","crv":"P-256","kid":"key-7"}',
      jwks: '{"keys":[{"kty":"EC","crv":"P-256","kid":"key-7"}]}',
    })),
    Connect: vi.fn(async (_form: ConnectForm): Promise<unknown> => structuredClone(state.nextFlow)),
    Reconnect: vi.fn(async (_id: string): Promise<unknown> => structuredClone(state.nextFlow)),
    Flow: vi.fn(async (id: string): Promise<unknown> => ({ ...structuredClone(state.nextFlow), flowId: id })),
    CancelFlow: vi.fn(async (_id: string): Promise<void> => {}),
    Authorizations: vi.fn(async (): Promise<unknown> => structuredClone(state.authorizations)),
    UpdateInventory: vi.fn(async (id: string, inv: app.InventoryForm): Promise<void> => {
      const a = state.authorizations.find((x) => x.id === id);
      if (!a) throw 'No such authorization.';
      Object.assign(a, inv, { controlled: true, problems: [] });
    }),
    Revoke: vi.fn(async (id: string): Promise<unknown> => {
      const a = state.authorizations.find((x) => x.id === id);
      if (a) Object.assign(a, { state: 'revoked', revocation: 'done' });
      const report: RevokeReport = {
        authorizationId: id,
        steps: [
          { step: 'local_disable', ok: true, detail: 'refresh token deleted, 1 session ended', at: '2026-11-29T18:00:00Z', unverified: false },
          { step: 'provider_revocation', ok: true, detail: 'github.com accepted the revocation', at: '2026-11-29T18:00:01Z', unverified: false },
          { step: 'verification', ok: false, detail: 'introspection endpoint unreachable', at: '2026-11-29T18:00:02Z', unverified: false },
        ],
        retryPending: false,
      };
      return report;
    }),
    SetEndpoints: vi.fn(async (id: string, revocation: string, introspection: string): Promise<void> => {
      const a = state.authorizations.find((x) => x.id === id);
      if (!a) throw 'No such authorization.';
      if (![revocation, introspection].every((u) => u === '' || u.startsWith('https://') || u.startsWith('http://127.0.0.1'))) {
        throw 'invalid input: introspection_endpoint: endpoint is not https and its host is not loopback';
      }
      Object.assign(a, { revocationEndpoint: revocation, introspectionEndpoint: introspection });
    }),
    Resume: vi.fn(async (id: string): Promise<void> => {
      const a = state.authorizations.find((x) => x.id === id);
      if (!a || a.state !== 'suspended') throw 'invalid input: only a suspended authorization is resumed';
      Object.assign(a, { state: 'active', stateReason: '' });
    }),
    Operations: vi.fn(async (): Promise<unknown> => structuredClone(state.operations)),
    SaveOperation: vi.fn(async (op: OperationView): Promise<void> => {
      state.operations.push(structuredClone(op));
    }),
    RemoveOperation: vi.fn(async (name: string): Promise<void> => {
      state.operations = state.operations.filter((o) => o.name !== name);
    }),
    Settings: vi.fn(async (): Promise<unknown> => ({ blockUncontrolled: state.blockUncontrolled })),
    SetBlockUncontrolled: vi.fn(async (on: boolean): Promise<void> => {
      state.blockUncontrolled = on;
    }),
  } satisfies FakeOAuthService;
  (window.go.app as Record<string, unknown>).OAuthService = OAuthService;

  const runtime = window.runtime;
  const eventsOn = runtime.EventsOn;
  runtime.EventsOn = vi.fn((name: string, cb: Listener) => {
    if (!name.startsWith('oauth:')) return eventsOn(name, cb);
    if (!listeners.has(name)) listeners.set(name, new Set());
    listeners.get(name)!.add(cb);
    return () => listeners.get(name)!.delete(cb);
  });
  runtime.BrowserOpenURL = vi.fn();
  runtime.ClipboardSetText = vi.fn(async () => true);

  return {
    OAuthService,
    runtime,
    state,
    listenerCount: (name: string) => listeners.get(name)?.size ?? 0,
    /** As the Go side's EventsEmit("oauth:changed"). */
    changed: () => emit('oauth:changed'),
    /** As the Go side's EventsEmit("oauth:flow", f). */
    flow: (f: FlowView) => emit('oauth:flow', f),
  };
}
