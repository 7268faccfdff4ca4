// End-to-end test of the MCP servers view in a real browser against the
// real app, after vault.e2e.mjs, oauth.e2e.mjs and inventory.e2e.mjs ran
// against it. Through the page only:
// - a local server, the real @modelcontextprotocol/server-everything from
//   npm, added with a secret environment variable: Yett starts it, its
//   tools are listed with the server's hints, and the secret is nowhere on
//   the page;
// - get-env (which says it only reads) set to ask for every call;
// - a remote server behind OAuth (e2e.sh's tracker, a Go SDK server
//   protected by the same Ory Hydra, with dynamic client registration):
//   Yett's discovery shown, the consent signed in from a second tab through
//   Hydra's login and consent app, the server added with its account and
//   its tools listed;
// - a real agent (e2e/agent.mjs through the real `yett mcp`) calls
//   everything.get-env: approved from its session card, then from the call
//   card that names the tool and its arguments; the answer reaches it with
//   the secret redacted; then tracker.whoami, whose answer echoes the
//   access token it was sent, reaches it redacted too.
//
// env: YETT_E2E_URL, YETT_E2E_PASSPHRASE, YETT_E2E_TRACKER_URL, YETT_E2E_MCP_SECRET,
// YETT_E2E_HYDRA_PUBLIC, YETT_E2E_BROWSER_LOG, YETT_RUNTIME_DIR, YETT_CLI,
// plus harness.mjs's YETT_ARTIFACTS and YETT_CHROMIUM.

import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAgentRun } from './agent-run.mjs';
import { STEP_TIMEOUT, assert, axeCheck, axeSummary, byId, runSteps, shot, shotSizes } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));

function need(name) {
  const v = process.env[name];
  if (!v) {
    process.stdout.write(`e2e: ${name} is not set (e2e.sh sets it)\n0 passed, 1 failed\n`);
    process.exit(1);
  }
  return v;
}

const URL_ = need('YETT_E2E_URL');
const PASSPHRASE = need('YETT_E2E_PASSPHRASE');
const TRACKER = need('YETT_E2E_TRACKER_URL');
const ISSUER = need('YETT_E2E_HYDRA_PUBLIC').replace(/\/$/, '');
const BROWSER_LOG = need('YETT_E2E_BROWSER_LOG');
need('YETT_RUNTIME_DIR');
const CLI = process.env.YETT_CLI || join(here, '..', '..', 'build', 'bin', 'yett');
const EVERYTHING = join(here, '..', '..', 'build', 'agents', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const SECRET = process.env.YETT_E2E_MCP_SECRET || `CANARY-mcp-${randomBytes(8).toString('hex')}`;
const LOCAL = 'everything';
const REMOTE = 'tracker';

const rec = { received: [], sent: [], consoleLines: [] };
let agent;

const serverCard = (page, name) => page.locator(`[data-testid="mcp-server"][data-name="${name}"]`);
const toolRow = (page, name, tool) => serverCard(page, name).locator(`[data-testid="mcp-tool"][data-tool="${tool}"]`);
const card = (page) => byId(page, 'approval-card');
const browserOpened = () => (existsSync(BROWSER_LOG) ? readFileSync(BROWSER_LOG, 'utf8').split('\n').filter(Boolean) : []);

async function first(...locators) {
  return Promise.any(locators.map((l, i) => l.waitFor({ timeout: STEP_TIMEOUT }).then(() => i)));
}

const startAgent = (tool, args) => startAgentRun(CLI, `mcp://${tool}`, tool, args);

const steps = [
  ['the page loads with the vault open', async (page) => {
    await page.goto(URL_, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => Boolean(window.go?.app?.MCPService && window.runtime), null, { timeout: STEP_TIMEOUT });
    const screen = await first(byId(page, 'shell'), byId(page, 'unlock-screen'));
    if (screen === 1) {
      await byId(page, 'unlock-passphrase').fill(PASSPHRASE);
      await byId(page, 'unlock-submit').click();
    }
    await byId(page, 'shell').waitFor({ timeout: STEP_TIMEOUT });
    assert(existsSync(EVERYTHING), `server-everything is not installed at ${EVERYTHING} (build/scripts/deps.sh test)`);
  }],

  ['a local server (server-everything from npm) added with a secret variable is started by Yett and lists its tools', async (page) => {
    await byId(page, 'nav-mcp').click();
    await byId(page, 'view-mcp').waitFor({ timeout: STEP_TIMEOUT });
    await byId(page, 'mcp-add').click();
    await byId(page, 'mcp-form').waitFor({ timeout: STEP_TIMEOUT });
    await byId(page, 'mcp-kind-stdio').check();
    await byId(page, 'mcp-name').fill(LOCAL);
    await byId(page, 'mcp-command').fill('node');
    await byId(page, 'mcp-args').fill(`${EVERYTHING}\nstdio`);
    await byId(page, 'mcp-secret-name-0').fill('API_TOKEN');
    await byId(page, 'mcp-secret-value-0').fill(SECRET);
    await byId(page, 'mcp-owner').fill('ana@example.test');
    await byId(page, 'mcp-backup').fill('ops@example.test');
    await shot(page, 'mcp-10-local-form');
    await byId(page, 'mcp-submit').click();
    await byId(page, 'mcp-notice').waitFor({ timeout: STEP_TIMEOUT });
    await serverCard(page, LOCAL).locator('[data-testid="mcp-state"]', { hasText: 'Ready' }).waitFor({ timeout: STEP_TIMEOUT });
    await toolRow(page, LOCAL, 'get-env').waitFor({ timeout: STEP_TIMEOUT });
    const where = await serverCard(page, LOCAL).locator('[data-testid="mcp-where"]').innerText();
    assert(where.startsWith('/') && where.includes('index.js stdio'), `the command is not kept as a full path: ${where}`);
    const names = await serverCard(page, LOCAL).locator('[data-testid="mcp-secret-names"]').innerText();
    assert(names.includes('API_TOKEN'), `the secret's name is not shown: ${names}`);
    const hint = await toolRow(page, LOCAL, 'get-env').innerText();
    assert(hint.includes('only reads (a hint)') && /\bno$/.test(hint.trim()), `get-env as listed: ${hint}`);
    assert(!(await page.content()).includes(SECRET), 'the secret is on the page');
    // Its owner, backup revoker and environment came with the form.
    assert((await serverCard(page, LOCAL).locator('[data-testid="mcp-uncontrolled"]').count()) === 0, 'a server added with who answers for it is not under control');
    await shot(page, 'mcp-11-local-ready');
    await axeCheck(page, 'MCP servers with a local server');
  }],

  ['get-env, which says it only reads, is set to ask for every call, and the server keeps running', async (page) => {
    const row = toolRow(page, LOCAL, 'get-env');
    await row.locator('[data-testid="mcp-tool-approval"]').selectOption('per_call');
    await row.locator('[data-testid="mcp-tool-asks"]', { hasText: 'yes' }).waitFor({ timeout: STEP_TIMEOUT });
    const notice = await byId(page, 'mcp-notice').innerText();
    assert(notice.includes(`${LOCAL}.get-env now asks: every call`), `the notice: ${notice}`);
    const state = await serverCard(page, LOCAL).locator('[data-testid="mcp-state"]').innerText();
    assert(state === 'Ready', `the server after a settings change: ${state}`);
  }],

  ['a remote server behind OAuth: Yett discovers its authorization server, registers itself and asks for consent', async (page) => {
    const before = browserOpened().length;
    await byId(page, 'mcp-add').click();
    await byId(page, 'mcp-kind-http').check();
    await byId(page, 'mcp-name').fill(REMOTE);
    await byId(page, 'mcp-url').fill(TRACKER);
    await byId(page, 'mcp-auth-oauth').check();
    await byId(page, 'mcp-environment').selectOption('staging');
    await byId(page, 'mcp-owner').fill('ana@example.test');
    await byId(page, 'mcp-backup').fill('ops@example.test');
    await byId(page, 'mcp-submit').click();
    const found = byId(page, 'mcp-connecting');
    await found.waitFor({ timeout: STEP_TIMEOUT });
    const issuer = await byId(page, 'mcp-issuer').innerText();
    const resource = await byId(page, 'mcp-resource').innerText();
    assert(issuer === ISSUER, `the issuer shown is ${issuer}, not Hydra's ${ISSUER}`);
    assert(resource === TRACKER, `the resource shown is ${resource}, not ${TRACKER}`);
    assert((await found.innerText()).includes('registered itself'), 'the page does not say Yett registered itself');
    const url = await byId(page, 'flow-auth-url').inputValue();
    const q = new URL(url).searchParams;
    assert(q.get('resource') === TRACKER, `the authorization request's resource is ${q.get('resource')}`);
    assert(q.get('code_challenge_method') === 'S256', 'the authorization request carries no S256 PKCE challenge');
    for (let i = 0; i < 50 && browserOpened().length === before; i++) await page.waitForTimeout(100);
    assert(browserOpened().slice(before).includes(url), 'the app did not ask the system browser to open the consent address');
    await shot(page, 'mcp-20-oauth-consent');
    await axeCheck(page, 'MCP servers connecting an OAuth server');

    const tab = await page.context().newPage();
    try {
      const resp = await tab.goto(url, { waitUntil: 'load', timeout: STEP_TIMEOUT });
      assert(resp?.status() === 200 && new URL(tab.url()).pathname === '/callback', `the consent ended at ${tab.url()} (HTTP ${resp?.status()})`);
    } finally {
      await tab.close();
    }
    await found.waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    const notice = await byId(page, 'mcp-notice').innerText();
    assert(notice.includes(`added “${REMOTE}”`), `the notice after the consent: ${notice}`);
    await serverCard(page, REMOTE).locator('[data-testid="mcp-state"]', { hasText: 'Ready' }).waitFor({ timeout: STEP_TIMEOUT });
    await toolRow(page, REMOTE, 'whoami').waitFor({ timeout: STEP_TIMEOUT });
    assert((await serverCard(page, REMOTE).locator('[data-testid="mcp-uncontrolled"]').count()) === 0, 'the remote server is not under control');
    const account = await serverCard(page, REMOTE).locator('[data-testid="mcp-account"]').innerText();
    assert(account.includes(`MCP server ${REMOTE}`), `the account shown: ${account}`);
    await shot(page, 'mcp-21-oauth-ready');
    await shotSizes(page, 'mcp-servers');
  }],

  ['an agent’s call of everything.get-env is approved from its cards, and the secret it prints reaches the agent redacted', async (page) => {
    agent = startAgent(`${LOCAL}.get-env`, {});
    await card(page).waitFor({ timeout: STEP_TIMEOUT });
    let text = await card(page).innerText();
    assert(text.includes(`${LOCAL}.get-env`), `the session card does not name the tool: ${text}`);
    await byId(page, 'approval-approve').click();
    // The person said get-env asks every call: a call card follows.
    await page.waitForFunction(
      (tool) => [...document.querySelectorAll('[data-testid="approval-card"]')].some((c) => c.innerText.includes(tool) && c.innerText.includes('{}')),
      `${LOCAL}.get-env`,
      { timeout: STEP_TIMEOUT },
    );
    text = await card(page).innerText();
    await shot(page, 'mcp-30-call-card');
    await axeCheck(page, 'an upstream tool’s call card');
    await byId(page, 'approval-approve').click();
    const r = await agent.reply;
    assert(!r.error && !r.isError, `get-env failed: ${JSON.stringify(r)}`);
    assert(r.text.includes('API_TOKEN') && r.text.includes('[REDACTED]') && !r.text.includes(SECRET), `get-env's answer: ${r.text.slice(0, 400)}`);
    await card(page).waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
  }],

  ['the remote server’s whoami echoes the access token it was sent; the agent reads it redacted', async (page) => {
    const reply = agent.call(`${REMOTE}.whoami`, {});
    // The run is approved and whoami says it only reads: no card, it goes.
    const answer = await Promise.race([
      reply,
      new Promise((_, no) => setTimeout(() => no(new Error('whoami got no answer: was a card raised?')), STEP_TIMEOUT)),
    ]);
    assert(!answer.error && !answer.isError, `whoami failed: ${JSON.stringify(answer)}`);
    assert(answer.text.includes('You came with Bearer [REDACTED]'), `whoami's answer: ${answer.text}`);
    assert((await card(page).count()) === 0, 'a read of an approved run raised a card');
    agent.stop();
    await byId(page, 'nav-activity').click();
    await byId(page, 'view-activity').waitFor({ timeout: STEP_TIMEOUT });
    await shot(page, 'mcp-40-activity');
    axeSummary();
  }],
];

runSteps(steps, { rec, cleanup: () => agent?.proc.kill(), failureShot: 'mcp-failure' });
