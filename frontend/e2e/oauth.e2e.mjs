// End-to-end test of the Connections view in a real browser against the real
// app and a real OAuth provider, Ory Hydra v2.3.0 (started by e2e.sh on
// loopback, with a client_credentials client registered through its admin
// API).
//
// Through the page only: connect an account at "Other provider" by Hydra's
// issuer (Discover fills in the endpoints; Hydra's introspection endpoint is
// on its admin port, so it is typed in), with a client secret, client
// credentials, staging, an owner and a backup revoker; see it listed active
// and under control; add a named operation on it; revoke it and read the
// report: disabled in Yett, revoked at Hydra (RFC 7009) and verified inactive
// by Hydra's introspection (RFC 7662); the row ends revoked. Then the same
// with a person signing in: a public client (no secret), authorization code
// with PKCE, unattended, development; the panel shows the sign-in address,
// which a second tab (the person's browser) opens: Hydra, the login and
// consent app e2e.sh runs (it signs in alice@example.test), and back to
// Yett's loopback callback; the panel closes on the "oauth:flow" event and the
// row lists alice; Revoke reports the refresh and the access token revoked
// at Hydra and each verified inactive by introspection. The client
// secret (a canary) goes out once, in the Connect call, and must appear
// nowhere the page can see afterwards: DOM, inputs, storage, console, or any
// frame the backend sent to the page.
//
// env: YETT_E2E_URL (the app's dev server), YETT_E2E_HYDRA_PUBLIC (issuer),
// YETT_E2E_HYDRA_ADMIN, YETT_E2E_OAUTH_CLIENT_ID, YETT_E2E_OAUTH_SECRET,
// YETT_E2E_OAUTH_PUBLIC_CLIENT_ID (the authorization-code client),
// YETT_E2E_BROWSER_LOG (where the stub system browser records what the app
// asked it to open),
// YETT_E2E_PASSPHRASE (creates or unlocks the vault when the page shows
// setup or unlock; after vault.e2e.mjs it is normally unlocked already),
// plus harness.mjs's YETT_ARTIFACTS and YETT_CHROMIUM.
// Exits non-zero on any failure; the last line is "N passed, N failed".

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { STEP_TIMEOUT, assert, axeCheck, axeSummary, byId, log, pageText, runSteps, shot, shotSizes } from './harness.mjs';

function need(name) {
  const v = process.env[name];
  if (!v) {
    process.stdout.write(`e2e: ${name} is not set (e2e.sh sets it when it starts Hydra)\n0 passed, 1 failed\n`);
    process.exit(1);
  }
  return v;
}

const URL_ = need('YETT_E2E_URL');
const ISSUER = need('YETT_E2E_HYDRA_PUBLIC').replace(/\/$/, '');
const ADMIN = need('YETT_E2E_HYDRA_ADMIN').replace(/\/$/, '');
const CLIENT_ID = need('YETT_E2E_OAUTH_CLIENT_ID');
const SECRET = need('YETT_E2E_OAUTH_SECRET');
const PASSPHRASE = need('YETT_E2E_PASSPHRASE');
const PUBLIC_CLIENT_ID = need('YETT_E2E_OAUTH_PUBLIC_CLIENT_ID');
const BROWSER_LOG = need('YETT_E2E_BROWSER_LOG');

const NAME = `tracker e2e ${randomBytes(3).toString('hex')}`;
const OWNER = 'ana@example.test';
const BACKUP = 'ops@example.test';
const OPERATION = 'tracker.list_issues';
const OP_URL = 'https://api.example.test/projects/{project}/issues';
const INTROSPECTION = `${ADMIN}/admin/oauth2/introspect`;
const PROVIDER_HOST = new URL(ISSUER).host;
const CODE_NAME = `hydra alice e2e ${randomBytes(3).toString('hex')}`;
const ALICE = 'alice@example.test'; // whom hydra-login.mjs signs in
const CODE_OWNER = 'bea@example.test';
const CODE_BACKUP = 'oncall@example.test';

const received = []; // every websocket frame the page received
const sent = []; // every websocket frame the page sent
const consoleLines = [];
let authId = '';
let codeId = '';
let signInUrl = '';

const row = (page) => page.locator('[data-testid="authorization-row"]', { hasText: NAME });
const codeRow = (page) => page.locator('[data-testid="authorization-row"]', { hasText: CODE_NAME });
const browserOpened = () => {
  try {
    return readFileSync(BROWSER_LOG, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};
const text = async (loc) => (await loc.textContent()).trim();

// Waits for the first of several outcomes and returns its index, so a form
// error fails the step with its own text instead of a timeout.
async function first(...locators) {
  return Promise.any(locators.map((l, i) => l.waitFor({ timeout: STEP_TIMEOUT }).then(() => i)));
}

async function noSecretInPage(page) {
  const all = await pageText(page);
  assert(all.includes(NAME), 'self-check: the page text does not even hold the authorization name');
  assert(!all.includes(SECRET), 'the client secret is in the page DOM, HTML, an input or web storage');
  assert(!consoleLines.some((l) => l.includes(SECRET)), 'the client secret was written to the browser console');
  const leaks = received.filter((f) => f.includes(SECRET));
  assert(leaks.length === 0, `${leaks.length} frame(s) the backend sent to the page hold the client secret`);
}

const steps = [
  ['the page loads with the vault open', async (page) => {
    await page.goto(URL_, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => Boolean(window.go?.app?.OAuthService && window.runtime), null, { timeout: STEP_TIMEOUT });
    const screen = await first(byId(page, 'shell'), byId(page, 'unlock-screen'), byId(page, 'setup-screen'));
    if (screen === 1) {
      log('the vault was locked; unlocking it');
      await byId(page, 'unlock-passphrase').fill(PASSPHRASE);
      await byId(page, 'unlock-submit').click();
    } else if (screen === 2) {
      log('a fresh vault; creating it');
      await byId(page, 'setup-passphrase').fill(PASSPHRASE);
      await byId(page, 'setup-confirm').fill(PASSPHRASE);
      await byId(page, 'setup-submit').click();
    }
    await byId(page, 'shell').waitFor({ timeout: STEP_TIMEOUT });
    assert((await text(byId(page, 'status-state'))) === 'unlocked', 'status badge is not "unlocked"');
  }],

  ['Connections lists no account and no operation yet', async (page) => {
    await byId(page, 'nav-connections').click();
    await byId(page, 'authorizations-empty').waitFor({ timeout: STEP_TIMEOUT });
    await byId(page, 'operations-empty').waitFor({ timeout: STEP_TIMEOUT });
    assert((await byId(page, 'connections-error').count()) === 0, 'Connections shows an error');
    // No account to run an operation through: no editor, a sentence instead.
    assert((await byId(page, 'operation-form').count()) === 0, 'the operation editor shows with no account to run it through');
    await byId(page, 'operations-need-account').waitFor({ timeout: STEP_TIMEOUT });
    await shot(page, 'oauth-01-empty');
  }],

  ['Other provider: Discover reads Hydra\'s metadata and fills in its endpoints', async (page) => {
    await byId(page, 'connect-start').click();
    await byId(page, 'connect-form').waitFor({ timeout: STEP_TIMEOUT });
    await byId(page, 'oc-provider').selectOption({ label: 'Other provider' });
    await byId(page, 'oc-issuer').fill(ISSUER);
    await byId(page, 'oc-discover').click();
    const outcome = await first(byId(page, 'oc-discovered'), byId(page, 'connect-form-error'));
    if (outcome === 1) throw new Error(`Discover failed: ${await text(byId(page, 'connect-form-error'))}`);
    const found = await text(byId(page, 'oc-discovered'));
    assert(found.includes(`Found ${ISSUER}`), `the discovery notice does not name Hydra's issuer: ${found}`);
    assert(/client_secret_basic/.test(found), `the discovery notice does not list client_secret_basic: ${found}`);
    const endpoint = (f) => byId(page, `oc-${f}`).inputValue();
    assert((await endpoint('authorizationEndpoint')) === `${ISSUER}/oauth2/auth`, 'authorization endpoint not filled in');
    assert((await endpoint('tokenEndpoint')) === `${ISSUER}/oauth2/token`, 'token endpoint not filled in');
    assert((await endpoint('revocationEndpoint')) === `${ISSUER}/oauth2/revoke`, 'revocation endpoint not filled in');
    // Hydra publishes no introspection endpoint: it is on the admin port.
    assert((await endpoint('introspectionEndpoint')) === '', 'an introspection endpoint was filled in that Hydra does not publish');
    assert((await byId(page, 'oc-flow-device').count()) === 0, 'the device flow is offered although Hydra has none');
    await shot(page, 'oauth-02-discovered');
  }],

  ['the form connects with client credentials and a client secret', async (page) => {
    await byId(page, 'oc-name').fill(NAME);
    // The endpoints are folded once discovered: Hydra's introspection is
    // on its admin port, which it does not publish.
    await byId(page, 'oc-endpoints').locator('summary').click();
    await byId(page, 'oc-introspectionEndpoint').fill(INTROSPECTION);
    await byId(page, 'oc-client-id').fill(CLIENT_ID);
    await byId(page, 'oc-auth-secret').check();
    await byId(page, 'oc-secret').fill(SECRET);
    await byId(page, 'oc-scopes').fill('tracker.read');
    // Its operations call api.example.test (the receiver behind it), not
    // Hydra's host: declared here, or Yett refuses to send the token there.
    await byId(page, 'oc-api-hosts').fill('api.example.test');
    await byId(page, 'oc-environment').selectOption('staging');
    await byId(page, 'oc-flow-client').check();
    await byId(page, 'oc-owner').fill(OWNER);
    await byId(page, 'oc-backup').fill(BACKUP);
    assert((await byId(page, 'oc-secret').getAttribute('type')) === 'password', 'the client secret field is not a password field');
    await shot(page, 'oauth-03-form');
    await axeCheck(page, 'the Connections form');
    await shotSizes(page, 'connections-form');
    await byId(page, 'oc-submit').click();
    const outcome = await first(
      byId(page, 'connections-notice'),
      byId(page, 'connect-form-error'),
      page.locator('[data-testid^="connect-error-"]').first(),
      byId(page, 'flow-panel'),
    );
    if (outcome === 1) throw new Error(`Connect failed: ${await text(byId(page, 'connect-form-error'))}`);
    if (outcome === 2) {
      const field = page.locator('[data-testid^="connect-error-"]').first();
      throw new Error(`the form refused ${await field.getAttribute('data-testid')}: ${await text(field)}`);
    }
    if (outcome === 3) throw new Error(`a flow panel opened instead: ${await text(byId(page, 'flow-panel'))}`);
    assert(/Connected/.test(await text(byId(page, 'connections-notice'))), 'the notice does not say connected');
    await byId(page, 'connect-form').waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
  }],

  ['the row is listed: active, Hydra\'s host, staging, client credentials, under control', async (page) => {
    const r = row(page);
    await r.waitFor({ timeout: STEP_TIMEOUT });
    authId = (await r.getAttribute('data-authorization-id')) ?? '';
    assert(authId !== '', 'the row carries no authorization id');
    assert((await text(r.locator('[data-testid="authorization-state"]'))) === 'Active', 'the state is not Active');
    assert((await text(r.locator('[data-testid="authorization-host"]'))) === PROVIDER_HOST, `the provider host is not ${PROVIDER_HOST}`);
    assert((await text(r.locator('[data-testid="authorization-environment"]'))) === 'staging', 'the environment is not staging');
    assert((await text(r.locator('[data-testid="authorization-account"]'))) === `client ${CLIENT_ID}`, 'the account is not the client');
    assert((await text(r.locator('[data-testid="authorization-scopes"]'))) === 'tracker.read', 'the scopes are not tracker.read');
    assert((await text(r.locator('[data-testid="authorization-api-hosts"]'))) === 'api.example.test', 'the API hosts are not api.example.test');
    assert((await text(r.locator('[data-testid="authorization-owner"]'))) === OWNER, 'the owner is not shown');
    assert((await text(r.locator('[data-testid="authorization-backup"]'))) === BACKUP, 'the backup revoker is not shown');
    const all = await r.innerText();
    assert(/Connected by\s+Client credentials · client auth: client_secret/.test(all), `the row does not say it was connected by client credentials with a client secret: ${all}`);
    assert(!all.includes('Unattended'), 'the row is marked unattended');
    // Under control: not flagged, no problem list, no summary above the list.
    assert((await r.locator('[data-testid="authorization-uncontrolled"]').count()) === 0, `the row is flagged not under control: ${all}`);
    assert(!(await r.evaluate((e) => e.classList.contains('flagged'))), 'the row has the flagged style');
    assert((await byId(page, 'uncontrolled-summary').count()) === 0, 'the list says an authorization is not under control');
    assert((await r.locator('[data-testid="authorization-revocation"]').count()) === 0, 'a revocation badge is shown on an active row');
    assert((await text(r.locator('[data-testid="authorization-operations"]'))) === 'none yet', 'the row lists operations already');
    await shot(page, 'oauth-04-connected');
  }],

  ['the client secret is nowhere the page can see, and went out only in the Connect call', async (page) => {
    // Self-checks first, so this cannot pass by recording nothing.
    assert(received.some((f) => f.includes(authId)), 'self-check: no received frame carried the new authorization');
    const out = sent.filter((f) => f.includes(SECRET));
    assert(out.length === 1 && out[0].includes('Connect'), `the secret left the page in ${out.length} frame(s), want exactly the Connect call`);
    await noSecretInPage(page);
    log(`checked ${received.length} received frames`);
  }],

  ['a named operation is added through it and listed on the row', async (page) => {
    await byId(page, 'op-name').fill(OPERATION);
    await byId(page, 'op-auth').selectOption(authId);
    await byId(page, 'op-description').fill('List the issues of project A');
    await byId(page, 'op-method').selectOption('GET');
    await byId(page, 'op-url').fill(OP_URL);
    await byId(page, 'op-add-missing').click();
    const param = byId(page, 'op-param');
    assert((await param.count()) === 1, `expected one parameter row, saw ${await param.count()}`);
    assert((await param.locator('[data-testid="op-param-name"]').inputValue()) === 'project', 'the added row is not {project}');
    await param.locator('[data-testid="op-param-type"]').selectOption('string');
    await param.locator('[data-testid="op-param-allowed"]').fill('A');
    assert(await param.locator('[data-testid="op-param-required"]').isChecked(), 'a path parameter is not required');
    await byId(page, 'op-approval-per-call').check();
    await byId(page, 'op-read-only').check();
    await byId(page, 'op-submit').click();
    const outcome = await first(byId(page, 'operation-saved'), byId(page, 'operation-form-error'), page.locator('[data-testid^="op-error-"]').first());
    if (outcome === 1) throw new Error(`Save failed: ${await text(byId(page, 'operation-form-error'))}`);
    if (outcome === 2) throw new Error(`the operation form refused: ${await text(page.locator('[data-testid^="op-error-"]').first())}`);
    assert((await text(byId(page, 'operation-saved'))).includes(OPERATION), 'the saved notice does not name the operation');

    const op = page.locator('[data-testid="operation-row"]', { hasText: OPERATION });
    await op.waitFor({ timeout: STEP_TIMEOUT });
    assert((await text(op.locator('[data-testid="operation-request"]'))) === `GET ${OP_URL}`, 'the request shown is not the template');
    assert((await text(op.locator('[data-testid="operation-authorization"]'))) === `Through ${NAME} (staging)`, 'the operation is not shown through the authorization');
    assert((await text(op.locator('[data-testid="operation-approval"]'))) === 'Approve every call', 'the approval mode is not every call');
    assert((await text(op.locator('[data-testid="operation-read-only"]'))) === 'Reads only', 'the operation is not shown as only reading');
    const params = await op.locator('[data-testid="operation-params"]').innerText();
    assert(/project\s+text, required:\s*A/.test(params), `the parameter is not shown as project, text, required, allowed A: ${params}`);
    await page.waitForFunction(
      ([name, id]) => document.querySelector(`[data-authorization-id="${id}"] [data-testid="authorization-operations"]`)?.textContent?.trim() === name,
      [OPERATION, authId],
      { timeout: STEP_TIMEOUT },
    );
    await shot(page, 'oauth-05-operation');
  }],

  ['Revoke asks first, then disables in Yett, revokes at Hydra and verifies by introspection', async (page) => {
    const r = row(page);
    await r.locator('[data-testid="revoke"]').click();
    const confirm = r.locator('[data-testid="revoke-confirm"]');
    await confirm.waitFor({ timeout: STEP_TIMEOUT });
    assert((await confirm.innerText()).includes(`(${PROVIDER_HOST})`), 'the confirmation does not name the provider host');
    assert((await text(r.locator('[data-testid="authorization-state"]'))) === 'Active', 'asking alone changed the state');
    await shot(page, 'oauth-06-revoke-confirm');
    await axeCheck(page, 'the revoke confirmation');
    await r.locator('[data-testid="revoke-confirm-button"]').click();
    const outcome = await first(r.locator('[data-testid="revoke-report"]'), r.locator('[data-testid="revoke-error"]'));
    if (outcome === 1) throw new Error(`Revoke failed: ${await text(r.locator('[data-testid="revoke-error"]'))}`);
    const report = r.locator('[data-testid="revoke-report"]');
    const got = await r.locator('[data-testid="revoke-step"]').evaluateAll((els) =>
      els.map((e) => ({ step: e.dataset.step, ok: e.dataset.ok, text: e.innerText })),
    );
    const summary = got.map((s) => `${s.step}=${s.ok}`).join(', ');
    // Client credentials: there is an access token and no refresh token.
    assert(
      got.length === 3 && got[0].step === 'local_disable' && got[1].step === 'provider_revocation' && got[2].step === 'verification',
      `the report's steps are [${summary}], want local_disable, provider_revocation, verification`,
    );
    for (const s of got) assert(s.ok === 'true', `step ${s.step} failed: ${s.text}`);
    assert(/Disabled in Yett/.test(got[0].text), `local disable reads: ${got[0].text}`);
    assert(/Revoked at the provider.*access token/s.test(got[1].text), `provider revocation reads: ${got[1].text}`);
    assert(/Verified.*introspection reports the access token inactive/s.test(got[2].text), `verification reads: ${got[2].text}`);
    assert((await r.locator('[data-testid="revoke-retry"]').count()) === 0, 'the report says a retry is pending');
    assert(await report.isVisible(), 'the report is not visible');
    await shot(page, 'oauth-07-revoke-report');
    await axeCheck(page, 'the revocation report');
  }],

  ['the row shows revoked, and nothing new can use it', async (page) => {
    const r = row(page);
    await page.waitForFunction(
      (id) => document.querySelector(`[data-authorization-id="${id}"] [data-testid="authorization-state"]`)?.textContent?.trim() === 'Revoked',
      authId,
      { timeout: STEP_TIMEOUT },
    );
    assert((await r.locator('[data-testid="revoke"]').count()) === 0, 'Revoke is still offered on a revoked row');
    assert((await r.locator('[data-testid="authorization-revocation"]').count()) === 0, 'the row says the revocation at the provider is pending or failed');
    assert((await r.locator('[data-testid="edit-inventory"]').count()) === 0, 'Edit inventory is offered on a revoked row');
    // The editor offers only accounts that are not revoked; with none left it is not shown.
    if ((await byId(page, 'operation-form').count()) > 0) {
      const offered = await byId(page, 'op-auth').locator('option').evaluateAll((os) => os.map((o) => o.value));
      assert(!offered.includes(authId), 'the operation editor still offers the revoked authorization');
    } else {
      await byId(page, 'operations-need-account').waitFor({ timeout: STEP_TIMEOUT });
    }
    assert((await byId(page, 'uncontrolled-summary').count()) === 0, 'a revoked row is counted as not under control');
    await shot(page, 'oauth-08-revoked');
  }],

  ['authorization code: a public client, unattended (the warning shows), development; the panel shows the sign-in address', async (page) => {
    await byId(page, 'connect-start').click();
    await byId(page, 'connect-form').waitFor({ timeout: STEP_TIMEOUT });
    await byId(page, 'oc-provider').selectOption({ label: 'Other provider' });
    await byId(page, 'oc-issuer').fill(ISSUER);
    await byId(page, 'oc-discover').click();
    const found = await first(byId(page, 'oc-discovered'), byId(page, 'connect-form-error'));
    if (found === 1) throw new Error(`Discover failed: ${await text(byId(page, 'connect-form-error'))}`);
    assert((await byId(page, 'oc-authorizationEndpoint').inputValue()) === `${ISSUER}/oauth2/auth`, 'authorization endpoint not filled in');
    await byId(page, 'oc-name').fill(CODE_NAME);
    await byId(page, 'oc-endpoints').locator('summary').click();
    await byId(page, 'oc-introspectionEndpoint').fill(INTROSPECTION);
    await byId(page, 'oc-client-id').fill(PUBLIC_CLIENT_ID);
    await byId(page, 'oc-auth-none').check();
    assert((await byId(page, 'oc-secret').count()) === 0, 'a client secret field is shown for client authentication none');
    await byId(page, 'oc-scopes').fill('openid offline_access');
    await byId(page, 'oc-environment').selectOption('development');
    await byId(page, 'oc-flow-code').check();
    assert((await byId(page, 'oc-unattended-warning').count()) === 0, 'the unattended warning shows before Unattended is checked');
    await byId(page, 'oc-unattended').check();
    const warning = byId(page, 'oc-unattended-warning');
    await warning.waitFor({ timeout: STEP_TIMEOUT });
    assert(await warning.isVisible(), 'the unattended warning is not visible');
    assert(/long-lived refresh token/.test(await text(warning)), `the unattended warning reads: ${await text(warning)}`);
    await byId(page, 'oc-owner').fill(CODE_OWNER);
    await byId(page, 'oc-backup').fill(CODE_BACKUP);
    await shot(page, 'oauth-09-code-form');
    const before = browserOpened().length;
    await byId(page, 'oc-submit').click();
    const outcome = await first(
      byId(page, 'flow-panel'),
      byId(page, 'connect-form-error'),
      page.locator('[data-testid^="connect-error-"]').first(),
      byId(page, 'connections-notice'),
    );
    if (outcome === 1) throw new Error(`Connect failed: ${await text(byId(page, 'connect-form-error'))}`);
    if (outcome === 2) {
      const field = page.locator('[data-testid^="connect-error-"]').first();
      throw new Error(`the form refused ${await field.getAttribute('data-testid')}: ${await text(field)}`);
    }
    if (outcome === 3) throw new Error(`connected without a sign-in: ${await text(byId(page, 'connections-notice'))}`);
    const panel = byId(page, 'flow-panel');
    assert((await panel.getAttribute('data-state')) === 'waiting', `the flow panel is ${await panel.getAttribute('data-state')}, not waiting`);
    assert(/Finish signing in in your browser/.test(await panel.innerText()), 'the panel does not say to finish in the browser');
    signInUrl = await byId(page, 'flow-auth-url').inputValue();
    const u = new URL(signInUrl);
    const q = u.searchParams;
    assert(`${u.origin}${u.pathname}` === `${ISSUER}/oauth2/auth`, `the sign-in address is not Hydra's authorization endpoint: ${u.origin}${u.pathname}`);
    assert(q.get('response_type') === 'code', `response_type is ${q.get('response_type')}`);
    assert(q.get('client_id') === PUBLIC_CLIENT_ID, `client_id is ${q.get('client_id')}`);
    assert(q.get('code_challenge_method') === 'S256' && /^[A-Za-z0-9_-]{43}$/.test(q.get('code_challenge') ?? ''), 'the address carries no S256 PKCE challenge');
    assert(/^http:\/\/127\.0\.0\.1:\d+\/callback$/.test(q.get('redirect_uri') ?? ''), `the redirect is not a loopback callback: ${q.get('redirect_uri')}`);
    assert((q.get('state') ?? '').length >= 16, 'the address carries no state');
    const scopes = (q.get('scope') ?? '').split(' ');
    assert(scopes.includes('openid') && scopes.includes('offline_access'), `the scopes asked are ${q.get('scope')}`);
    // The app asked the system browser (e2e.sh's stub) to open the same address.
    for (let i = 0; i < 50 && browserOpened().length === before; i++) await page.waitForTimeout(100);
    const opened = browserOpened().slice(before);
    assert(opened.length === 1 && opened[0] === signInUrl, `the app asked the system browser to open ${opened.length} address(es), want the panel's one`);
    await shot(page, 'oauth-10-code-waiting');
  }],

  ['a second tab signs in at Hydra (login and consent app) and lands on Yett\'s callback page', async (page) => {
    const tab = await page.context().newPage();
    try {
      const seen = [];
      tab.on('request', (r) => { if (r.isNavigationRequest()) seen.push(new URL(r.url()).origin + new URL(r.url()).pathname); });
      const resp = await tab.goto(signInUrl, { waitUntil: 'load', timeout: STEP_TIMEOUT });
      const landed = new URL(tab.url());
      const redirect = new URL(new URL(signInUrl).searchParams.get('redirect_uri'));
      assert(landed.origin === redirect.origin && landed.pathname === '/callback', `the tab ended at ${landed.origin}${landed.pathname}, not Yett's callback (went through ${seen.join(' → ')})`);
      assert(seen.some((s) => s.endsWith('/login')) && seen.some((s) => s.endsWith('/consent')), `the tab did not go through the login and consent app: ${seen.join(' → ')}`);
      assert(resp?.status() === 200, `the callback answered HTTP ${resp?.status()}`);
      const body = await tab.locator('body').innerText();
      assert(body.includes(`Yett connected ${CODE_NAME}. You can close this tab.`), `the callback page reads: ${body.slice(0, 300)}`);
      await shot(tab, 'oauth-11-code-callback');
    } finally {
      await tab.close();
    }
  }],

  ['the panel closes on the "oauth:flow" event and the row is listed: active, alice, development, authorization code, unattended', async (page) => {
    await byId(page, 'flow-panel').waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    assert(/Connected/.test(await text(byId(page, 'connections-notice'))), 'the notice does not say connected');
    const events = received.filter((f) => f.includes('oauth:flow') && f.includes('"connected"'));
    assert(events.length > 0, 'no "oauth:flow" event with the connected state reached the page');
    const r = codeRow(page);
    await r.waitFor({ timeout: STEP_TIMEOUT });
    codeId = (await r.getAttribute('data-authorization-id')) ?? '';
    assert(codeId !== '' && codeId !== authId, 'the row carries no new authorization id');
    assert((await text(r.locator('[data-testid="authorization-state"]'))) === 'Active', 'the state is not Active');
    assert((await text(r.locator('[data-testid="authorization-host"]'))) === PROVIDER_HOST, `the provider host is not ${PROVIDER_HOST}`);
    assert((await text(r.locator('[data-testid="authorization-environment"]'))) === 'development', 'the environment is not development');
    assert((await text(r.locator('[data-testid="authorization-account"]'))) === ALICE, `the account is not ${ALICE}`);
    const scopes = await r.locator('[data-testid="authorization-scopes"] code').allTextContents();
    assert(scopes.includes('openid') && scopes.includes('offline_access'), `the scopes are ${scopes.join(' ')}`);
    assert((await text(r.locator('[data-testid="authorization-owner"]'))) === CODE_OWNER, 'the owner is not shown');
    assert((await text(r.locator('[data-testid="authorization-backup"]'))) === CODE_BACKUP, 'the backup revoker is not shown');
    const all = await r.innerText();
    assert(/Connected by\s+Sign-in in the browser \(authorization code \+ PKCE\)/.test(all), `the row does not say it was connected by authorization code: ${all}`);
    assert(all.includes('Unattended'), 'the row is not marked unattended');
    assert((await r.locator('[data-testid="authorization-uncontrolled"]').count()) === 0, `the row is flagged not under control: ${all}`);
    assert((await byId(page, 'uncontrolled-summary').count()) === 0, 'the list says an authorization is not under control');
    await shot(page, 'oauth-12-code-connected');
  }],

  ['Revoke the signed-in account: the refresh and the access token revoked at Hydra, each verified by introspection', async (page) => {
    const r = codeRow(page);
    await r.locator('[data-testid="revoke"]').click();
    await r.locator('[data-testid="revoke-confirm"]').waitFor({ timeout: STEP_TIMEOUT });
    await r.locator('[data-testid="revoke-confirm-button"]').click();
    const outcome = await first(r.locator('[data-testid="revoke-report"]'), r.locator('[data-testid="revoke-error"]'));
    if (outcome === 1) throw new Error(`Revoke failed: ${await text(r.locator('[data-testid="revoke-error"]'))}`);
    const got = await r.locator('[data-testid="revoke-step"]').evaluateAll((els) =>
      els.map((e) => ({ step: e.dataset.step, ok: e.dataset.ok, text: e.innerText })),
    );
    const summary = got.map((s) => `${s.step}=${s.ok}`).join(', ');
    const want = ['local_disable', 'provider_revocation', 'verification', 'provider_revocation', 'verification'];
    assert(got.length === want.length && got.every((s, i) => s.step === want[i]), `the report's steps are [${summary}], want ${want.join(', ')}`);
    for (const s of got) assert(s.ok === 'true', `step ${s.step} failed: ${s.text}`);
    assert(/Disabled in Yett/.test(got[0].text), `local disable reads: ${got[0].text}`);
    // Each token once: revoked, then verified inactive by introspection.
    for (const [i, token] of [[1, 'refresh token'], [3, 'access token']]) {
      assert(new RegExp(`Revoked at the provider.*${token}`, 's').test(got[i].text), `the ${token}'s revocation reads: ${got[i].text}`);
      assert(new RegExp(`Verified.*introspection reports the ${token} inactive`, 's').test(got[i + 1].text), `the ${token}'s verification reads: ${got[i + 1].text}`);
    }
    assert((await r.locator('[data-testid="revoke-retry"]').count()) === 0, 'the report says a retry is pending');
    await shot(page, 'oauth-13-code-revoke-report');
  }],

  ['the signed-in account\'s row shows revoked', async (page) => {
    const r = codeRow(page);
    await page.waitForFunction(
      (id) => document.querySelector(`[data-authorization-id="${id}"] [data-testid="authorization-state"]`)?.textContent?.trim() === 'Revoked',
      codeId,
      { timeout: STEP_TIMEOUT },
    );
    assert((await r.locator('[data-testid="revoke"]').count()) === 0, 'Revoke is still offered on a revoked row');
    assert((await r.locator('[data-testid="authorization-revocation"]').count()) === 0, 'the row says the revocation at the provider is pending or failed');
    assert((await byId(page, 'uncontrolled-summary').count()) === 0, 'a revoked row is counted as not under control');
    await shot(page, 'oauth-14-code-revoked');
  }],

  ['after revoking, the client secret is still nowhere the page can see', async (page) => {
    await noSecretInPage(page);
    assert(sent.filter((f) => f.includes(SECRET)).length === 1, 'the secret left the page again after connecting');
  }],
];

steps.push(['axe found nothing serious, critical or moderate on any screen (figure: screens checked, minor count)', async () => axeSummary()]);

runSteps(steps, { rec: { received, sent, consoleLines }, failureShot: 'oauth-failure' });
