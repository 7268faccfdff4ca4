// Keyboard only: a person who never touches the mouse creates the vault,
// adds a credential and rotates its secret, approves a real agent's card
// (whose call then carries the new secret), chooses a time-boxed grant on a
// call's card and revokes it in Sessions, changes the passphrase, locks
// with Ctrl+L and unlocks with the new passphrase. Every step moves by Tab,
// Shift+Tab, Enter, Esc and the app's shortcuts; the page counts pointer
// and mouse events and the last step requires that there were none. The
// pending card is also checked with axe-core and photographed at 820x560,
// open (in the page's column, above the view) and folded into its badge.
//
// It needs a fresh vault, so e2e.sh runs it against an app of its own.
// env: YETT_E2E_URL, YETT_CLI (default build/bin/yett), YETT_ARTIFACTS,
// YETT_CHROMIUM.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import { startAgentRun } from './agent-run.mjs';
import { STEP_TIMEOUT, assert, axeCheck, axeSummary, byId, log, pageText, runSteps, shot, shotSizes, chooseNeverVerify } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const URL_ = process.env.YETT_E2E_URL || 'http://127.0.0.1:34115';
const CLI = process.env.YETT_CLI || join(here, '..', '..', 'build', 'bin', 'yett');
const PASSPHRASE = `keyboard gate ${randomBytes(6).toString('hex')}`;
const NEW_PASSPHRASE = `keyboard lattice ${randomBytes(6).toString('hex')}`;
const FIRST = `CANARY-kb-first-${randomBytes(6).toString('hex')}`;
const ROTATED = `CANARY-kb-rotated-${randomBytes(6).toString('hex')}`;
const received = [];
const consoleLines = [];
const arrivals = [];
let receiver;
let receiverHost = '';
let agent;

const focused = (page) => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.id ?? '');

/** Presses Tab (or Shift+Tab) until the element with testid has focus. */
async function tabTo(page, testid, { max = 120, back = false } = {}) {
  for (let i = 0; i < max; i++) {
    if ((await focused(page)) === testid) return;
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`${testid} was not reached with ${back ? 'Shift+Tab' : 'Tab'} (focus is on "${await focused(page)}")`);
}

/** Ctrl+N opens the Nth view in the sidebar; N is read from the sidebar. */
async function openByShortcut(page, id) {
  const order = await page.evaluate(() =>
    [...document.querySelectorAll('nav [data-testid^="nav-"]')].map((b) => b.getAttribute('data-testid')),
  );
  const n = order.indexOf(`nav-${id}`) + 1;
  assert(n >= 1 && n <= 9, `the sidebar has no shortcut for ${id} (${order.join(', ')})`);
  await page.keyboard.press(`Control+${n}`);
  await byId(page, `view-${id}`).waitFor({ timeout: STEP_TIMEOUT });
}

async function typeInto(page, testid, text) {
  await tabTo(page, testid);
  await page.keyboard.type(text);
}

function startReceiver() {
  receiver = createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    arrivals.push({
      path: req.url, first: auth === `Bearer ${FIRST}`, rotated: auth === `Bearer ${ROTATED}`, imported: auth === `Bearer ${IMPORTED}`, granted: auth === `Bearer ${GRANTED}`,
    });
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"received":true}');
  });
  return new Promise((ok) =>
    receiver.listen(0, '127.0.0.1', () => {
      receiverHost = `127.0.0.1:${receiver.address().port}`;
      ok();
    }),
  );
}

function startAgent(url, key) {
  const proc = spawn(process.execPath, [join(here, 'agent.mjs'), CLI, url, key], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const reply = new Promise((ok) => {
    createInterface({ input: proc.stdout }).once('line', (l) => ok(JSON.parse(l)));
    proc.once('exit', (code) => ok({ error: `agent exited (${code}): ${err}` }));
  });
  return { proc, reply, stop: () => proc.stdin.end() };
}

// ---- Import (issue 25): credentials from pasted lines and from a .env file ----
// Pasted lines are read and the import cancelled with Esc; then a .env file
// (answered by the dev build's file dialog from YETT_DEV_DIALOG_DIR, which
// e2e.sh sets) is read, two of its lines chosen and imported with the
// keyboard, and a real agent's call carries the imported value. Neither the
// page nor anything it received ever holds a value read.
const IMPORTED = `CANARY-kb-import-${randomBytes(6).toString('hex')}`;
const IMPORTED_SECOND = `CANARY-kb-import-second-${randomBytes(6).toString('hex')}`;
const IMPORT_UNCHOSEN = `CANARY-kb-import-unchosen-${randomBytes(6).toString('hex')}`;
const IMPORT_PASTED = `CANARY-kb-import-pasted-${randomBytes(6).toString('hex')}`;
const IMPORT_CANARIES = [IMPORTED, IMPORTED_SECOND, IMPORT_UNCHOSEN, IMPORT_PASTED];

/** Tabs to the control with testid inside the import entry titled name. */
async function tabToEntry(page, name, testid, { max = 200 } = {}) {
  for (let i = 0; i < max; i++) {
    const at = await page.evaluate(() => {
      const el = document.activeElement;
      const entry = el?.closest('[data-testid="import-entry"]');
      return { id: el?.getAttribute('data-testid') ?? '', title: entry?.querySelector('.title')?.textContent ?? '' };
    });
    if (at.id === testid && at.title === name) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`${testid} of the entry ${name} was not reached with Tab`);
}

async function noImportedValueInThePage(page, what) {
  const text = await pageText(page);
  assert(!IMPORT_CANARIES.some((c) => text.includes(c)), `a value read for the import is in the page ${what}`);
  assert(!received.some((f) => IMPORT_CANARIES.some((c) => f.includes(c))), `a value read for the import reached the page ${what}`);
}

const importSteps = [
  ['pasted lines are read from the keyboard, the field empties, and Esc cancels the import', async (page) => {
    await openByShortcut(page, 'credentials');
    await tabTo(page, 'credential-import');
    await page.keyboard.press('Enter');
    await byId(page, 'import-panel').waitFor({ timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'import-open', `the import panel put focus on "${await focused(page)}"`);
    await typeInto(page, 'import-text', `KB_PASTED=${IMPORT_PASTED}`);
    await axeCheck(page, 'the import panel with pasted lines, masked');
    await shot(page, 'kb-03-import-paste');
    await tabTo(page, 'import-read');
    await page.keyboard.press('Enter');
    await byId(page, 'import-preview-title').waitFor({ timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'import-preview-title', `after reading, focus is on "${await focused(page)}"`);
    assert((await byId(page, 'import-entry').count()) === 1, 'the pasted line is not the one entry');
    await noImportedValueInThePage(page, 'after the pasted lines were read');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('[data-testid="import-panel"]'), null, { timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'credential-import', `after Esc, focus is on "${await focused(page)}"`);
  }],

  ['a .env file is imported with the keyboard: two lines chosen, their hosts and paths set, who answers for them', async (page) => {
    const dir = process.env.YETT_DEV_DIALOG_DIR;
    assert(dir, 'YETT_DEV_DIALOG_DIR is not set: the dev build cannot answer the file dialog');
    writeFileSync(join(dir, `import-kb-${randomBytes(4).toString('hex')}.env`), [
      '# a project\'s secrets', `KBIMPORT_URL=http://${receiverHost}`, `export KBIMPORT_TOKEN="${IMPORTED}"`,
      `KB_SECOND='${IMPORTED_SECOND}' # the second`, `KB_UNCHOSEN=${IMPORT_UNCHOSEN}`, 'not a line of .env', '',
    ].join('\r\n'));
    await tabTo(page, 'credential-import');
    await page.keyboard.press('Enter');
    await byId(page, 'import-open').waitFor({ timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
    await byId(page, 'import-preview-title').waitFor({ timeout: STEP_TIMEOUT });
    const title = await byId(page, 'import-preview-title').innerText();
    assert(/5 entries, 4 can be imported/.test(title), `the preview says "${title}"`);
    await tabToEntry(page, 'KBIMPORT_TOKEN', 'import-choose');
    await page.keyboard.press('Space');
    await tabToEntry(page, 'KBIMPORT_TOKEN', 'import-hosts');
    const suggested = await page.evaluate(() => document.activeElement.value);
    assert(suggested === receiverHost, `the host suggested by KBIMPORT_URL is "${suggested}"`);
    await tabToEntry(page, 'KBIMPORT_TOKEN', 'import-paths');
    await page.keyboard.type('/kb-import/');
    await tabToEntry(page, 'KB_SECOND', 'import-choose');
    await page.keyboard.press('Space');
    await tabToEntry(page, 'KB_SECOND', 'import-hosts');
    await page.keyboard.type(receiverHost);
    await tabToEntry(page, 'KB_SECOND', 'import-paths');
    await page.keyboard.type('/kb-second/');
    await tabTo(page, 'import-alone');
    await page.keyboard.press('Space');
    await axeCheck(page, 'the import preview with two entries chosen');
    await shot(page, 'kb-04-import-preview');
    await shotSizes(page, 'import-preview');
    await noImportedValueInThePage(page, 'while choosing');
    await tabTo(page, 'import-submit');
    await page.keyboard.press('Enter');
    await byId(page, 'import-result-title').waitFor({ timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'import-result-title', `after importing, focus is on "${await focused(page)}"`);
    const result = await byId(page, 'import-result-title').innerText();
    assert(/^Imported 2 credentials$/.test(result.trim()), `the result says "${result}"`);
    // The list behind the result is read again at once, not only on Done.
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="credential-name"]')]
      .some((e) => e.textContent === 'KBIMPORT_TOKEN'), null, { timeout: STEP_TIMEOUT });
    await axeCheck(page, 'the import result');
    await shot(page, 'kb-05-import-result');
    await tabTo(page, 'import-done');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.querySelector('[data-testid="import-panel"]'), null, { timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'credential-import', `after Done, focus is on "${await focused(page)}"`);
    const names = await page.evaluate(() => [...document.querySelectorAll('[data-testid="credential-name"]')].map((e) => e.textContent));
    assert(names.includes('KBIMPORT_TOKEN') && names.includes('KB_SECOND') && !names.includes('KB_UNCHOSEN'), `the list shows ${names.join(', ')}`);
    await noImportedValueInThePage(page, 'after the import');
  }],

  ['a real agent\'s call under the imported credential carries the imported value', async (page) => {
    const before = arrivals.length;
    agent = startAgent(`http://${receiverHost}/kb-import/call`, 'kb-import');
    await byId(page, 'approval-card').waitFor({ timeout: STEP_TIMEOUT });
    await tabTo(page, 'approval-approve');
    await page.keyboard.press('Enter');
    const reply = await agent.reply;
    assert(!reply.error && !reply.isError, `the agent's call failed: ${JSON.stringify(reply)}`);
    const got = arrivals.slice(before);
    assert(got.length === 1 && got[0].imported && got[0].path === '/kb-import/call', `the receiver saw ${JSON.stringify(got)}`);
    agent.stop();
  }],
];
// ---- end of Import ----

// ---- First run (issue 25, items 3 and 6): the checklist, the confirmation of an answer, ----
// ---- two stacked cards, focus after setup and the view after unlock                     ----
// After setup focus is at the Connect page's start and its checklist ticks
// the vault only; the first approved call ticks the rest and the page says
// it worked (and never goes back to "Waiting for an agent…" once the agent
// exits). Each answer is confirmed in a polite live region that takes no
// focus and covers none of the next card's answers; with two cards, Ctrl+J
// reaches the oldest, A answers it, focus goes to the next card itself and
// D answers that one. Unlocking returns to the view that was open.
// Screenshots: the checklist before and after the first call and the
// confirmation, at 820x560 and 1920x1080.

const ARTIFACTS_DIR = process.env.YETT_ARTIFACTS || join(here, '..', '..', 'artifacts');

/** How long a card that took focus waits before A or D answer it (READ_MS in shortcuts.ts), and a little more. */
const CARD_READ_MS = 750;

/** The checklist's steps and whether each is ticked. */
const checklist = (page) =>
  page.evaluate(() =>
    Object.fromEntries([...document.querySelectorAll('[data-testid^="firstrun-"][data-done]')].map((li) => [li.dataset.testid.slice(9), li.dataset.done])),
  );

/**
 * Records each confirmation the moment it shows: its text, its region's
 * role, where it is and where the waiting cards' answers are, and whether
 * focus is inside it. Recorded by the page itself, so a confirmation that
 * has gone again by the time the test looks is still checked.
 */
async function watchConfirmations(page) {
  await page.evaluate(() => {
    window.__confirmations = [];
    let last = '';
    const box = (el) => {
      const r = el.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom, left: r.left, right: r.right };
    };
    new MutationObserver(() => {
      const region = document.querySelector('[data-testid="approval-confirmation"]');
      const text = region?.textContent.replace(/\s+/g, ' ').trim() ?? '';
      if (text === last) return;
      last = text;
      if (!text) return;
      window.__confirmations.push({
        text, role: region.getAttribute('role'), live: region.getAttribute('aria-live'), box: box(region.firstElementChild),
        answers: [...document.querySelectorAll('[data-testid="approval-approve"], [data-testid="approval-deny"]')].map(box),
        focusInside: region.contains(document.activeElement),
      });
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

/** The confirmation that said want, once it has shown. */
async function confirmation(page, want) {
  await page.waitForFunction((w) => window.__confirmations.some((c) => c.text === w), want, { timeout: STEP_TIMEOUT }).catch(async () => {
    throw new Error(`no confirmation said "${want}"; they said ${JSON.stringify(await page.evaluate(() => window.__confirmations.map((c) => c.text)))}`);
  });
  const c = await page.evaluate((w) => window.__confirmations.find((x) => x.text === w), want);
  assert(c.role === 'status' && c.live === 'polite', `the confirmation is not a polite live region: ${JSON.stringify(c)}`);
  assert(!c.focusInside, 'the confirmation took focus');
  const overlap = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  assert(!c.answers.some((a) => overlap(a, c.box)), `the confirmation covers a card's answers: ${JSON.stringify(c)}`);
  return c;
}

/** Waits until the card that has focus has been in front of the person long enough for A or D. */
async function cardRead(page) {
  await page.waitForFunction(
    (ms) => {
      const el = document.activeElement;
      return el?.getAttribute('data-testid') === 'approval-card' && Date.now() - Number(el.dataset.focusedAt ?? Date.now()) > ms;
    },
    CARD_READ_MS,
    { timeout: STEP_TIMEOUT },
  );
}

const firstRun = {
  afterSetup: [
    ['first run: focus starts at the Connect page, not the body, and its checklist ticks the vault only', async (page) => {
      const at = await focused(page);
      assert(at === 'view-connect', `after the vault was created, focus is on "${at}"`);
      await byId(page, 'firstrun').waitFor({ timeout: STEP_TIMEOUT });
      const ticks = await checklist(page);
      assert(ticks.vault === 'true' && ticks.credential === 'false' && ticks.agent === 'false' && ticks.call === 'false',
        `the checklist on a new vault: ${JSON.stringify(ticks)}`);
      await byId(page, 'connect-live-waiting').waitFor({ timeout: STEP_TIMEOUT });
      await watchConfirmations(page);
      await axeCheck(page, 'the first-run checklist on a new vault');
      await shotSizes(page, 'checklist-before');
    }],
  ],

  afterFirstCall: [
    ['first run: the first call ticks every step and the page says it worked, with what and what next; the agent\'s exit does not bring back "Waiting"', async (page) => {
      await confirmation(page, `Approved: node (pid ${agent.proc.pid}) may use “receiver” on ${receiverHost} during this run.`);
      await byId(page, 'connect-live-done').waitFor({ timeout: STEP_TIMEOUT });
      assert((await byId(page, 'connect-live-waiting').count()) === 0, 'the page went back to waiting for an agent');
      await page.waitForFunction(() => document.querySelector('[data-testid="firstrun-call"]')?.dataset.done === 'true', null, { timeout: STEP_TIMEOUT });
      const ticks = await checklist(page);
      assert(Object.values(ticks).every((d) => d === 'true'), `after the first call: ${JSON.stringify(ticks)}`);
      const worked = (await byId(page, 'firstrun-worked').innerText()).replace(/\s+/g, ' ');
      for (const want of ['It worked.', `called POST ${receiverHost}/kb-first through Yett and got 200`, '“receiver”']) {
        assert(worked.includes(want), `"It worked" says "${worked}", not "${want}"`);
      }
      const call = (await byId(page, 'firstrun-call').innerText()).replace(/\s+/g, ' ');
      assert(call.includes(`POST ${receiverHost}/kb-first answered 200 with “receiver”`), `the call step says "${call}"`);
      await axeCheck(page, 'the first-run checklist after the first call');
      await shotSizes(page, 'checklist-after');
    }],

    ['first run: "Connect another agent" leads back to the agent tabs, from the keyboard', async (page) => {
      await tabTo(page, 'firstrun-next-agent');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.activeElement?.getAttribute('role') === 'tab', null, { timeout: STEP_TIMEOUT });
    }],
  ],

  afterUnlock: [
    ['first run: unlocking returns to the view that was open when the vault locked, with focus at its start', async (page) => {
      await byId(page, 'view-settings').waitFor({ timeout: STEP_TIMEOUT });
      assert((await focused(page)) === 'view-settings', `after the unlock, focus is on "${await focused(page)}"`);
    }],
  ],

  stacked: [
    ['two stacked cards, from the keyboard: Ctrl+J reaches the oldest, A answers it, focus goes to the next card where D answers it, each answer confirmed beside the panel; the count shows twice', async (page) => {
      await watchConfirmations(page);
      await page.setViewportSize({ width: 820, height: 560 });
      const runs = [startAgent(`http://${receiverHost}/kb-stacked-1`, 'kb-stacked-1')];
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="approval-card"]').length === 1, null, { timeout: STEP_TIMEOUT });
      runs.push(startAgent(`http://${receiverHost}/kb-stacked-2`, 'kb-stacked-2'));
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="approval-card"]').length === 2, null, { timeout: STEP_TIMEOUT });
      try {
        // The count: the sidebar's badge and the panel's title; the status
        // bar's count only while the panel is folded.
        const counts = await page.evaluate(() => ({
          badge: document.querySelector('[data-testid="approval-badge-count"]')?.textContent,
          title: document.querySelector('[data-testid="approval-layer"] h2')?.textContent,
          status: document.querySelector('[data-testid="status-approvals"]') !== null,
        }));
        assert(counts.badge === '2' && /^2 agents/.test(counts.title) && !counts.status, `the count shows as ${JSON.stringify(counts)}`);
        await page.keyboard.press('Control+J');
        await cardRead(page);
        const oldest = await page.evaluate(() => document.activeElement.dataset.approvalId);
        const order = await page.evaluate(() => [...document.querySelectorAll('[data-testid="approval-card"]')].map((c) => c.dataset.approvalId));
        assert(oldest === order[0], `Ctrl+J focused ${oldest}, not the oldest of ${order.join(', ')}`);
        await page.keyboard.press('a');
        const approved = await runs[0].reply;
        assert(!approved.error && !approved.isError, `the first run's call failed: ${JSON.stringify(approved)}`);
        // Focus is on the next card itself, where D works after a moment.
        await page.waitForFunction(
          () => document.querySelectorAll('[data-testid="approval-card"]').length === 1 && document.activeElement?.getAttribute('data-testid') === 'approval-card',
          null,
          { timeout: STEP_TIMEOUT },
        );
        await confirmation(page, `Approved: node (pid ${runs[0].proc.pid}) may use “receiver” on ${receiverHost} during this run.`);
        await page.screenshot({ path: join(ARTIFACTS_DIR, 'e2e-820x560-confirmation.png') });
        await page.setViewportSize({ width: 1920, height: 1080 });
        await cardRead(page);
        await page.keyboard.press('d');
        const denied = await runs[1].reply;
        assert(denied.isError || denied.error, `the denied run's call went through: ${JSON.stringify(denied)}`);
        await confirmation(page, `Denied: node (pid ${runs[1].proc.pid}) may not use “receiver” on ${receiverHost}; it was told no.`);
        await page.screenshot({ path: join(ARTIFACTS_DIR, 'e2e-1920x1080-confirmation.png') });
        assert(!arrivals.some((a) => a.path === '/kb-stacked-2'), 'the denied call reached the receiver');
      } finally {
        for (const r of runs) r.stop();
        await page.setViewportSize({ width: 1100, height: 820 });
      }
    }],
  ],
};
// ---- end of First run ----

// ---- A grant, from the keyboard (issue 25's test list) ----
// A second credential for the receiver, bound to /kb-grant/ (more
// specifically than "receiver", as the form says), asks for every write:
// "Reads once per run, every write", chosen with the arrow keys. A real
// agent's run POSTs there; its session card is approved with A and its
// call's card answered with "Approve calls like this for 10 minutes",
// reached with Tab and pressed with Enter. The run's second POST under the
// grant's scope goes through with no card (the page itself counts every
// card that appears); the grant is revoked in Sessions with Tab and Enter,
// and the run's third POST asks again and is denied with D. The receiver
// sees the first two calls, with this credential's secret, and not the
// third. Screenshots: the form, the call card offering the grant and
// Sessions with the grant.
const GRANTED = `CANARY-kb-grant-${randomBytes(6).toString('hex')}`;
const grantURL = (n) => `http://${receiverHost}/kb-grant/${n}`;
const grantPost = (n) => ({ method: 'POST', url: grantURL(n), body: { from: 'e2e agent' }, idempotency_key: `kb-grant-${n}` });
let grantBefore = 0;

/** Counts, in the page, every approval card that appears from now on. */
async function watchCards(page) {
  await page.evaluate(() => {
    window.__cardsSeen = 0;
    window.__cardsDone = false;
    window.__cardsWatch?.disconnect();
    window.__cardsWatch = new MutationObserver((records) => {
      for (const r of records) {
        for (const n of r.addedNodes) {
          if (n instanceof Element && (n.matches('[data-testid="approval-card"]') || n.querySelector('[data-testid="approval-card"]'))) window.__cardsSeen++;
        }
      }
    });
    window.__cardsWatch.observe(document.body, { subtree: true, childList: true });
  });
}

/** Waits for the one waiting card to be of kind, and Ctrl+J puts focus on it. */
async function focusCard(page, kind) {
  await page.waitForFunction(
    (k) => {
      const cards = document.querySelectorAll('[data-testid="approval-card"]');
      return cards.length === 1 && cards[0].dataset.kind === k;
    },
    kind,
    { timeout: STEP_TIMEOUT },
  );
  await page.keyboard.press('Control+J');
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'approval-card', null, { timeout: STEP_TIMEOUT });
}

const grantArrivals = () => arrivals.slice(grantBefore).map((a) => `${a.path}${a.granted ? '' : ' (without the credential)'}`);

const grantSteps = [
  ['grant: a credential asking for every write is added from the keyboard, its approval chosen with the arrow keys, and the form says it wins under /kb-grant/', async (page) => {
    await openByShortcut(page, 'credentials');
    await tabTo(page, 'credential-add');
    await page.keyboard.press('Enter');
    await byId(page, 'credential-form').waitFor({ timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'cred-name', 'the form did not put focus on its first field');
    await page.keyboard.type('receiver-writes');
    await typeInto(page, 'cred-secret', GRANTED);
    await typeInto(page, 'cred-hosts', receiverHost);
    await typeInto(page, 'cred-paths', '/kb-grant/');
    // Tab enters the approval group at its checked radio; each arrow down
    // moves to the next choice and chooses it.
    await tabTo(page, 'cred-approval-session');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    const chosen = await page.evaluate(() => document.querySelector('[data-testid^="cred-approval-"]:checked')?.getAttribute('data-testid'));
    assert(chosen === 'cred-approval-writes' && (await focused(page)) === 'cred-approval-writes', `the approval chosen is ${chosen}, focus on "${await focused(page)}"`);
    await page.waitForFunction(() => document.querySelector('[data-testid="cred-overlap"]'), null, { timeout: STEP_TIMEOUT });
    const overlap = await byId(page, 'cred-overlap').innerText();
    assert(/Overlaps “receiver”.*Yett would use the new credential/.test(overlap), `the form says "${overlap}"`);
    await axeCheck(page, 'the credential form asking for every write, with an overlap');
    await shot(page, 'kb-06-grant-credential-form');
    await tabTo(page, 'cred-submit');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /^Added “receiver-writes”/.test(document.querySelector('[data-testid="credential-added"]')?.textContent ?? ''), null, { timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'credential-add', `focus after adding is on "${await focused(page)}"`);
  }],

  ['grant: a real agent POSTs; Ctrl+J and A approve its run, and on its call\'s card "Approve calls like this for 10 minutes", reached with Tab, is pressed with Enter', async (page) => {
    grantBefore = arrivals.length;
    agent = startAgentRun(CLI, grantURL(1), 'http.request', grantPost(1));
    await focusCard(page, 'session');
    await cardRead(page);
    await page.keyboard.press('a');
    // A write: the run's approval is not enough, the call has a card of its own.
    await focusCard(page, 'call');
    const card = byId(page, 'approval-card');
    const target = (await byId(page, 'approval-target').innerText()).replace(/\s+/g, ' ');
    assert(target.includes(`POST /kb-grant/1 on ${receiverHost}`) && target.includes('“receiver-writes”'), `the call card says "${target}"`);
    const words = (await byId(page, 'approval-grant-words').innerText()).replace(/\s+/g, ' ');
    assert(words.includes(`POST requests to ${receiverHost}/kb-grant/… with “receiver-writes”`) && words.includes(`(pid ${agent.proc.pid})`) && words.includes('10 minutes'),
      `the grant offered: "${words}"`);
    assert(arrivals.length === grantBefore, 'the call went out before its card was answered');
    await tabTo(page, 'approval-grant');
    assert((await page.evaluate(() => document.activeElement.closest('[data-testid="approval-card"]')?.dataset.kind)) === 'call', 'the grant reached is not the call card\'s');
    await axeCheck(page, 'a call card offering a grant, the grant focused');
    await shot(page, 'kb-07-grant-call-card');
    await page.keyboard.press('Enter');
    const reply = await agent.reply;
    assert(!reply.error && !reply.isError, `the granted card's call failed: ${JSON.stringify(reply)}`);
    assert(!JSON.stringify(reply).includes(GRANTED), 'the secret reached the agent');
    await card.waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    // The confirmation says what was given: the grant and its end, not "this once".
    await page.waitForFunction(() => /^Approved calls like this until /.test(document.querySelector('[data-testid="approval-confirmation"]')?.textContent?.trim() ?? ''), null, { timeout: STEP_TIMEOUT })
      .catch(async () => { throw new Error(`the confirmation says "${await byId(page, 'approval-confirmation').innerText().catch(() => '')}"`); });
    const confirmed = (await byId(page, 'approval-confirmation').innerText()).replace(/\s+/g, ' ');
    assert(confirmed.includes(`POST requests to ${receiverHost}/kb-grant/… with “receiver-writes” from`) && confirmed.includes(`(pid ${agent.proc.pid}) go without a card`) && !confirmed.includes('this once'),
      `the confirmation says "${confirmed}"`);
    const got = grantArrivals();
    assert(got.length === 1 && got[0] === '/kb-grant/1', `the receiver saw ${JSON.stringify(got)}`);
  }],

  ['grant: the run\'s second POST under the grant goes through, and no card appears', async (page) => {
    await watchCards(page);
    const call = agent.call('http.request', grantPost(2));
    // A card would hold the call until it timed out: fail at once instead.
    const raised = page.waitForFunction(() => window.__cardsSeen > 0 || window.__cardsDone, null, { timeout: STEP_TIMEOUT });
    const first = await Promise.race([call.then(() => 'reply'), raised.then(() => 'card', () => 'no reply')]);
    const seen = await page.evaluate(() => {
      window.__cardsDone = true;
      window.__cardsWatch.disconnect();
      return window.__cardsSeen;
    });
    await raised.catch(() => {});
    assert(first === 'reply' && seen === 0 && (await byId(page, 'approval-card').count()) === 0, `a call under the grant raised ${seen} card(s) (first came: ${first})`);
    const reply = await call;
    assert(!reply.error && !reply.isError, `the call under the grant failed: ${JSON.stringify(reply)}`);
    const got = grantArrivals();
    assert(got.length === 2 && got[1] === '/kb-grant/2', `the receiver saw ${JSON.stringify(got)}`);
  }],

  ['grant: Sessions shows it used once; Revoke grant is reached with Tab and pressed with Enter; the third POST asks again and D denies it', async (page) => {
    await openByShortcut(page, 'sessions');
    const grant = byId(page, 'live-grant');
    await grant.waitFor({ timeout: STEP_TIMEOUT });
    const text = (await grant.innerText()).replace(/\s+/g, ' ');
    assert(text.includes(`POST requests to ${receiverHost}/kb-grant/… with “receiver-writes”`) && text.includes('Used once'), `the grant says "${text}"`);
    await axeCheck(page, 'Sessions with a grant');
    await shot(page, 'kb-08-grant-sessions');
    await tabTo(page, 'revoke-grant');
    await page.keyboard.press('Enter');
    await grant.waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    // Focus is not lost with the button: it goes to the list's heading.
    await page.waitForFunction(() => document.activeElement?.id === 'live-title', null, { timeout: STEP_TIMEOUT }).catch(async () => {
      throw new Error(`after the revoke, focus is on "${await focused(page)}"`);
    });
    const third = agent.call('http.request', grantPost(3));
    await focusCard(page, 'call');
    await cardRead(page);
    await page.keyboard.press('d');
    const reply = await third;
    assert(reply.isError && reply.text.includes('DENIED'), `after the revoke: ${JSON.stringify(reply)}`);
    await byId(page, 'approval-card').waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    const got = grantArrivals();
    assert(got.length === 2 && got.every((p, i) => p === `/kb-grant/${i + 1}`), `the receiver saw ${JSON.stringify(got)}`);
    agent.stop();
  }],
];
// ---- end of A grant ----

const steps = [
  ['the page loads on a fresh vault, and pointer events are counted from now on', async (page) => {
    await page.goto(URL_, { waitUntil: 'domcontentloaded' });
    await byId(page, 'setup-screen').waitFor({ timeout: STEP_TIMEOUT });
    await page.evaluate(() => {
      window.__pointer = 0;
      for (const type of ['pointerdown', 'pointerup', 'mousedown', 'mouseup', 'mousemove', 'wheel', 'dblclick', 'contextmenu']) {
        window.addEventListener(type, (e) => e.isTrusted && window.__pointer++, true);
      }
    });
  }],

  ['the vault is created from the keyboard', async (page) => {
    await typeInto(page, 'setup-passphrase', PASSPHRASE);
    await typeInto(page, 'setup-confirm', PASSPHRASE);
    await tabTo(page, 'setup-submit');
    await page.keyboard.press('Enter');
    await byId(page, 'view-connect').waitFor({ timeout: STEP_TIMEOUT });
  }],

  ...firstRun.afterSetup,

  ['Settings, from the keyboard: approvals ask the system here, which cannot confirm a root Yett; Never is chosen with the arrow keys', async (page) => {
    await openByShortcut(page, 'settings');
    await chooseNeverVerify(page, {
      open: async () => {},
      pick: async () => {
        await tabTo(page, 'verification-mode');
        // The checked radio (the first) takes focus; an arrow up from the
        // first wraps to the last one, Never, and chooses it.
        await page.keyboard.press('ArrowUp');
      },
    });
  }],

  ['a credential is added with the keyboard (Ctrl+N, Add, fields, Enter)', async (page) => {
    await startReceiver();
    await openByShortcut(page, 'credentials');
    await tabTo(page, 'credential-add');
    await page.keyboard.press('Enter');
    await byId(page, 'credential-form').waitFor({ timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'cred-name', 'the form did not put focus on its first field');
    await page.keyboard.type('receiver');
    await typeInto(page, 'cred-secret', FIRST);
    await typeInto(page, 'cred-hosts', receiverHost);
    await tabTo(page, 'cred-submit');
    await page.keyboard.press('Enter');
    await byId(page, 'credential-added').waitFor({ timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'credential-add', `focus after adding is on "${await focused(page)}"`);
  }],

  ['a real agent is approved from the keyboard through the badge, and its call carries the first secret', async (page) => {
    agent = startAgent(`http://${receiverHost}/kb-first`, 'kb-first');
    await byId(page, 'approval-card').waitFor({ timeout: STEP_TIMEOUT });
    await openByShortcut(page, 'connect');
    await byId(page, 'connect-live-card').waitFor({ timeout: STEP_TIMEOUT });
    await axeCheck(page, 'a pending approval card');
    await shot(page, 'kb-01-card-on-connect');
    await shotSizes(page, 'pending-card');
    // Folded into a badge, at the small size, then opened again: all by keyboard.
    await page.setViewportSize({ width: 820, height: 560 });
    // At this size the open panel sits in the page's column above the view,
    // never over it.
    await page.waitForFunction(
      () => document.querySelector('[data-testid="approval-layer"]')?.getAttribute('data-placement') === 'docked',
      null,
      { timeout: STEP_TIMEOUT },
    );
    const placed = await page.evaluate(() => ({
      layerBottom: document.querySelector('[data-testid="approval-layer"]').getBoundingClientRect().bottom,
      mainTop: document.querySelector('main').getBoundingClientRect().top,
    }));
    assert(placed.layerBottom <= placed.mainTop + 1, `the card panel covers the page at 820x560: ${JSON.stringify(placed)}`);
    // At every size the card's answers are in view without scrolling, and
    // in a large window the panel is a column of its own: nothing of the
    // status bar or the page lies under it.
    for (const size of [{ width: 820, height: 560 }, { width: 1920, height: 1080 }, { width: 1100, height: 820 }]) {
      await page.setViewportSize(size);
      const at = await page.evaluate(() => {
        const box = (q) => document.querySelector(q).getBoundingClientRect();
        const layer = box('[data-testid="approval-layer"]');
        return {
          layer: { left: layer.left, top: layer.top, bottom: layer.bottom },
          placement: document.querySelector('[data-testid="approval-layer"]').getAttribute('data-placement'),
          approve: box('[data-testid="approval-approve"]'), deny: box('[data-testid="approval-deny"]'),
          status: box('[data-testid="status-bar"]'), main: box('main'), height: window.innerHeight,
        };
      });
      const visible = (b) => b.top >= Math.max(0, at.layer.top) - 1 && b.bottom <= Math.min(at.height, at.layer.bottom) + 1;
      assert(visible(at.approve) && visible(at.deny), `at ${size.width}x${size.height} the card's answers are out of view: ${JSON.stringify(at)}`);
      if (at.placement === 'over') {
        assert(at.status.right <= at.layer.left + 1 && at.main.right <= at.layer.left + 1,
          `at ${size.width}x${size.height} the panel covers the status bar or the page: ${JSON.stringify(at)}`);
      }
      await page.screenshot({ path: join(process.env.YETT_ARTIFACTS || join(here, '..', '..', 'artifacts'), `e2e-${size.width}x${size.height}-pending-card-answers.png`) });
    }
    await page.setViewportSize({ width: 820, height: 560 });
    await tabTo(page, 'approval-fold');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.querySelector('[data-testid="approval-layer"]'), null, { timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'approval-badge', `focus did not follow the card into its badge: "${await focused(page)}"`);
    await axeCheck(page, 'a pending card folded into a badge');
    await page.screenshot({ path: join(process.env.YETT_ARTIFACTS || join(here, '..', '..', 'artifacts'), 'e2e-820x560-pending-card-folded.png') });
    // Ctrl+J goes to the oldest waiting card, from anywhere.
    await page.setViewportSize({ width: 1100, height: 820 });
    await page.keyboard.press('Control+J');
    await byId(page, 'approval-card').waitFor({ timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'approval-card', `Ctrl+J put focus on "${await focused(page)}"`);
    // From the card, Tab reaches its Deny first; A approves the card that
    // has focus.
    await page.keyboard.press('Tab');
    assert((await focused(page)) === 'approval-deny', `Tab from the card went to "${await focused(page)}"`);
    await page.keyboard.press('a');
    const reply = await agent.reply;
    assert(!reply.error && !reply.isError, `the agent's call failed: ${JSON.stringify(reply)}`);
    await byId(page, 'connect-live-session').waitFor({ timeout: STEP_TIMEOUT });
    await shot(page, 'kb-02-session-on-connect');
    assert(arrivals.length === 1 && arrivals[0].first, `the receiver saw ${JSON.stringify(arrivals)}`);
    agent.stop();
  }],

  ...firstRun.afterFirstCall,

  ['the secret is rotated from the keyboard, and the next agent call carries the new one', async (page) => {
    await openByShortcut(page, 'credentials');
    await tabTo(page, 'credential-rotate');
    await page.keyboard.press('Enter');
    await byId(page, 'rotate-form').waitFor({ timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'rotate-secret', 'the rotate form did not focus its field');
    await page.keyboard.type(ROTATED);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /New secret saved/.test(document.querySelector('[data-testid="credential-added"]')?.textContent ?? ''), null, { timeout: STEP_TIMEOUT });
    agent = startAgent(`http://${receiverHost}/kb-rotated`, 'kb-rotated');
    await byId(page, 'approval-card').waitFor({ timeout: STEP_TIMEOUT });
    await tabTo(page, 'approval-approve');
    await page.keyboard.press('Enter');
    const reply = await agent.reply;
    assert(!reply.error && !reply.isError, `the agent's second call failed: ${JSON.stringify(reply)}`);
    assert(arrivals.length === 2 && arrivals[1].rotated && !arrivals[1].first, `the second call carried ${JSON.stringify(arrivals[1])}`);
    agent.stop();
  }],

  ...grantSteps,

  ['the passphrase is changed from the keyboard', async (page) => {
    await openByShortcut(page, 'settings');
    await typeInto(page, 'pp-current', PASSPHRASE);
    await typeInto(page, 'pp-next', NEW_PASSPHRASE);
    await typeInto(page, 'pp-repeat', NEW_PASSPHRASE);
    await page.keyboard.press('Enter');
    await byId(page, 'pp-done').waitFor({ timeout: STEP_TIMEOUT });
  }],

  ['Ctrl+L locks; the old passphrase is refused with focus kept in the field; the new one unlocks', async (page) => {
    await page.keyboard.press('Control+l');
    await byId(page, 'unlock-screen').waitFor({ timeout: STEP_TIMEOUT });
    assert((await focused(page)) === 'unlock-passphrase', 'the unlock field does not have focus');
    await page.keyboard.type(PASSPHRASE);
    // Enter does nothing until the form takes it (as for the second try).
    await page.waitForFunction(() => !document.querySelector('[data-testid="unlock-submit"]')?.disabled, null, { timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
    await byId(page, 'unlock-error').waitFor({ timeout: STEP_TIMEOUT });
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'unlock-passphrase', null, { timeout: STEP_TIMEOUT });
    // The field is usable again and any slow-down after the failure is over.
    await page.waitForFunction(() => !document.querySelector('[data-testid="unlock-passphrase"]')?.disabled && !document.querySelector('[data-testid="unlock-wait"]'), null, { timeout: STEP_TIMEOUT });
    await page.keyboard.type(NEW_PASSPHRASE);
    await page.waitForFunction(() => !document.querySelector('[data-testid="unlock-submit"]')?.disabled, null, { timeout: STEP_TIMEOUT });
    await page.keyboard.press('Enter');
    await byId(page, 'shell').waitFor({ timeout: STEP_TIMEOUT });
  }],

  ...firstRun.afterUnlock,

  ...importSteps,

  ...firstRun.stacked,

  ['no pointer or mouse event happened, and no secret reached the page', async (page) => {
    const n = await page.evaluate(() => window.__pointer);
    assert(n === 0, `${n} pointer or mouse events reached the page`);
    const leaks = received.filter((f) => [FIRST, ROTATED, GRANTED, PASSPHRASE, NEW_PASSPHRASE].some((x) => f.includes(x)));
    assert(leaks.length === 0, `${leaks.length} received frame(s) hold a secret or a passphrase`);
    axeSummary();
  }],
];

runSteps(steps, {
  rec: { received, consoleLines },
  failureShot: 'keyboard-failure',
  cleanup: () => {
    agent?.proc.kill();
    receiver?.close();
    log(`receiver saw ${arrivals.length} call(s)`);
  },
});
