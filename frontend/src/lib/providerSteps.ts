// What a person does in each provider's console before connecting, in their
// words: where to click, what to paste where. Provider consoles rename
// their menus now and then, so the steps name what to look for rather than
// promise exact labels. The presets' technical notes (how tokens rotate and
// are revoked) stay available behind a disclosure.
//
// The steps are read above the form's fields: every field they name is
// "below" them, and the step about the client secret follows the client
// authentication chosen in the form, so the two never contradict.

import type { ClientAuth } from './backend';

/** The address Yett listens on for the provider's answer. Providers that
 * follow RFC 8252 accept any port on it for a desktop app. */
export const REDIRECT_URI = 'http://127.0.0.1/callback';

export interface ProviderGuide {
  /** The provider as the steps name it. */
  name: string;
  /** From the new client to its client ID. */
  console: string[];
  /** Where the console gives the client secret, as the start of a sentence. */
  secret: string;
  /** The provider refuses a client without its secret (a confidential client). */
  needsSecret: boolean;
}

const GUIDES: Record<string, ProviderGuide> = {
  github: {
    name: 'GitHub',
    console: [
      'On GitHub, open Settings, then Developer settings, then OAuth Apps, and choose New OAuth App.',
      'Homepage URL: any address of yours. Authorization callback URL: the redirect address below.',
      'Register the app, and copy its Client ID into Client ID below.',
    ],
    secret: 'Choose Generate a new client secret',
    needsSecret: true,
  },
  google: {
    name: 'Google',
    console: [
      'In the Google Cloud console, pick a project, open APIs & Services, then OAuth consent screen, and set it up (while it is in Testing, access ends after 7 days).',
      'Open Credentials, then Create credentials, then OAuth client ID, and choose the application type Desktop app. A desktop client accepts the redirect address below without registering it.',
      'Copy the Client ID into Client ID below.',
    ],
    secret: 'Copy the Client secret',
    needsSecret: true,
  },
  gitlab: {
    name: 'GitLab',
    console: [
      'On GitLab, open your avatar, then Edit profile, then Applications (or a group’s Settings, then Applications).',
      'Name the application, paste the redirect address below as Redirect URI, and tick the scopes your operations need.',
      'Save it, then copy the Application ID into Client ID below.',
    ],
    secret: 'Copy the Secret',
    needsSecret: true,
  },
  microsoft: {
    name: 'Microsoft',
    console: [
      'In the Microsoft Entra admin center, open App registrations and choose New registration.',
      'Under Redirect URI choose Public client/native (mobile & desktop) and paste the redirect address below.',
      'Copy the Application (client) ID into Client ID below and the Directory (tenant) ID into Tenant. Under API permissions, add what your operations need.',
    ],
    secret: 'Under Certificates & secrets, choose New client secret and copy its value',
    needsSecret: false,
  },
  slack: {
    name: 'Slack',
    console: [
      'At api.slack.com/apps choose Create New App, then From scratch, and pick the workspace.',
      'Open OAuth & Permissions: add the redirect address below under Redirect URLs, turn on token rotation, and add the user token scopes you need.',
      'Open Basic Information and copy the Client ID into Client ID below.',
    ],
    secret: 'Copy the Client Secret there too',
    needsSecret: true,
  },
  atlassian: {
    name: 'Atlassian',
    console: [
      'In the Atlassian developer console, choose Create, then OAuth 2.0 integration.',
      'Under Authorization, configure OAuth 2.0 (3LO) with the redirect address below as Callback URL. Under Permissions, add the APIs and scopes you need.',
      'Open Settings and copy the Client ID into Client ID below.',
    ],
    secret: 'Copy the Secret there too',
    needsSecret: true,
  },
  custom: {
    name: 'the provider',
    console: [
      'In your provider’s admin console, register a new OAuth client (often called an application or an app registration).',
      'Give it the redirect address below, and the scopes your operations need.',
      'Enter the provider’s issuer address under Issuer below and choose Discover, then copy the client’s ID into Client ID.',
    ],
    secret: 'If the provider gave the client a secret, copy it',
    needsSecret: false,
  },
};

export function guideFor(provider: string): ProviderGuide {
  return GUIDES[provider] ?? GUIDES.custom;
}

/** The client authentication a new connection starts with: what the provider's steps ask for. */
export function defaultClientAuth(provider: string): ClientAuth {
  return guideFor(provider).needsSecret ? 'client_secret' : 'none';
}

/** The steps for a provider, the last one saying what to do for the client authentication chosen. */
export function stepsFor(provider: string, auth: ClientAuth): string[] {
  const g = guideFor(provider);
  let last: string;
  if (auth === 'client_secret') {
    last = `${g.secret}, and paste it under Client secret below.`;
  } else if (auth === 'private_key_jwt') {
    last = `Choose Generate key under Client authentication below, and register the public key set (JWKS) it shows with the client at ${g.name}.`;
  } else if (g.needsSecret) {
    last = `${g.secret}: ${g.name} needs it, so choose Client secret under Client authentication below and paste it there.`;
  } else {
    last = 'A public client has no secret: Client authentication below stays None, and PKCE protects the sign-in.';
  }
  return [...g.console, last];
}
