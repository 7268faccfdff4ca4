// What a person does in each provider's console before connecting, in their
// words: where to click, what to paste where. Provider consoles rename
// their menus now and then, so the steps name what to look for rather than
// promise exact labels. The presets' technical notes (how tokens rotate and
// are revoked) stay available behind a disclosure.

/** The address Yett listens on for the provider's answer. Providers that
 * follow RFC 8252 accept any port on it for a desktop app. */
export const REDIRECT_URI = 'http://127.0.0.1/callback';

export const PROVIDER_STEPS: Record<string, string[]> = {
  github: [
    'On GitHub, open Settings, then Developer settings, then OAuth Apps, and choose New OAuth App.',
    'Homepage URL: any address of yours. Authorization callback URL: the redirect address above.',
    'Register the app. Copy its Client ID into the form below, then Generate a new client secret and paste it under Client secret.',
  ],
  google: [
    'In the Google Cloud console, pick a project, open APIs & Services, then OAuth consent screen, and set it up (while it is in Testing, access ends after 7 days).',
    'Open Credentials, then Create credentials, then OAuth client ID, and choose the application type Desktop app.',
    'Copy the Client ID and Client secret into the form below. A desktop client accepts the redirect address above without registering it.',
  ],
  gitlab: [
    'On GitLab, open your avatar, then Edit profile, then Applications (or a group’s Settings, then Applications).',
    'Name the application, paste the redirect address above as Redirect URI, and tick the scopes your operations need.',
    'Save it, then copy the Application ID into Client ID below, and the Secret into Client secret.',
  ],
  microsoft: [
    'In the Microsoft Entra admin center, open App registrations and choose New registration.',
    'Under Redirect URI choose Public client/native (mobile & desktop) and paste the redirect address above.',
    'Copy the Application (client) ID into Client ID below and the Directory (tenant) ID into Tenant. Under API permissions, add what your operations need.',
  ],
  slack: [
    'At api.slack.com/apps choose Create New App, then From scratch, and pick the workspace.',
    'Open OAuth & Permissions: add the redirect address above under Redirect URLs, turn on token rotation, and add the user token scopes you need.',
    'Open Basic Information and copy the Client ID and Client Secret into the form below.',
  ],
  atlassian: [
    'In the Atlassian developer console, choose Create, then OAuth 2.0 integration.',
    'Under Authorization, configure OAuth 2.0 (3LO) with the redirect address above as Callback URL. Under Permissions, add the APIs and scopes you need.',
    'Open Settings and copy the Client ID and Secret into the form below.',
  ],
  custom: [
    'In your provider’s admin console, register a new OAuth client (often called an application or an app registration).',
    'Give it the redirect address above, and the scopes your operations need.',
    'Copy its client ID into the form below, with a secret or a public key if the client is confidential, and enter the provider’s issuer address, then Discover.',
  ],
};

export function stepsFor(provider: string): string[] {
  return PROVIDER_STEPS[provider] ?? PROVIDER_STEPS.custom;
}
