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
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentSteps } from './agent-steps.mjs';
import { sshSteps } from './ssh-steps.mjs';
import { STEP_TIMEOUT, assert, axeCheck, axeSummary, byId, log, pageText, runSteps, shot, shotSizes, chooseNeverVerify } from './harness.mjs';

const URL_ = process.env.YETT_E2E_URL || 'http://127.0.0.1:34115';
const CANARY = process.env.YETT_E2E_CANARY || `CANARY-e2e-${randomBytes(8).toString('hex')}`;
// e2e.sh shares the passphrase with the OAuth script, which runs next
// against the same app and unlocks the vault again should it be locked.
const PASSPHRASE = process.env.YETT_E2E_PASSPHRASE || `e2e gate lattice ${randomBytes(6).toString('hex')}`;
const CREDENTIAL = `e2e-api-${randomBytes(3).toString('hex')}`;

let epochBeforeLock = 0;
const received = []; // every websocket frame the page received
const consoleLines = [];

// The epoch is not on screen (it is jargon); the backend reports it.
async function epochShown(page) {
  return page.evaluate(async () => (await window.go.app.VaultService.Status()).epoch);
}

// Every view of the unlocked app, by its sidebar entry (as the page lists them).
async function sidebarViews(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('nav [data-testid^="nav-"]')].map((b) => b.getAttribute('data-testid').slice(4)),
  );
}

async function openView(page, id) {
  await byId(page, `nav-${id}`).click();
  await byId(page, `view-${id}`).waitFor({ timeout: STEP_TIMEOUT });
  // Views read the backend when they open; let them settle before looking.
  await page.waitForLoadState('networkidle').catch(() => {});
  await page.waitForTimeout(300);
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
    await axeCheck(page, 'setup');
    await shotSizes(page, 'setup');
    await byId(page, 'setup-recovery').click();
    await byId(page, 'recovery-sheet').waitFor({ timeout: STEP_TIMEOUT });
    await axeCheck(page, 'setup with the recovery sheet');
    await byId(page, 'recovery-close').click();
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
    // A new vault opens on how to connect an agent, with the real yett.
    await byId(page, 'view-connect').waitFor({ timeout: STEP_TIMEOUT });
    const command = (await byId(page, 'client-command').textContent()).trim();
    assert(/^claude mcp add --scope user yett -- \S*\/yett mcp$/.test(command) && !command.includes('/path/to'), `the Claude Code command is "${command}"`);
    await shot(page, '02-unlocked-empty');
  }],

  ['Claude Code gets Yett in one click: the change is shown first, only Yett’s entry is written, and it comes out again', async (page) => {
    const home = process.env.YETT_E2E_HOME;
    assert(home, 'YETT_E2E_HOME is not set: the app would write into the real home');
    const file = join(home, '.claude.json');
    const before = readFileSync(file, 'utf8');
    const state = byId(page, 'agent-state');
    await state.waitFor({ timeout: STEP_TIMEOUT });
    assert((await state.textContent()).includes('Not added yet'), `the state says "${await state.textContent()}"`);
    await byId(page, 'agent-add').click();
    await byId(page, 'agent-change').waitFor({ timeout: STEP_TIMEOUT });
    assert(readFileSync(file, 'utf8') === before, 'the file changed before Write it was pressed');
    const entry = await byId(page, 'agent-change-entry').textContent();
    assert(/"command": "\S*\/yett"/.test(entry) && !entry.includes('docs'), `the change shows ${entry}`);
    await shot(page, '02-connect-review');
    await axeCheck(page, 'the one-click change before it is written');
    await byId(page, 'agent-write').click();
    await byId(page, 'agent-written').waitFor({ timeout: STEP_TIMEOUT });
    await byId(page, 'client-tab-added-claude-code').waitFor({ timeout: STEP_TIMEOUT });
    const after = JSON.parse(readFileSync(file, 'utf8'));
    assert(after.mcpServers.yett?.command?.endsWith('/yett') && after.mcpServers.yett.args[0] === 'mcp', `Yett's entry is ${JSON.stringify(after.mcpServers.yett)}`);
    assert(after.mcpServers.docs.env.TOKEN === CANARY && after.numStartups === 2, 'the other server or a setting was lost');
    assert(readFileSync(`${file}.yett-backup`, 'utf8') === before, 'the backup is not the file as it was');
    assert((await byId(page, 'agent-state').textContent()).includes('Yett is in Claude Code'), 'the page does not say Yett is in Claude Code');
    await shot(page, '02-connect-added');
    await byId(page, 'agent-remove').click();
    await byId(page, 'agent-change').waitFor({ timeout: STEP_TIMEOUT });
    await byId(page, 'agent-write').click();
    await byId(page, 'agent-add').waitFor({ timeout: STEP_TIMEOUT });
    const removed = JSON.parse(readFileSync(file, 'utf8'));
    assert(!removed.mcpServers.yett && removed.mcpServers.docs, `after taking it out: ${JSON.stringify(Object.keys(removed.mcpServers))}`);
    assert(!(await pageText(page)).includes(CANARY), "the other server's token is in the page");
  }],

  ['Settings says approvals ask the system here, which cannot confirm a root Yett; Never is chosen', async (page) => {
    await chooseNeverVerify(page);
    await shot(page, '02b-verification-settings');
  }],

  ['Lock now locks the vault and raises the epoch', async (page) => {
    epochBeforeLock = await epochShown(page);
    await byId(page, 'lock-now').click();
    await byId(page, 'unlock-screen').waitFor({ timeout: STEP_TIMEOUT });
    await shot(page, '03-locked');
    await axeCheck(page, 'unlock');
    await shotSizes(page, 'unlock');
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
    await axeCheck(page, 'unlock after a wrong passphrase');
    const focused = await page.evaluate(() => document.activeElement?.getAttribute('data-testid'));
    assert(focused === 'unlock-passphrase', `focus after a wrong passphrase is on ${focused}, not the field`);
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
    await openView(page, 'credentials');
    await byId(page, 'credential-add').click();
    await byId(page, 'credential-form').waitFor({ timeout: STEP_TIMEOUT });
    await axeCheck(page, 'the add-credential form');
    // Submitting it empty links each error to its field and focuses the first.
    await byId(page, 'cred-submit').click();
    assert((await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))) === 'cred-name', 'focus is not on the first invalid field');
    await axeCheck(page, 'the add-credential form with errors');
    await byId(page, 'cred-name').fill(CREDENTIAL);
    await byId(page, 'cred-secret').fill(CANARY);
    await byId(page, 'cred-hosts').fill('api.example.com');
    await byId(page, 'cred-paths').fill('/v1/');
    await byId(page, 'cred-approval-per-call').check();
    await byId(page, 'cred-submit').click();
    await byId(page, 'credential-added').waitFor({ timeout: STEP_TIMEOUT });
    assert((await byId(page, 'credential-form').count()) === 0, 'the form is still open after adding');
  }],

  ['the credential is listed redacted', async (page) => {
    const row = page.locator('[data-testid="credential-row"]', { hasText: CREDENTIAL });
    await row.waitFor({ timeout: STEP_TIMEOUT });
    await row.locator('[data-testid="credential-details"]').click();
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

  ['editing, rotating and the overlap warning work against the real vault', async (page) => {
    const row = page.locator('[data-testid="credential-row"]', { hasText: CREDENTIAL });
    await row.locator('[data-testid="credential-edit"]').click();
    await row.locator('[data-testid="credential-form"]').waitFor({ timeout: STEP_TIMEOUT });
    await axeCheck(page, 'the edit form');
    await row.locator('[data-testid="cred-paths"]').fill('/v1/\n/v2/');
    await row.locator('[data-testid="cred-submit"]').click();
    await page.waitForFunction(() => /version 2/.test(document.querySelector('[data-testid="credential-added"]')?.textContent ?? ''), null, { timeout: STEP_TIMEOUT });
    await row.locator('[data-testid="credential-rotate"]').click();
    await row.locator('[data-testid="rotate-form"]').waitFor({ timeout: STEP_TIMEOUT });
    await axeCheck(page, 'the rotate form');
    await row.locator('[data-testid="rotate-secret"]').fill(`${CANARY}-rotated`);
    await row.locator('[data-testid="rotate-submit"]').click();
    await page.waitForFunction(() => /New secret saved .*version 3/.test(document.querySelector('[data-testid="credential-added"]')?.textContent ?? ''), null, { timeout: STEP_TIMEOUT });
    // A second credential on the same host: the form says which one a call would use.
    await byId(page, 'credential-add').click();
    await byId(page, 'cred-hosts').fill('api.example.com');
    await byId(page, 'cred-paths').fill('/v1/');
    const overlap = byId(page, 'cred-overlap');
    await overlap.waitFor({ timeout: STEP_TIMEOUT });
    const words = await overlap.innerText();
    assert(words.includes(CREDENTIAL) && /https:\/\/api\.example\.com\/v1\//.test(words), `overlap warning: ${words}`);
    await axeCheck(page, 'the add form with an overlap warning');
    await page.keyboard.press('Escape');
    await byId(page, 'credential-form').waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
  }],

  ['an encrypted backup is exported, and restoring it brings back what was removed', async (page) => {
    await openView(page, 'settings');
    await byId(page, 'export-pass').fill(PASSPHRASE);
    await byId(page, 'export-submit').click();
    const done = byId(page, 'backup-done');
    await done.waitFor({ timeout: STEP_TIMEOUT });
    log(`backup: ${(await done.innerText()).trim()}`);
    await openView(page, 'credentials');
    const row = page.locator('[data-testid="credential-row"]', { hasText: CREDENTIAL });
    await row.locator('[data-testid="credential-remove"]').click();
    await row.locator('[data-testid="credential-remove-confirm"]').click();
    await row.waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    await openView(page, 'settings');
    await byId(page, 'restore-choose').click();
    await byId(page, 'restore-confirm').waitFor({ timeout: STEP_TIMEOUT });
    await axeCheck(page, 'the restore confirmation');
    await byId(page, 'restore-pass').fill(PASSPHRASE);
    await byId(page, 'restore-submit').click();
    // The page that asked stays on screen (the restore locks and unlocks).
    await page.waitForFunction(() => /was restored/.test(document.querySelector('[data-testid="backup-done"]')?.textContent ?? ''), null, { timeout: STEP_TIMEOUT });
    assert(await byId(page, 'view-settings').isVisible(), 'Settings is no longer on screen after the restore');
    await openView(page, 'credentials');
    await page.locator('[data-testid="credential-row"]', { hasText: CREDENTIAL }).waitFor({ timeout: STEP_TIMEOUT });
  }],

  ['removing the credential asks first, removes it, and Undo brings it back for 30 seconds', async (page) => {
    await openView(page, 'credentials');
    const row = page.locator('[data-testid="credential-row"]', { hasText: CREDENTIAL });
    await row.locator('[data-testid="credential-remove"]').click();
    await row.locator('[data-testid="credential-remove-confirm"]').waitFor({ timeout: STEP_TIMEOUT });
    await axeCheck(page, 'the remove confirmation');
    await row.locator('[data-testid="credential-remove-confirm"]').click();
    await row.waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    // Undo for 30 seconds: it comes back as it was, at its next version.
    await byId(page, 'credential-undo').waitFor({ timeout: STEP_TIMEOUT });
    await axeCheck(page, 'the undo notice');
    await shot(page, '06-removed-undo');
    await byId(page, 'credential-undo-button').click();
    await page.waitForFunction(() => /Restored .* as it was/.test(document.querySelector('[data-testid="credential-added"]')?.textContent ?? ''), null, { timeout: STEP_TIMEOUT });
    await row.locator('[data-testid="credential-remove"]').click();
    await row.locator('[data-testid="credential-remove-confirm"]').click();
    await row.waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    await shot(page, '06-removed');
  }],

  ['Activity shows the lock and unlock from the audit log, which verifies intact', async (page) => {
    await byId(page, 'nav-activity').click();
    const locked = page.locator('[data-testid="activity-item"][data-type="vault_locked"]');
    await locked.first().waitFor({ timeout: STEP_TIMEOUT });
    const lockTexts = await locked.allInnerTexts();
    assert(lockTexts.some((t) => /locked by you/.test(t)), 'no lock entry says it was locked by the person');
    await axeCheck(page, 'activity with entries');
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

  ['Sessions reads the real ApprovalService: no agent, no card', async (page) => {
    assert(await page.evaluate(() => Boolean(window.go?.app?.ApprovalService)), 'ApprovalService is not bound');
    await byId(page, 'nav-sessions').click();
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
const agentRun = agentSteps({ byId, shot, assert, CANARY, received, STEP_TIMEOUT, axeCheck });
steps.push(...agentRun.steps);

// SSH hosts: a host with a key Yett makes, pinned by trust on first use
// against a real sshd, and an agent's ssh.exec approved from its cards.
const sshRun = sshSteps({ byId, shot, assert, STEP_TIMEOUT, axeCheck });
steps.push(...sshRun.steps);

// Last, with what the walk left behind on every view (a credential, a
// revoked session, the log's entries).
steps.push(
  ['every view passes axe in light and dark, and holds at 820x560 and 1920x1080', async (page) => {
    const views = await sidebarViews(page);
    const problems = [];
    log(`views: ${views.join(', ')}`);
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const id of views) {
        await openView(page, id);
        // Every view is checked and photographed before the step fails, so
        // one run shows every problem.
        await axeCheck(page, `${id} (${scheme})`).catch((err) => problems.push(err.message));
        await shotSizes(page, scheme === 'light' ? id : `${id}-dark`);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    // The sidebar and the status bar stay in view on a long page.
    await page.setViewportSize({ width: 820, height: 560 });
    await openView(page, 'settings');
    await page.mouse.wheel(0, 5000);
    await page.waitForTimeout(200);
    for (const id of ['status-bar', 'lock-now']) {
      const box = await byId(page, id).boundingBox();
      assert(box && box.y >= 0 && box.y < 80, `${id} scrolled out of view (y=${box?.y})`);
    }
    const nav = await byId(page, 'nav-credentials').boundingBox();
    assert(nav && nav.y >= 0 && nav.y < 560, 'the sidebar scrolled out of view');
    await page.setViewportSize({ width: 1100, height: 820 });
    // Every check of this script has run by now: the figure, then the verdict.
    axeSummary();
    assert(problems.length === 0, problems.join('\n'));
  }],
);

runSteps(steps, { rec: { received, consoleLines }, cleanup: () => {
  agentRun.cleanup();
  sshRun.cleanup();
} });
