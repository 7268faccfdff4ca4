// Validation of the connect form before anything is sent. The resource owner
// password grant does not exist here: a person signs in at the provider, or
// the client authenticates as itself. The backend validates again; no
// message ever includes the client secret.
import { defaultClientAuth } from './providerSteps';
import { secureUrlError } from './urlRule';

import type { ConnectForm, DiscoveryView, Environment, OAuthProvider, PresetView } from './backend';

export const CUSTOM_PROVIDER = 'custom';

/**
 * What the form fields hold while the person types: the connect form, with
 * the fields the person types as free text before they are checked.
 */
export interface ConnectDraft extends Omit<ConnectForm, 'provider' | 'scopes' | 'environment' | 'apiHosts'> {
  /** A preset id, or 'custom' for another provider. */
  provider: string;
  /** Scopes separated by spaces or commas. */
  scopes: string;
  /** The API's hosts, separated by spaces or commas; '' for the preset's or the provider's own. */
  apiHosts: string;
  environment: Environment | '';
}

export type ConnectErrors = Partial<Record<keyof ConnectDraft, string>>;

export const ENDPOINT_FIELDS = [
  'authorizationEndpoint',
  'tokenEndpoint',
  'revocationEndpoint',
  'introspectionEndpoint',
  'deviceAuthorizationEndpoint',
] as const;

/** A new connection to preset (or another provider): the client authentication its steps ask for. */
export function emptyConnect(preset?: PresetView): ConnectDraft {
  return {
    name: '',
    provider: preset?.id ?? CUSTOM_PROVIDER,
    tenant: '',
    issuer: '',
    authorizationEndpoint: '',
    tokenEndpoint: '',
    revocationEndpoint: '',
    introspectionEndpoint: '',
    deviceAuthorizationEndpoint: '',
    clientId: '',
    clientAuth: defaultClientAuth(preset?.id ?? CUSTOM_PROVIDER),
    clientSecret: '',
    clientKeyId: '',
    scopes: preset ? preset.defaultScopes.join(' ') : '',
    environment: '',
    unattended: false,
    flow: 'authorization_code',
    owner: '',
    backupRevoker: '',
    reviewBy: '',
    disableProcedure: '',
    dpop: false,
    apiHosts: '',
  };
}

export function splitScopes(text: string): string[] {
  const seen = new Set<string>();
  for (const part of text.split(/[\s,]+/)) if (part !== '') seen.add(part);
  return [...seen];
}

/** Fills the endpoints a discovery found; fields it did not find are emptied. */
export function applyDiscovery(d: ConnectDraft, found: DiscoveryView): ConnectDraft {
  const next = { ...d, issuer: found.issuer || d.issuer };
  for (const f of ENDPOINT_FIELDS) next[f] = found[f];
  if (!found.dpop) next.dpop = false;
  if (found.deviceAuthorizationEndpoint === '' && next.flow === 'device_code') next.flow = 'authorization_code';
  return next;
}

/** Whether the chosen provider offers the device flow. */
export function offersDevice(d: ConnectDraft, preset: PresetView | undefined): boolean {
  if (d.provider === CUSTOM_PROVIDER) return d.deviceAuthorizationEndpoint.trim() !== '';
  return preset?.hasDevice ?? false;
}

function httpsError(url: string): string | null {
  if (url === '') return null;
  try {
    const u = new URL(url);
    const insecure = secureUrlError(url);
    if (insecure !== null) return insecure;
    if (u.username || u.password) return 'The address cannot contain a user name or password.';
  } catch {
    return 'This is not a valid URL.';
  }
  return null;
}

const PROVIDERS: readonly OAuthProvider[] = ['github', 'google', 'gitlab', 'microsoft', 'slack', 'atlassian', 'custom'];
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Returns the errors per field (empty when the draft can be sent) and the
 * form to send. Fields that do not apply (endpoints of a preset, a secret
 * when the client authenticates by key) are sent empty.
 */
export function validateConnect(
  d: ConnectDraft,
  preset: PresetView | undefined,
): { errors: ConnectErrors; form: ConnectForm } {
  const errors: ConnectErrors = {};
  const custom = d.provider === CUSTOM_PROVIDER;
  const trimmed = (s: string) => s.trim();
  const endpoints = Object.fromEntries(ENDPOINT_FIELDS.map((f) => [f, custom ? trimmed(d[f]) : ''])) as Record<
    (typeof ENDPOINT_FIELDS)[number],
    string
  >;
  const scopes = splitScopes(d.scopes);

  if (trimmed(d.name) === '') errors.name = 'Name the connection, e.g. “tracker (production)”.';
  if (!PROVIDERS.includes(d.provider as OAuthProvider) || (!custom && !preset)) errors.provider = 'Choose a provider.';
  if (!custom && preset?.tenant && trimmed(d.tenant) === '') errors.tenant = 'Enter the tenant (directory or site).';
  if (trimmed(d.clientId) === '') errors.clientId = 'Enter the client ID from the provider’s app registration.';
  if (d.clientAuth === 'client_secret' && d.clientSecret === '') errors.clientSecret = 'Paste the client secret.';
  else if (d.clientAuth === 'client_secret' && /[\r\n]/.test(d.clientSecret)) {
    errors.clientSecret = 'The client secret contains a line break; paste it again without one.';
  }
  if (d.clientAuth === 'private_key_jwt' && d.clientKeyId === '') {
    errors.clientKeyId = 'Generate a key and register its public half with the provider.';
  }
  if (d.environment === '') errors.environment = 'Choose the environment this authorization is for.';
  if (trimmed(d.owner) === '') errors.owner = 'Name the person who owns this authorization.';
  if (trimmed(d.backupRevoker) === '') errors.backupRevoker = 'Name someone who can revoke it when the owner cannot.';
  if (d.reviewBy !== '' && !DATE.test(d.reviewBy)) errors.reviewBy = 'Enter a date as YYYY-MM-DD.';
  if (d.flow === 'client_credentials' && d.clientAuth === 'none') {
    errors.clientAuth = 'Client credentials need the client to authenticate: choose a secret or a key.';
  }
  if (d.flow === 'device_code' && !offersDevice(d, preset)) errors.flow = 'This provider has no device flow.';

  if (custom) {
    if (trimmed(d.issuer) !== '') {
      const e = httpsError(trimmed(d.issuer));
      if (e) errors.issuer = e;
    }
    for (const f of ENDPOINT_FIELDS) {
      const e = httpsError(endpoints[f]);
      if (e) errors[f] = e;
    }
    if (endpoints.tokenEndpoint === '') errors.tokenEndpoint ??= 'Enter the token endpoint, or discover it.';
    if (d.flow === 'authorization_code' && endpoints.authorizationEndpoint === '') {
      errors.authorizationEndpoint ??= 'Enter the authorization endpoint, or discover it.';
    }
  }

  const form: ConnectForm = {
    name: trimmed(d.name),
    provider: (custom ? 'custom' : d.provider) as OAuthProvider,
    tenant: !custom && preset?.tenant ? trimmed(d.tenant) : '',
    issuer: custom ? trimmed(d.issuer) : '',
    ...endpoints,
    clientId: trimmed(d.clientId),
    clientAuth: d.clientAuth,
    clientSecret: d.clientAuth === 'client_secret' ? d.clientSecret : '',
    clientKeyId: d.clientAuth === 'private_key_jwt' ? d.clientKeyId : '',
    scopes,
    environment: d.environment as Environment,
    unattended: d.unattended,
    flow: d.flow,
    owner: trimmed(d.owner),
    backupRevoker: trimmed(d.backupRevoker),
    reviewBy: d.reviewBy,
    disableProcedure: trimmed(d.disableProcedure),
    dpop: custom && d.dpop,
    apiHosts: splitScopes(d.apiHosts ?? ''),
  };
  return { errors, form };
}

/** Says in plain words why an authorization needs its owner to reconnect. */
export function reconnectReason(reason: string): string {
  switch (reason) {
    case 'invalid_grant':
      return 'The provider refused the stored refresh token (invalid_grant): it was revoked, expired or reused.';
    case 'response_lost':
      return 'A renewal was sent but its answer never arrived, so the provider may have replaced the token; Yett does not resend the old one.';
    case 'expired_no_refresh_token':
      return 'Its access expired, and Yett keeps no refresh token for a connection that is not unattended.';
    case 'vault_reset':
    case 'refresh_token_unreadable':
      return 'The vault was reset, so its tokens are gone; the provider may still hold the grant until you revoke it there.';
    case 'invalid_response':
      return 'The provider answered a renewal with something Yett could not use.';
    default:
      return 'The provider no longer accepts this authorization.';
  }
}
