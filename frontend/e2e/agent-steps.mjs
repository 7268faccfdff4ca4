// End-to-end steps for the approval card with a real agent: a loopback
// receiver, a credential bound to it added through the page, a real agent
// process (e2e/agent.mjs) calling through the real `yett mcp` shim, the
// page approving its card, the call arriving once with the credential Yett
// injected, and Sessions revoking the run after asking.
//
// They need the desktop app to run the gateway (app startup attaches its
// broker to ApprovalService) and the CLI binary at YETT_CLI (default
// build/bin/yett). vault.e2e.mjs runs them after its own steps:
//   const agentRun = agentSteps({ byId, shot, assert, CANARY, received, STEP_TIMEOUT });
//   steps.push(...agentRun.steps);   // and agentRun.cleanup() in finally

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export function agentSteps({ byId, shot, assert, CANARY, received, STEP_TIMEOUT, axeCheck = async () => {} }) {
  const CLI = process.env.YETT_CLI || join(here, '..', '..', 'build', 'bin', 'yett');
  const credential = `e2e-receiver-${randomBytes(3).toString('hex')}`;
  const arrivals = [];
  let receiver;
  let receiverHost = '';
  let agent;

  // Seed 004's controlled receiver, reduced to what these steps check. The
  // credential is compared here, never stored or printed.
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

  // tool and args, when given, name the agent's one call instead of an
  // http.request to url.
  function startAgent(url, key, tool, args) {
    const env = tool ? { ...process.env, YETT_E2E_TOOL: tool, YETT_E2E_ARGS: JSON.stringify(args) } : process.env;
    const proc = spawn(process.execPath, [join(here, 'agent.mjs'), CLI, url, ...(key ? [key] : [])], { stdio: ['pipe', 'pipe', 'pipe'], env });
    let err = '';
    proc.stderr.on('data', (d) => (err += d));
    const reply = new Promise((ok) => {
      createInterface({ input: proc.stdout }).once('line', (l) => ok(JSON.parse(l)));
      proc.once('exit', (code) => ok({ error: `agent exited (${code}): ${err}` }));
    });
    return { proc, reply, stderr: () => err, stop: () => proc.stdin.end() };
  }

  const steps = [
    ['a real agent calling through `yett mcp` waits on a card that names it', async (page) => {
      await startReceiver();
      await byId(page, 'nav-credentials').click();
      await byId(page, 'credential-add').click();
      await byId(page, 'cred-name').fill(credential);
      await byId(page, 'cred-secret').fill(CANARY);
      await byId(page, 'cred-hosts').fill(receiverHost);
      await byId(page, 'cred-approval-session').check();
      await byId(page, 'cred-submit').click();
      await byId(page, 'credential-added').waitFor({ timeout: STEP_TIMEOUT });
      agent = startAgent(`http://${receiverHost}/e2e-card`);
      const card = byId(page, 'approval-card');
      await card.waitFor({ timeout: STEP_TIMEOUT });
      const text = await card.innerText();
      assert(text.includes('This process has not been approved before'), `the card does not say what changed: ${text}`);
      assert((await card.locator('[data-testid="agent-executable"]').textContent()) === 'node', 'the card does not name the node agent');
      assert(Number(await card.locator('[data-testid="agent-pid"]').textContent()) === agent.proc.pid, 'the card shows another pid');
      assert((await card.locator('[data-testid="agent-signer"]').textContent()).trim() === 'unsigned', 'the card does not say "unsigned"');
      assert(text.includes(receiverHost), 'the card does not name the target');
      assert((await card.locator('[data-testid="agent-via"]').textContent()).endsWith(`/${basename(CLI)}`), 'the card does not show it came through yett mcp');
      assert((await byId(page, 'approval-badge-count').textContent()) === '1', 'the sidebar badge does not count the card');
      assert(arrivals.length === 0, 'the call went out before anyone approved it');
      await shot(page, '10-agent-card');
      await axeCheck(page, 'a pending session card');
    }],

    ['Approve on the card lets exactly that call through, with the credential injected by Yett', async (page) => {
      await byId(page, 'approval-approve').click();
      const reply = await agent.reply;
      assert(!reply.error && !reply.isError, `the agent's call failed: ${JSON.stringify(reply)}`);
      assert(!JSON.stringify(reply).includes(CANARY), 'the credential reached the agent');
      assert(
        arrivals.length === 1 && arrivals[0].withCredential,
        `the receiver saw ${arrivals.length} call(s); credential: ${arrivals[0]?.withCredential}`,
      );
      await byId(page, 'approval-card').waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    }],

    ['Sessions shows the approved agent running, and Revoke (after asking) ends it', async (page) => {
      await byId(page, 'nav-sessions').click();
      const row = byId(page, 'live-session');
      await row.waitFor({ timeout: STEP_TIMEOUT });
      assert(Number(await row.locator('[data-testid="agent-pid"]').textContent()) === agent.proc.pid, 'the live session is not the agent');
      await shot(page, '11-live-session');
      await row.locator('[data-testid="revoke"]').click();
      await row.locator('[data-testid="revoke-question"]').waitFor({ timeout: STEP_TIMEOUT });
      await axeCheck(page, 'the revoke-session confirmation');
      await row.locator('[data-testid="revoke-confirm"]').click();
      await byId(page, 'live-sessions-empty').waitFor({ timeout: STEP_TIMEOUT });
      agent.stop();
      assert(!agent.stderr().includes(CANARY), "the credential reached the agent's or the shim's stderr");
      const leaks = received.filter((f) => f.includes(CANARY));
      assert(leaks.length === 0, `${leaks.length} received frame(s) hold the canary`);
    }],

    ['two runs of the same agent waiting together are approved in one action, each with a session of its own', async (page) => {
      const before = arrivals.length;
      const runs = [startAgent(`http://${receiverHost}/e2e-batch-1`, 'e2e-batch-1'), startAgent(`http://${receiverHost}/e2e-batch-2`, 'e2e-batch-2')];
      try {
        const batch = byId(page, 'approval-batch');
        await batch.waitFor({ timeout: STEP_TIMEOUT });
        const text = (await batch.innerText()).replace(/\s+/g, ' ');
        for (const r of runs) assert(text.includes(String(r.proc.pid)), `the batch does not name pid ${r.proc.pid}: ${text}`);
        assert(text.includes('2 runs of node'), `the batch says: ${text}`);
        assert((await byId(page, 'approval-card').count()) === 2, 'each run does not keep its own card');
        await shot(page, '12-batch');
        await axeCheck(page, 'two cards of one program with a batch answer');
        await byId(page, 'approval-batch-approve').click();
        for (const r of runs) {
          const reply = await r.reply;
          assert(!reply.error && !reply.isError, `a batch-approved call failed: ${JSON.stringify(reply)}`);
        }
        assert(arrivals.length === before + 2 && arrivals.slice(before).every((a) => a.withCredential), 'the two calls did not arrive once each');
        await byId(page, 'nav-sessions').click();
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="live-session"]').length === 2, null, { timeout: STEP_TIMEOUT });
        const pids = await page.locator('[data-testid="live-session"] [data-testid="agent-pid"]').allTextContents();
        assert(runs.every((r) => pids.includes(String(r.proc.pid))), `sessions are for pids ${pids}`);
      } finally {
        // A run whose call still waits (a failed step) reads no stdin yet:
        // end it, so its card cannot outlive the step.
        for (const r of runs) r.proc.kill();
      }
      await byId(page, 'live-sessions-empty').waitFor({ timeout: STEP_TIMEOUT });
    }],

    ['an agent asks for a credential it lacks: the card shows its reason, the person adds it and says so, the agent reads GRANTED', async (page) => {
      const host = `api.e2e-access-${randomBytes(2).toString('hex')}.test`;
      const reason = 'to file the <b>release</b> report';
      const asker = startAgent(`access://${host}`, '', 'yett.request_access', { kind: 'http', target: host, reason });
      try {
        const card = byId(page, 'approval-card');
        await card.waitFor({ timeout: STEP_TIMEOUT });
        assert((await card.getAttribute('data-kind')) === 'access', 'the card is not an access card');
        assert((await byId(page, 'approval-reason').textContent()) === reason, 'the reason is not shown as the agent wrote it');
        assert((await card.locator('b').count()) === 0, "the agent's reason became markup");
        assert((await byId(page, 'approval-access').innerText()).includes(`a credential for ${host}`), 'the card does not say what it asks for');
        await shot(page, '13-access-card');
        await axeCheck(page, 'an access card');
        await byId(page, 'approval-access-add').click();
        await byId(page, 'view-credentials').waitFor({ timeout: STEP_TIMEOUT });
        // The cards folded into the sidebar's badge: the page is not under them.
        await page.waitForFunction(() => !document.querySelector('[data-testid="approval-layer"]'), null, { timeout: STEP_TIMEOUT });
        await byId(page, 'credential-add').click();
        await byId(page, 'cred-name').fill(`e2e-access-${randomBytes(2).toString('hex')}`);
        await byId(page, 'cred-secret').fill(`${CANARY}-access`);
        await byId(page, 'cred-hosts').fill(host);
        await byId(page, 'cred-submit').click();
        await byId(page, 'credential-added').waitFor({ timeout: STEP_TIMEOUT });
        await shot(page, '14-access-credential-added');
        await byId(page, 'approval-badge').click();
        await byId(page, 'approval-approve').click();
        const reply = await asker.reply;
        assert(!reply.error && !reply.isError && reply.text.startsWith('GRANTED'), `the agent read ${JSON.stringify(reply)}`);
        assert(!reply.text.includes(CANARY), 'the secret reached the agent');
        await card.waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
      } finally {
        asker.proc.kill();
      }
    }],
  ];

  return {
    steps,
    cleanup() {
      agent?.proc.kill();
      receiver?.close();
    },
  };
}
