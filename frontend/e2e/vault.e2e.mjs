// End-to-end test of the vault UI in a real browser against the real app.
//
// The app's Wails dev server (a `-tags dev` build on a throwaway vault) serves
// the UI with live Go bindings at YETT_E2E_URL. This script drives Debian's
// Chromium through playwright-core: set up a vault, lock, fail an unlock,
// unlock, add a credential holding a canary secret, and see it listed
// redacted; then read the lock and unlock back from the audit log in the
// Activity view (verified intact) and the honest empty Sessions view. The canary must appear nowhere the page can see: DOM, HTML,
// console, or any message the backend sent to the page (every reply and every
// vault:status event crosses the dev server's websocket, which is recorded).
//
// env: YETT_E2E_URL (default http://127.0.0.1:34115), YETT_ARTIFACTS
// (default ../artifacts from frontend/), YETT_E2E_CANARY (default random),
// YETT_E2E_PASSPHRASE (default random), YETT_CHROMIUM (default
// /usr/bin/chromium). The browser, recording and step runner are harness.mjs.
// Exits non-zero on any failure; the last line is "N passed, N failed".

import { randomBytes } from 'node:crypto';
import { agentSteps } from './agent-steps.mjs';
import { STEP_TIMEOUT, assert, byId, log, pageText, runSteps, shot } from './harness.mjs';

const URL_ = process.env.YETT_E2E_URL || 'http://127.0.0.1:34115';
const CANARY = process.env.YETT_E2E_CANARY || `CANARY-e2e-${randomBytes(8).toString('hex')}`;
// e2e.sh shares the passphrase with the OAuth script, which runs next
// against the same app and unlocks the vault again should it be locked.
const PASSPHRASE = process.env.YETT_E2E_PASSPHRASE || `e2e gate lattice ${randomBytes(6).toString('hex')}`;
const CREDENTIAL = `e2e-api-${randomBytes(3).toString('hex')}`;

let epochBeforeLock = 0;
const received = []; // every websocket frame the page received
const consoleLines = [];

async function epochShown(page) {
  return Number(await byId(page, 'status-epoch').textContent());
}

const steps = [
  ['the page loads with the Wails bridge', async (page) => {
    await page.goto(URL_, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => Boolean(window.go?.app?.VaultService && window.runtime), null, { timeout: STEP_TIMEOUT });
    assert((await page.title()) === 'Yett', `window title is "${await page.title()}", want "Yett"`);
  }],

  ['first run shows the setup screen', async (page) => {
    await page.waitForSelector('[data-testid="setup-screen"], [data-testid="unlock-screen"], [data-testid="shell"], [data-testid="damaged-screen"], [data-testid="app-error"]', { timeout: STEP_TIMEOUT });
    assert(await byId(page, 'setup-screen').isVisible(), 'expected a fresh, uninitialised throwaway vault');
    await shot(page, '01-setup');
  }],

  ['a short passphrase cannot create the vault', async (page) => {
    await byId(page, 'setup-passphrase').fill('too short');
    await byId(page, 'setup-confirm').fill('too short');
    assert(await byId(page, 'setup-submit').isDisabled(), 'Create is enabled for a 9-character passphrase');
  }],

  ['creating the vault opens it', async (page) => {
    await byId(page, 'setup-passphrase').fill(PASSPHRASE);
    await byId(page, 'setup-confirm').fill(PASSPHRASE);
    await byId(page, 'setup-submit').click();
    await byId(page, 'shell').waitFor({ timeout: STEP_TIMEOUT });
    assert((await byId(page, 'status-state').textContent()).trim() === 'unlocked', 'status badge is not "unlocked"');
    await shot(page, '02-unlocked-empty');
  }],

  ['Lock now locks the vault and raises the epoch', async (page) => {
    epochBeforeLock = await epochShown(page);
    await byId(page, 'lock-now').click();
    await byId(page, 'unlock-screen').waitFor({ timeout: STEP_TIMEOUT });
    await shot(page, '03-locked');
  }],

  ['a wrong passphrase is refused with a clear error', async (page) => {
    await byId(page, 'unlock-passphrase').fill('not the passphrase at all');
    await byId(page, 'unlock-submit').click();
    const err = byId(page, 'unlock-error');
    await err.waitFor({ timeout: STEP_TIMEOUT });
    const text = (await err.textContent()).trim();
    assert(text.length > 0, 'the unlock error is empty');
    assert(await byId(page, 'unlock-screen').isVisible(), 'left the unlock screen after a wrong passphrase');
    assert((await byId(page, 'unlock-passphrase').inputValue()) === '', 'the passphrase field was not cleared');
    log(`wrong passphrase error: "${text}"`);
    await shot(page, '04-wrong-passphrase');
  }],

  ['the right passphrase unlocks with a new epoch', async (page) => {
    await byId(page, 'unlock-passphrase').fill(PASSPHRASE);
    // One failure may start a short wait; the button stays disabled for it.
    await page.waitForFunction(() => !document.querySelector('[data-testid="unlock-submit"]')?.disabled, null, { timeout: STEP_TIMEOUT });
    await byId(page, 'unlock-submit').click();
    await byId(page, 'shell').waitFor({ timeout: STEP_TIMEOUT });
    const after = await epochShown(page);
    assert(after > epochBeforeLock, `epoch ${after} after lock and unlock is not above ${epochBeforeLock}`);
  }],

  ['a credential is added and its secret field emptied', async (page) => {
    await byId(page, 'cred-name').fill(CREDENTIAL);
    await byId(page, 'cred-secret').fill(CANARY);
    await byId(page, 'cred-hosts').fill('api.example.com');
    await byId(page, 'cred-paths').fill('/v1/');
    await byId(page, 'cred-approval-per-call').check();
    await byId(page, 'cred-submit').click();
    await byId(page, 'credential-added').waitFor({ timeout: STEP_TIMEOUT });
    assert((await byId(page, 'cred-secret').inputValue()) === '', 'the secret field still holds a value');
  }],

  ['the credential is listed redacted', async (page) => {
    const row = page.locator('[data-testid="credential-row"]', { hasText: CREDENTIAL });
    await row.waitFor({ timeout: STEP_TIMEOUT });
    const text = await row.innerText();
    assert(text.includes('api.example.com'), 'host missing from the listed credential');
    assert(text.includes('/v1/'), 'path prefix missing from the listed credential');
    assert(/every call/i.test(text), 'approval mode missing from the listed credential');
    assert(text.includes('Bearer ••••'), 'format missing from the listed credential');
    await shot(page, '05-credential-listed');
  }],

  ['the canary secret is nowhere in the page', async (page) => {
    const text = await pageText(page);
    assert(text.includes(CREDENTIAL), 'self-check: the page text does not even hold the credential name');
    assert(!text.includes(CANARY), 'the canary secret is in the page DOM, HTML, an input or web storage');
    assert(!consoleLines.some((l) => l.includes(CANARY)), 'the canary secret was written to the browser console');
  }],

  ['no reply or event the page received holds the canary or the passphrase', async (page) => {
    // Self-checks first, so this cannot pass by recording nothing.
    assert(received.some((f) => f.includes(CREDENTIAL)), 'self-check: no received frame carried the credential (AddCredential or ListCredentials reply)');
    assert(received.some((f) => f.includes('vault:status')), 'self-check: no vault:status event was received');
    const leaks = received.filter((f) => f.includes(CANARY) || f.includes(PASSPHRASE));
    assert(leaks.length === 0, `${leaks.length} received frame(s) hold the canary or the passphrase`);
    const text = await pageText(page);
    assert(!text.includes(PASSPHRASE), 'the passphrase is still in the page');
    log(`checked ${received.length} received frames`);
  }],

  ['removing the credential asks first, then removes it', async (page) => {
    const row = page.locator('[data-testid="credential-row"]', { hasText: CREDENTIAL });
    await row.locator('[data-testid="credential-remove"]').click();
    await row.locator('[data-testid="credential-remove-confirm"]').waitFor({ timeout: STEP_TIMEOUT });
    await row.locator('[data-testid="credential-remove-confirm"]').click();
    await row.waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    await shot(page, '06-removed');
  }],

  ['Activity shows the lock and unlock from the audit log, which verifies intact', async (page) => {
    await byId(page, 'nav-activity').click();
    const locked = page.locator('[data-testid="activity-item"][data-type="vault_locked"]');
    await locked.first().waitFor({ timeout: STEP_TIMEOUT });
    assert(/locked by you/.test(await locked.first().innerText()), 'the lock entry does not say it was locked by the person');
    const unlocked = page.locator('[data-testid="activity-item"][data-type="vault_unlocked"]');
    // Created (first unlock) and the unlock after the wrong passphrase.
    assert((await unlocked.count()) >= 2, `expected 2 vault_unlocked entries, saw ${await unlocked.count()}`);
    await page.waitForFunction(() => document.querySelector('[data-testid="audit-state"]')?.textContent === 'Intact', null, { timeout: STEP_TIMEOUT });
    const entries = await byId(page, 'audit-entries').textContent();
    assert(/^\d+ entries$/.test(entries.trim()) && parseInt(entries, 10) >= 3, `audit entries "${entries}"`);
    assert((await byId(page, 'audit-banner').count()) === 0, 'the audit banner is shown for an intact log');
    await shot(page, '07-activity');
  }],

  ['Sessions says honestly that no agent session is recorded', async (page) => {
    await byId(page, 'nav-sessions').click();
    const empty = byId(page, 'sessions-empty');
    await empty.waitFor({ timeout: STEP_TIMEOUT });
    assert(/No agent sessions recorded yet/.test(await empty.innerText()), 'the empty state does not say so');
    await shot(page, '08-sessions-empty');
  }],

  ['the audit views carry neither the canary nor the passphrase', async (page) => {
    assert(received.some((f) => f.includes('vault_locked')), 'self-check: no received frame carried the activity list');
    const leaks = received.filter((f) => f.includes(CANARY) || f.includes(PASSPHRASE));
    assert(leaks.length === 0, `${leaks.length} received frame(s) hold the canary or the passphrase`);
    assert(!(await pageText(page)).includes(CANARY), 'the canary secret is in the page');
  }],

  ['Live sessions reads the real ApprovalService: no agent, no card', async (page) => {
    assert(await page.evaluate(() => Boolean(window.go?.app?.ApprovalService)), 'ApprovalService is not bound');
    await byId(page, 'nav-live-sessions').click();
    const empty = byId(page, 'live-sessions-empty');
    await empty.waitFor({ timeout: STEP_TIMEOUT });
    assert(/No agent has a live session/.test(await empty.innerText()), 'the empty state does not say so');
    assert((await byId(page, 'approval-card').count()) === 0, 'an approval card is shown while no agent asked');
    assert((await byId(page, 'approval-badge').count()) === 0, 'the approvals badge is shown while no agent asked');
    await shot(page, '09-live-sessions-empty');
  }],
];

// A real agent through `yett mcp`: its card, the approval, the injected call
// and revoking its session.
const agentRun = agentSteps({ byId, shot, assert, CANARY, received, STEP_TIMEOUT });
steps.push(...agentRun.steps);

runSteps(steps, { rec: { received, consoleLines }, cleanup: () => agentRun.cleanup() });
