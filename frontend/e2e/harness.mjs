// What the browser end-to-end scripts share: Debian's Chromium through
// playwright-core, screenshots into the artifacts directory, the recording of
// everything the page received (each reply of a bound Go method and each
// event crosses the Wails dev server's websocket) and the step runner.
//
// env: YETT_ARTIFACTS (default ../artifacts from frontend/), YETT_CHROMIUM
// (default /usr/bin/chromium).

import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const ARTIFACTS = resolve(process.env.YETT_ARTIFACTS || join(here, '..', '..', 'artifacts'));
export const CHROMIUM = process.env.YETT_CHROMIUM || '/usr/bin/chromium';
export const STEP_TIMEOUT = 30_000;

export function log(msg) {
  process.stdout.write(`e2e: ${msg}\n`);
}

export function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

export async function shot(page, name) {
  try {
    await page.screenshot({ path: join(ARTIFACTS, `e2e-${name}.png`), fullPage: true });
  } catch (err) {
    log(`screenshot ${name} failed: ${err.message}`);
  }
}

export const byId = (page, id) => page.locator(`[data-testid="${id}"]`);

// Everything the page itself holds: markup, visible text, live input values
// (a password field's value is not in its HTML) and web storage.
export async function pageText(page) {
  return page.evaluate(() => {
    const values = [...document.querySelectorAll('input, textarea, select')].map((e) => e.value);
    const storage = JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage });
    return [document.documentElement.outerHTML, document.body.innerText, storage, ...values].join('\n');
  });
}

/**
 * Runs steps in order in a fresh Chromium profile and exits: 0 when all
 * passed, 1 otherwise. Each step builds on the one before, so after a failure
 * the rest are reported as skipped. The last line is "N passed, N failed".
 *
 * rec collects what the page saw: received and sent websocket frames and
 * console lines (including uncaught page errors). cleanup runs at the end.
 */
export async function runSteps(steps, { rec, cleanup = () => {}, failureShot = 'failure' }) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'yett-e2e-chromium-'));
  const passed = [];
  let context;
  let failed = 0;
  let skipped = 0;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1100, height: 820 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('websocket', (ws) => {
      ws.on('framereceived', (f) => rec.received.push(String(f.payload)));
      ws.on('framesent', (f) => rec.sent?.push(String(f.payload)));
    });
    page.on('console', (m) => rec.consoleLines.push(m.text()));
    page.on('pageerror', (e) => rec.consoleLines.push(`pageerror: ${e.message}`));

    for (const [name, run] of steps) {
      if (failed > 0) {
        skipped++;
        log(`skip  ${name}`);
        continue;
      }
      try {
        await run(page);
        passed.push(name);
        log(`ok    ${name}`);
      } catch (err) {
        failed++;
        log(`FAIL  ${name}: ${err.message.split('\n')[0]}`);
        await shot(page, failureShot);
        for (const l of rec.consoleLines.slice(-20)) log(`console: ${l}`);
      }
    }
  } catch (err) {
    failed++;
    log(`FAIL  browser: ${err.message.split('\n')[0]}`);
  } finally {
    await Promise.resolve()
      .then(cleanup)
      .catch((err) => log(`cleanup: ${err.message}`));
    await context?.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  }
  const tail = skipped > 0 ? `, ${skipped} skipped` : '';
  process.stdout.write(`${passed.length} passed, ${failed} failed${tail}\n`);
  process.exit(failed > 0 ? 1 : 0);
}

// ---- Accessibility (axe-core) ----
// axe runs inside the page on what is on screen now. It is injected through
// the DevTools protocol (page.evaluate), which the page's Content Security
// Policy does not govern, so the policy stays as the app ships it.
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** What every axe check found, for the figure printed at the end. */
export const axeTotals = { checks: 0, minor: 0 };

/**
 * Runs axe-core (WCAG 2.0-2.2 A and AA rules and best practices) on the
 * page as it is and fails on any critical, serious or moderate violation;
 * minor ones are counted and reported by axeSummary.
 */
export async function axeCheck(page, name) {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')),
    }));
  });
  axeTotals.checks++;
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical' || v.impact === 'moderate');
  for (const v of violations) if (v.impact === 'minor') axeTotals.minor++;
  if (bad.length > 0) {
    throw new Error(`axe on ${name}: ${bad.map((v) => `${v.impact} ${v.id} (${v.help}) at ${v.targets.join(' | ')}`).join('; ')}`);
  }
}

export function axeSummary() {
  log(`axe: ${axeTotals.checks} screens checked, 0 serious, critical or moderate, ${axeTotals.minor} minor`);
}

/** Screenshots at the two window sizes the layout is held to. */
export const SIZES = [
  { width: 820, height: 560 },
  { width: 1920, height: 1080 },
];

export async function shotSizes(page, name, { restore = { width: 1100, height: 820 } } = {}) {
  for (const size of SIZES) {
    await page.setViewportSize(size);
    await page.waitForTimeout(100);
    try {
      await page.screenshot({ path: join(ARTIFACTS, `e2e-${size.width}x${size.height}-${name}.png`) });
    } catch (err) {
      log(`screenshot ${name} at ${size.width}x${size.height} failed: ${err.message}`);
    }
  }
  await page.setViewportSize(restore);
}

/**
 * The e2e desktop runs Yett as root under Xvfb (an X11 display): Yett would
 * ask the system to confirm it is the person before every approval, and
 * polkit cannot confirm a root Yett. Settings must say both; the walk then
 * does what such a person does and chooses Never, which is sealed in the
 * vault. With mode 'never' the window's own click or key approves.
 */
export async function chooseNeverVerify(page, { open = async () => byId(page, 'nav-settings').click(), pick = async (radio) => radio.check() } = {}) {
  await open();
  const field = byId(page, 'verification');
  await field.waitFor({ timeout: 20000 });
  const every = page.locator('[data-testid="verification-mode"][value="every"]');
  assert(await every.isChecked(), 'on an X11 desktop the default is not "before every approval"');
  assert(/X11/.test(await byId(page, 'verification-why').innerText()), 'Settings does not say why (X11)');
  assert(await byId(page, 'verification-problem').isVisible(), 'Settings does not say the system cannot confirm here');
  const never = page.locator('[data-testid="verification-mode"][value="never"]');
  await pick(never);
  await page.waitForFunction(
    () => document.querySelector('[data-testid="verification-mode"][value="never"]')?.checked === true,
    null,
    { timeout: 20000 },
  );
}
