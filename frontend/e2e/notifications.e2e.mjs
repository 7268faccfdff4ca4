// Approval cards as native notifications, in a real browser against the
// real backend on a desktop with a real notification daemon (dunst, on the
// private display and session bus e2e-notifications.sh starts): a real
// agent's card is shown in the page and as dunst's notification at once;
// the person approves it in the page; the notification is withdrawn, the
// agent's call reaches the receiver once, and Recent decisions says it was
// answered in the window. The status bar counts the waiting card meanwhile.
// Screenshots: the Xvfb screen (the dev build's own window with dunst's
// notification over it) and the page in Chromium.
//
// env: YETT_E2E_URL, YETT_CLI (default build/bin/yett), YETT_RUNTIME_DIR,
// YETT_ARTIFACTS, YETT_CHROMIUM; DISPLAY and DBUS_SESSION_BUS_ADDRESS of the
// desktop dunst runs on.

import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ARTIFACTS, STEP_TIMEOUT, assert, byId, log, runSteps, shot, chooseNeverVerify } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const URL_ = process.env.YETT_E2E_URL || 'http://127.0.0.1:34115';
const CLI = process.env.YETT_CLI || join(here, '..', '..', 'build', 'bin', 'yett');
const PASSPHRASE = `notify gate ${randomBytes(6).toString('hex')}`;
const CANARY = `CANARY-notify-${randomBytes(6).toString('hex')}`;
const received = [];
const consoleLines = [];
const arrivals = [];
let receiver;
let receiverHost = '';
let agent;
let replacement;

const dunstctl = (...args) => execFileSync('dunstctl', args, { encoding: 'utf8' }).trim();
const displayed = () => Number(dunstctl('count', 'displayed'));

async function until(what, cond) {
  const deadline = Date.now() + STEP_TIMEOUT;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function startReceiver() {
  receiver = createServer((req, res) => {
    arrivals.push({ path: req.url, withCredential: req.headers.authorization === `Bearer ${CANARY}` });
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

function startAgent(url) {
  const proc = spawn(process.execPath, [join(here, 'agent.mjs'), CLI, url, 'e2e-notify-1'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const reply = new Promise((ok) => {
    createInterface({ input: proc.stdout }).once('line', (l) => ok(JSON.parse(l)));
    proc.once('exit', (code) => ok({ error: `agent exited (${code}): ${err}` }));
  });
  return { proc, reply, stop: () => proc.stdin.end() };
}

const steps = [
  ['a fresh vault is created, with a credential that asks once per run', async (page) => {
    assert(displayed() === 0, 'dunst shows a notification before the test made one');
    await page.goto(URL_, { waitUntil: 'domcontentloaded' });
    await byId(page, 'setup-passphrase').fill(PASSPHRASE);
    await byId(page, 'setup-confirm').fill(PASSPHRASE);
    await byId(page, 'setup-submit').click();
    await byId(page, 'shell').waitFor({ timeout: STEP_TIMEOUT });
    await startReceiver();
    await byId(page, 'nav-credentials').click();
    await byId(page, 'credential-add').click();
    await byId(page, 'cred-name').fill('notified');
    await byId(page, 'cred-secret').fill(CANARY);
    await byId(page, 'cred-hosts').fill(receiverHost);
    await byId(page, 'cred-approval-session').check();
    await byId(page, 'cred-submit').click();
    await byId(page, 'credential-added').waitFor({ timeout: STEP_TIMEOUT });
  }],

  ['Settings says notifications show cards from dunst, without Approve, since the system cannot confirm the person here', async (page) => {
    await chooseNeverVerify(page);
    const status = byId(page, 'notify-status');
    await status.waitFor({ timeout: STEP_TIMEOUT });
    const text = await status.innerText();
    assert(/dunst/i.test(text) && text.includes('without Approve'), `Settings says: ${text}`);
    await byId(page, 'settings-background').scrollIntoViewIfNeeded();
    await shot(page, 'notification-settings');
  }],

  ['a real agent’s card shows in the page and as dunst’s notification', async (page) => {
    agent = startAgent(`http://${receiverHost}/e2e-notify`);
    await byId(page, 'approval-card').waitFor({ timeout: STEP_TIMEOUT });
    await until('dunst to show the card', () => displayed() === 1);
    assert((await byId(page, 'approval-badge-count').textContent()).trim() === '1', 'the sidebar badge does not count the card');
    assert(arrivals.length === 0, 'the call went out before anyone answered');
    execFileSync('import', ['-window', 'root', join(ARTIFACTS, 'notification-on-screen.png')]);
    await shot(page, 'notification-card-in-page');
  }],

  ['approving in the page withdraws the notification and releases the call once', async (page) => {
    await byId(page, 'approval-approve').click();
    const reply = await agent.reply;
    assert(!reply.error && !reply.isError, `the agent's call failed: ${JSON.stringify(reply)}`);
    assert(arrivals.length === 1 && arrivals[0].withCredential, `the receiver saw ${JSON.stringify(arrivals)}`);
    await until('dunst to close the notification', () => displayed() === 0);
    const history = JSON.parse(dunstctl('history')).data.flat();
    const ours = history.filter((n) => n.appname?.data === 'Yett');
    assert(ours.length === 1, `dunst's history lists ${ours.length} notifications from Yett`);
    const words = `${ours[0].summary.data}\n${ours[0].body.data}`;
    assert(words.includes(receiverHost) && words.includes('unsigned') && words.includes(`pid ${agent.proc.pid}`), `the notification said: ${words}`);
    assert(!words.includes(CANARY), 'the notification carried the secret');
  }],

  ['Recent decisions says the window answered it', async (page) => {
    await byId(page, 'nav-sessions').click();
    const row = byId(page, 'recent-decision').first();
    await row.waitFor({ timeout: STEP_TIMEOUT });
    const how = (await row.locator('[data-testid="decision-how"]').textContent()).toLowerCase();
    assert(how.includes('window'), `the decision says ${how}`);
    await shot(page, 'notification-recent-decisions');
    assert(!received.some((f) => f.includes(CANARY)), 'the secret reached the page');
    agent.stop();
  }],

  ['a notification server that takes dunst’s place is not trusted until the person accepts it in Settings', async (page) => {
    const first = Number(process.env.YETT_E2E_DUNST_PID);
    assert(first > 0, 'e2e-notifications.sh did not say which dunst it started');
    await byId(page, 'nav-settings').click();
    const trusted = byId(page, 'notify-server-current');
    await trusted.waitFor({ timeout: STEP_TIMEOUT });
    assert((await trusted.innerText()).includes(`pid ${first}`), `Settings names ${await trusted.innerText()}, not the dunst that ran at the unlock`);
    process.kill(first);
    replacement = spawn('dunst', [], { stdio: 'ignore' });
    const change = byId(page, 'notify-server-change');
    await change.waitFor({ timeout: STEP_TIMEOUT });
    const words = await change.innerText();
    assert(words.includes(`pid ${replacement.pid}`) && words.includes('Not trusted') && words.includes('changed since you unlocked'), `Settings says: ${words}`);
    await change.scrollIntoViewIfNeeded();
    await shot(page, 'notification-server-not-trusted');
    await byId(page, 'notify-server-accept').click();
    await until('the notice to go', async () => (await change.count()) === 0);
    const now = await byId(page, 'notify-server-current').innerText();
    assert(now.includes(`pid ${replacement.pid}`), `after accepting, Settings says: ${now}`);
    await shot(page, 'notification-server-accepted');
  }],
];

runSteps(steps, {
  rec: { received, consoleLines },
  failureShot: 'notifications-failure',
  cleanup: () => {
    agent?.proc.kill();
    replacement?.kill();
    receiver?.close();
    log(`receiver saw ${arrivals.length} call(s)`);
  },
});
