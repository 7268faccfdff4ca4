// End-to-end test of the Inventory view in a real browser against the real
// app and a real OAuth provider, Ory Hydra v2.3.0 (started by e2e.sh), after
// vault.e2e.mjs and oauth.e2e.mjs ran against the same app.
//
// Set up through the bound methods the page itself calls (Connections'
// form is oauth.e2e.mjs's subject): a client-credentials authorization at
// Hydra with no owner and no backup revoker, and a named operation on it.
// Then through the page only: the Inventory lists it not under control and
// its owner and backup revoker cells say they are missing; the column
// chooser adds the provider's column; the default columns fit a 820x560
// window without sideways scrolling and take one or two lines a cell at
// 1920x1080, across the whole window; the state and word filters find it; its owner
// and backup revoker are edited in place and it is under control; a column
// sorts; the arrow keys move through the cells; CSV and JSON exports land
// in the dev build's dialog directory holding the row and no canary secret;
// a full drill runs to the end from its details after the confirmation, with
// every step passed, its evidence and durations shown, and the row ends
// revoked; the drill report exports as JSON. Screenshots of the table and of
// the report go to the artifacts. With YETT_E2E_FIGURES=1, 1,000 HTTP
// credentials are then added and the times of the backend's read, of opening
// the view on its first page of 200 rows, of drawing all of them and of
// filtering are printed as figures (never pass/fail thresholds).
//
// env: YETT_E2E_URL, YETT_E2E_PASSPHRASE, YETT_E2E_HYDRA_PUBLIC,
// YETT_E2E_HYDRA_ADMIN, YETT_E2E_OAUTH_CLIENT_ID, YETT_E2E_OAUTH_SECRET,
// YETT_E2E_CANARY (vault.e2e.mjs's credential secret), YETT_DEV_DIALOG_DIR,
// plus harness.mjs's YETT_ARTIFACTS and YETT_CHROMIUM.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { STEP_TIMEOUT, assert, axeCheck, axeSummary, byId, log, runSteps, shot, shotSizes } from './harness.mjs';

function need(name) {
  const v = process.env[name];
  if (!v) {
    process.stdout.write(`e2e: ${name} is not set (e2e.sh sets it)\n0 passed, 1 failed\n`);
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
const DIALOGS = need('YETT_DEV_DIALOG_DIR');
const CANARIES = [SECRET, process.env.YETT_E2E_CANARY].filter(Boolean);

const NAME = `drill e2e ${randomBytes(3).toString('hex')}`;
const OWNER = 'ana@example.test';
const BACKUP = 'ops@example.test';
const OPERATION = `drill.list_${randomBytes(2).toString('hex')}`;
const DRILL_TIMEOUT = 120_000;
const MANY = 1000;

const rec = { received: [], sent: [], consoleLines: [] };
let authId = '';

const row = (page) => page.locator('[data-testid="inventory-row"]', { hasText: NAME });
const card = (page) => page.locator('[data-testid="authorization-row"]', { hasText: NAME });

// Leaves the authorization suspended in the OAuth database, as a failed
// unattended drill of an older Yett did (it had no way back): the window
// must show such a row and switch it back on.
function strandSuspended(id) {
  const db = join(need('YETT_DATA_DIR'), 'oauth.db');
  execFileSync('python3', ['-c', `import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=10)
n = c.execute("UPDATE oauth_authorizations SET state = 'suspended', state_reason = 'unattended revocation drill failed' WHERE id = ?", (sys.argv[2],)).rowcount
c.commit()
sys.exit(0 if n == 1 else 1)`, db, id]);
}
const text = async (loc) => (await loc.textContent()).trim();

async function first(...locators) {
  return Promise.any(locators.map((l, i) => l.waitFor({ timeout: STEP_TIMEOUT }).then(() => i)));
}

// The newest export in the dialog directory whose name matches re.
function exported(re) {
  const names = readdirSync(DIALOGS).filter((n) => re.test(n));
  assert(names.length > 0, `no export matching ${re} in the dialog directory`);
  return readFileSync(join(DIALOGS, names.sort().at(-1)), 'utf8');
}

function noCanary(what, body) {
  for (const c of CANARIES) assert(!body.includes(c), `${what} holds a canary secret`);
}

const steps = [
  ['the page loads with the vault open', async (page) => {
    await page.goto(URL_, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => Boolean(window.go?.app?.InventoryService && window.runtime), null, { timeout: STEP_TIMEOUT });
    const screen = await first(byId(page, 'shell'), byId(page, 'unlock-screen'), byId(page, 'setup-screen'));
    if (screen === 1) {
      await byId(page, 'unlock-passphrase').fill(PASSPHRASE);
      await byId(page, 'unlock-submit').click();
    } else if (screen === 2) {
      await byId(page, 'setup-passphrase').fill(PASSPHRASE);
      await byId(page, 'setup-confirm').fill(PASSPHRASE);
      await byId(page, 'setup-submit').click();
    }
    await byId(page, 'shell').waitFor({ timeout: STEP_TIMEOUT });
  }],

  ['set-up: a client-credentials authorization at Hydra with no owner, and an operation on it', async (page) => {
    const flow = await page.evaluate(
      async ({ name, issuer, admin, clientId, secret }) => window.go.app.OAuthService.Connect({
        name, provider: 'custom', tenant: '', issuer, authorizationEndpoint: '', tokenEndpoint: `${issuer}/oauth2/token`,
        revocationEndpoint: `${issuer}/oauth2/revoke`, introspectionEndpoint: `${admin}/admin/oauth2/introspect`,
        deviceAuthorizationEndpoint: '', clientId, clientAuth: 'client_secret', clientSecret: secret, clientKeyId: '',
        scopes: ['tracker.read'], environment: 'staging', unattended: false, flow: 'client_credentials', owner: '',
        backupRevoker: '', reviewBy: '', disableProcedure: '', dpop: false, apiHosts: ['api.example.test'],
      }),
      { name: NAME, issuer: ISSUER, admin: ADMIN, clientId: CLIENT_ID, secret: SECRET },
    );
    assert(flow.state === 'connected' && flow.authorizationId, `Connect: ${flow.state} ${flow.error}`);
    authId = flow.authorizationId;
    await page.evaluate(
      async ({ name, id }) => window.go.app.OAuthService.SaveOperation({
        name, authorizationId: id, description: 'List issues (drill e2e)', method: 'GET',
        urlTemplate: 'https://api.example.test/issues', params: [], bodySchema: '', approval: 'session',
      }),
      { name: OPERATION, id: authId },
    );
  }],

  ['the Inventory lists it not under control, and its owner and backup revoker cells say they are missing', async (page) => {
    await byId(page, 'nav-inventory').click();
    await byId(page, 'inventory-table').waitFor({ timeout: STEP_TIMEOUT });
    const r = row(page);
    await r.waitFor({ timeout: STEP_TIMEOUT });
    assert((await r.getAttribute('data-id')) === authId, 'the row is not the new authorization');
    assert((await text(r.locator('[data-testid="inventory-not-controlled"]'))) === 'no', 'the row is not marked not under control');
    // Each missing value is said in its own cell, and only there.
    for (const col of ['owner', 'backupRevoker']) {
      const cell = await text(r.locator(`[data-testid="inventory-cell-${col}"]`));
      assert(cell.startsWith('missing'), `the ${col} cell reads ${cell}`);
    }
    assert((await r.locator('[data-testid="inventory-missing"]').count()) === 0, 'the Control cell repeats what the cells say');
    assert((await text(r.locator('[data-testid="inventory-cell-environment"]'))).startsWith('staging'), 'environment is not staging');
    assert((await byId(page, 'inventory-uncontrolled-count').count()) === 1, 'no count of rows nobody controls');
    await shot(page, 'inventory-01-table');
    await axeCheck(page, 'the Inventory table');
  }],

  ['the column chooser adds the provider, and the default columns fit the window at 820x560 and 1920x1080', async (page) => {
    const r = row(page);
    const chooser = byId(page, 'inventory-columns');
    await chooser.locator('summary').click();
    await chooser.getByLabel('Provider or host').check();
    assert((await text(r.locator('[data-testid="inventory-cell-provider"]'))) === new URL(ISSUER).host, 'provider is not Hydra');
    await axeCheck(page, 'the column chooser');
    await byId(page, 'inventory-columns-default').click();
    await page.keyboard.press('Escape');
    assert(!(await chooser.evaluate((d) => d.open)), 'Esc does not close the column chooser');
    assert((await r.locator('[data-testid="inventory-cell-provider"]').count()) === 0, 'Default columns keeps the provider');
    const measure = () => page.evaluate(() => {
      const table = document.querySelector('[data-testid="inventory-table"]');
      const box = table.parentElement;
      const lines = [...table.querySelectorAll('tbody td')].map((td) => {
        const st = getComputedStyle(td);
        const inner = td.clientHeight - parseFloat(st.paddingTop) - parseFloat(st.paddingBottom);
        return { id: td.id, lines: Math.round(inner / parseFloat(st.lineHeight)) };
      });
      return {
        sideways: box.scrollWidth - box.clientWidth,
        page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        most: lines.reduce((a, b) => (b.lines > a.lines ? b : a), { lines: 0 }),
        main: document.querySelector('main').getBoundingClientRect().width,
        table: table.getBoundingClientRect().width,
      };
    });
    await page.setViewportSize({ width: 820, height: 560 });
    await page.waitForTimeout(100);
    const small = await measure();
    log(`figure: the Inventory at 820x560: ${JSON.stringify(small)}`);
    assert(small.sideways <= 0 && small.page <= 0, `the table scrolls sideways at 820x560 by ${small.sideways} px (the page by ${small.page})`);
    await page.setViewportSize({ width: 1920, height: 1080 });
    await page.waitForTimeout(100);
    const large = await measure();
    log(`figure: the Inventory at 1920x1080: ${JSON.stringify(large)}`);
    assert(large.sideways <= 0, `the table scrolls sideways at 1920x1080 by ${large.sideways} px`);
    assert(large.most.lines <= 2, `cell ${large.most.id} takes ${large.most.lines} lines at 1920x1080`);
    // The sidebar aside, the table takes the window's width.
    assert(large.main > 1600 && large.table > 1500, `the table is ${large.table} px wide in a main column of ${large.main} px`);
    await shotSizes(page, 'inventory');
  }],

  ['the state and word filters find it', async (page) => {
    await byId(page, 'inventory-state-filter').selectOption('not_under_control');
    await row(page).waitFor({ timeout: STEP_TIMEOUT });
    const shown = await page.locator('[data-testid="inventory-row"]').count();
    const marked = await page.locator('[data-testid="inventory-row"] [data-testid="inventory-not-controlled"]').count();
    assert(shown === marked, `the "not under control" filter shows ${shown} rows, ${marked} of them marked`);
    await byId(page, 'inventory-filter').fill(NAME);
    assert((await page.locator('[data-testid="inventory-row"]').count()) === 1, 'the word filter does not narrow to the row');
    await byId(page, 'inventory-state-filter').selectOption('revoked');
    await byId(page, 'inventory-no-match').waitFor({ timeout: STEP_TIMEOUT });
    await byId(page, 'inventory-state-filter').selectOption('');
  }],

  ['owner and backup revoker are edited in place and the row is under control', async (page) => {
    const r = row(page);
    await r.locator('[data-testid="inventory-edit-owner"]').click();
    await byId(page, 'inventory-editor').fill(OWNER);
    await byId(page, 'inventory-editor').press('Enter');
    await r.locator('[data-testid="inventory-cell-owner"]', { hasText: OWNER }).waitFor({ timeout: STEP_TIMEOUT });
    await r.locator('[data-testid="inventory-edit-backup_revoker"]').click();
    await byId(page, 'inventory-editor').fill(BACKUP);
    await byId(page, 'inventory-editor').press('Enter');
    await r.locator('[data-testid="inventory-not-controlled"]').waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    assert((await text(r.locator('[data-testid="inventory-cell-backupRevoker"]'))).startsWith(BACKUP), 'backup revoker not shown');
    assert((await text(r.locator('[data-testid="inventory-cell-controlled"]'))) === 'yes', 'the row is not under control');
  }],

  ['a column sorts and the arrow keys move through the cells', async (page) => {
    await byId(page, 'inventory-filter').fill('');
    await byId(page, 'inventory-sort-owner').click();
    const th = byId(page, 'inventory-sort-owner').locator('xpath=..');
    assert((await th.getAttribute('aria-sort')) === 'ascending', 'the owner column is not sorted ascending');
    await byId(page, 'inventory-sort-owner').click();
    assert((await th.getAttribute('aria-sort')) === 'descending', 'a second click does not sort descending');
    const cell = page.locator('#inv-cell-0-0');
    await cell.focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    const focused = await page.evaluate(() => document.activeElement?.id);
    const rows = await page.locator('[data-testid="inventory-row"]').count();
    assert(focused === (rows > 1 ? 'inv-cell-1-1' : 'inv-cell-0-1'), `focus after Right, Down: ${focused}`);
    assert((await page.locator('[data-testid="inventory-table"] [tabindex="0"]').count()) === 1, 'the table is not one tab stop');
  }],

  ['CSV and JSON exports hold the row and no secret', async (page) => {
    await byId(page, 'inventory-export-csv').click();
    await byId(page, 'inventory-exported').waitFor({ timeout: STEP_TIMEOUT });
    const csv = exported(/^yett-inventory-.*\.csv$/);
    assert(csv.startsWith('provider,account,authorization id'), 'the CSV has no header');
    assert(csv.includes(authId) && csv.includes(OWNER), 'the CSV does not hold the row');
    noCanary('the CSV export', csv);
    await byId(page, 'inventory-export-json').click();
    await page.waitForFunction(() => /\.json/.test(document.querySelector('[data-testid="inventory-exported"]')?.textContent ?? ''), null, { timeout: STEP_TIMEOUT });
    const json = JSON.parse(exported(/^yett-inventory-.*\.json$/));
    const mine = json.rows.find((r) => r.id === authId);
    assert(mine && mine.owner === OWNER && mine.controlled === true, 'the JSON does not hold the row under control');
    noCanary('the JSON export', JSON.stringify(json));
  }],

  ['a row an older Yett left suspended: Connections and the Inventory show it, the state filter finds it, Switch back on resumes it', async (page) => {
    strandSuspended(authId);
    await byId(page, 'nav-connections').click();
    const c = card(page);
    await c.locator('[data-testid="authorization-state"]', { hasText: 'Switched off' }).waitFor({ timeout: STEP_TIMEOUT });
    assert((await page.getByText('does not understand').count()) === 0, 'the window does not understand a suspended authorization');
    assert((await page.getByText('Loading…').count()) === 0, 'a list of Connections stays at Loading…');
    await shot(page, 'connections-suspended');
    await byId(page, 'nav-inventory').click();
    await byId(page, 'inventory-state-filter').selectOption('suspended');
    await row(page).waitFor({ timeout: STEP_TIMEOUT });
    assert((await page.locator('[data-testid="inventory-row"]').count()) === 1, 'the suspended filter does not narrow to the row');
    await row(page).locator('[data-testid="inventory-open"]').click();
    await byId(page, 'inventory-suspended').waitFor({ timeout: STEP_TIMEOUT });
    await byId(page, 'inventory-resume').click();
    await byId(page, 'inventory-suspended').waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    await byId(page, 'inventory-state-filter').selectOption('');
    await row(page).locator('[data-testid="inventory-cell-state"]', { hasText: 'active' }).waitFor({ timeout: STEP_TIMEOUT });
    await byId(page, 'nav-connections').click();
    await card(page).locator('[data-testid="authorization-state"]', { hasText: 'Active' }).waitFor({ timeout: STEP_TIMEOUT });
    await byId(page, 'nav-inventory').click();
    await row(page).waitFor({ timeout: STEP_TIMEOUT });
  }],

  ['a full drill runs to the end from the view: every step passes and the row ends revoked', async (page) => {
    await row(page).locator('[data-testid="inventory-open"]').click();
    const details = byId(page, 'inventory-details');
    await details.waitFor({ timeout: STEP_TIMEOUT });
    assert((await text(details.locator('[data-testid="inventory-operations"]'))) === OPERATION, 'the operation is not listed');
    await byId(page, 'drill-run-full').click();
    await byId(page, 'drill-full-confirm').waitFor({ timeout: STEP_TIMEOUT });
    await axeCheck(page, 'the full drill confirmation');
    const started = Date.now();
    await byId(page, 'drill-full-confirm-button').click();
    await page.waitForFunction(
      () => ['passed', 'failed'].includes(document.querySelector('[data-testid="drill-verdict"]')?.textContent?.trim() ?? ''),
      null,
      { timeout: DRILL_TIMEOUT },
    );
    const report = byId(page, 'drill-report');
    const steps = report.locator('[data-testid="drill-step"]');
    const names = await steps.evaluateAll((els) => els.map((e) => e.getAttribute('data-step')));
    const lines = await steps.evaluateAll((els) => els.map((e) => e.innerText.replace(/\s+/g, ' ').trim()));
    for (const l of lines) log(`drill step: ${l.slice(0, 240)}`);
    log(`figure: full drill from the view against Hydra, ${Date.now() - started} ms from confirm to verdict`);
    const verdict = await text(byId(page, 'drill-verdict'));
    assert(verdict === 'passed', `the drill ${verdict}: ${await text(byId(page, 'drill-advice'))}`);
    const want = ['local_disable', 'provider_revocation', 'call_refused', 'stays_refused', 'audit_names_users'];
    assert(JSON.stringify(names) === JSON.stringify(want), `steps ${names}`);
    const verdicts = await report.locator('[data-testid="drill-step-verdict"]').allTextContents();
    assert(verdicts.every((v) => v.trim() === 'pass'), `step verdicts ${verdicts}`);
    assert((await report.locator('[data-testid="drill-step-evidence"]').count()) === want.length, 'a step shows no evidence');
    assert(lines[1].includes('HTTP 200') && /inactive/.test(lines[1]), `step 2 evidence: ${lines[1]}`);
    assert(/refused|REVOKED|SUSPENDED|DISABLED/i.test(lines[2]), `step 3 evidence: ${lines[2]}`);
    assert((await text(byId(page, 'drill-advice'))).startsWith('Ended revoked.'), 'the report does not end revoked');
    await row(page).locator('[data-testid="inventory-cell-state"]', { hasText: 'revoked' }).waitFor({ timeout: STEP_TIMEOUT });
    await report.scrollIntoViewIfNeeded();
    await shot(page, 'inventory-02-drill-report');
    await axeCheck(page, 'the drill report');
  }],

  ['the drill report exports as JSON without a secret', async (page) => {
    await byId(page, 'drill-export').click();
    await page.locator('[data-testid="drill-report"] [role="status"]', { hasText: 'Saved' }).waitFor({ timeout: STEP_TIMEOUT });
    const rep = JSON.parse(exported(/^yett-drill-.*\.json$/));
    assert(rep.authorization_id === authId && rep.passed === true && rep.steps.length === 5, 'the exported report is not this drill');
    noCanary('the drill report', JSON.stringify(rep));
  }],

  ['the revoked row is history in the Inventory, and Connections reconnects it with its operation kept', async (page) => {
    const r = row(page);
    assert((await r.locator('button.edit').count()) === 0, 'a revoked row still offers edits');
    assert((await text(r.locator('[data-testid="inventory-cell-nextDrill"]'))) === 'none until reconnected', 'a revoked row still shows a next drill');
    await byId(page, 'nav-connections').click();
    const c = card(page);
    await c.locator('[data-testid="authorization-state"]', { hasText: 'Revoked' }).waitFor({ timeout: STEP_TIMEOUT });
    assert((await c.locator('[data-testid="revoke"]').count()) === 0, 'a revoked row with nothing waiting still offers Revoke again');
    await c.locator('[data-testid="reconnect"]').click();
    const keep = c.locator('[data-testid="reconnect-keep-op"]');
    assert((await keep.count()) === 1 && (await keep.getAttribute('data-operation')) === OPERATION, 'the reconnect panel does not list the operation');
    assert(await keep.isChecked(), 'the operation is not kept by default');
    await shot(page, 'connections-reconnect');
    await c.locator('[data-testid="reconnect-start"]').click();
    await c.locator('[data-testid="authorization-state"]', { hasText: 'Active' }).waitFor({ timeout: STEP_TIMEOUT });
    assert((await text(c.locator('[data-testid="authorization-operations"]'))).includes(OPERATION), 'the operation did not carry over');
    await axeCheck(page, 'Connections after reconnecting');
  }],

];

// The figures (1,000 more rows) take minutes on a loaded machine: they run
// when YETT_E2E_FIGURES=1, not in every CI run.
const figures = [
  ['figure: the view with 1,000 more rows', async (page) => {
    const added = await page.evaluate(async (n) => {
      let ok = 0;
      const one = (i) => window.go.app.VaultService.AddCredential({
        name: `bulk ${String(i).padStart(4, '0')}`, secret: `bulk-secret-${i}`, format: 'bearer', headerName: '',
        template: '', username: '', hosts: [`bulk${i}.example.test`], pathPrefixes: [], approval: 'session',
      }).then(() => ok++);
      for (let i = 0; i < n; i += 20) await Promise.all(Array.from({ length: Math.min(20, n - i) }, (_, j) => one(i + j)));
      return ok;
    }, MANY);
    assert(added === MANY, `added ${added} credentials`);
    await byId(page, 'nav-credentials').click();
    await byId(page, 'inventory-table').waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    // The backend's part alone: one Rows call over the websocket, once the
    // new rows have their records (the first read after adding makes them).
    await page.evaluate(() => window.go.app.InventoryService.Rows());
    const backend = await page.evaluate(async () => {
      const t = performance.now();
      const rows = await window.go.app.InventoryService.Rows();
      return { ms: Math.round(performance.now() - t), n: rows.length };
    });
    log(`figure: InventoryService.Rows with ${backend.n} rows took ${backend.ms} ms (backend and the dev server's websocket)`);
    const t0 = Date.now();
    await byId(page, 'nav-inventory').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="inventory-row"]').length >= 200, null, { timeout: 120_000 });
    const count = await text(byId(page, 'inventory-count'));
    log(`figure: Inventory view opened on ${count} in ${Date.now() - t0} ms (click to the first page of rows drawn, Chromium)`);
    assert(/^Showing 200 of 10\d\d\.$/.test(count), `the first page: ${count}`);
    const t1 = Date.now();
    await byId(page, 'inventory-all').click();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="inventory-row"]').length >= n, MANY, { timeout: 120_000 });
    const total = await page.locator('[data-testid="inventory-row"]').count();
    log(`figure: Show all drew ${total} rows in ${Date.now() - t1} ms`);
    const t2 = Date.now();
    // A host only one row has (an id, random hex, may hold any four digits).
    await byId(page, 'inventory-filter').fill('bulk999.example.test');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="inventory-row"]').length === 1, null, { timeout: 120_000 });
    log(`figure: filtering ${total} rows to one took ${Date.now() - t2} ms`);
    await byId(page, 'inventory-filter').fill('');
  }],
];

await runSteps(process.env.YETT_E2E_FIGURES === '1' ? [...steps, ...figures] : steps, {
  rec,
  failureShot: 'inventory-failure',
  cleanup: axeSummary,
});
