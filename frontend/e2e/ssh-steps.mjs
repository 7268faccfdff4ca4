// End-to-end steps for SSH hosts: a real OpenSSH sshd on 127.0.0.1 with its
// own host key and configuration, started here; a host added through the
// page with a key Yett makes, its public key copied from the page into the
// sshd's authorized_keys, its host key pinned by trust on first use, and a
// real agent's ssh.exec (e2e/agent.mjs through the real `yett mcp`)
// approved from the cards, which name the host, user and exact command.
//
// vault.e2e.mjs runs them with the vault unlocked:
//   const sshRun = sshSteps({ byId, shot, assert, STEP_TIMEOUT });
//   steps.push(...sshRun.steps);   // and sshRun.cleanup() in finally

import { execFileSync, spawn } from 'node:child_process';
import { startAgentRun } from './agent-run.mjs';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const SSHD = process.env.YETT_SSHD || '/usr/sbin/sshd';

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
    s.on('error', fail);
  });
}

function banner(port) {
  return new Promise((ok) => {
    const c = createConnection({ host: '127.0.0.1', port });
    c.setTimeout(1000);
    c.once('data', (d) => {
      c.destroy();
      ok(d.toString().startsWith('SSH-'));
    });
    c.once('error', () => ok(false));
    c.once('timeout', () => {
      c.destroy();
      ok(false);
    });
  });
}

export function sshSteps({ byId, shot, assert, STEP_TIMEOUT, axeCheck = async () => {} }) {
  const CLI = process.env.YETT_CLI || join(here, '..', '..', 'build', 'bin', 'yett');
  const hostName = `e2e-ssh-${randomBytes(3).toString('hex')}`;
  const marker = `yett-e2e-${randomBytes(4).toString('hex')}`;
  const command = `echo ${marker}`;
  const dir = mkdtempSync(join(tmpdir(), 'yett-e2e-sshd-'));
  let sshd;
  let port = 0;
  let hostKey = '';
  let agent;

  async function startSSHD() {
    port = await freePort();
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'hostkey')]);
    hostKey = readFileSync(join(dir, 'hostkey.pub'), 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
    writeFileSync(join(dir, 'authorized_keys'), '', { mode: 0o600 });
    writeFileSync(
      join(dir, 'sshd_config'),
      [
        'ListenAddress 127.0.0.1', `Port ${port}`, `HostKey ${join(dir, 'hostkey')}`,
        `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`, `PidFile ${join(dir, 'sshd.pid')}`,
        'UsePAM no', 'StrictModes no', 'PasswordAuthentication no', 'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes', 'AllowAgentForwarding no', 'AllowTcpForwarding no', 'X11Forwarding no',
        'PermitUserEnvironment no', 'LogLevel VERBOSE', '',
      ].join('\n'),
      { mode: 0o600 },
    );
    sshd = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    sshd.stderr.on('data', (d) => (log += d));
    for (let i = 0; i < 100; i++) {
      if (await banner(port)) return;
      if (sshd.exitCode !== null) throw new Error(`sshd exited: ${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`sshd did not answer: ${log}`);
  }

  const startAgent = () =>
    startAgentRun(CLI, `ssh://${hostName}`, 'ssh.exec', { host: hostName, command, idempotency_key: 'e2e-ssh-1' });

  const card = (page) => byId(page, 'approval-card');

  const steps = [
    ['SSH hosts: a host added with a key made in Yett shows only its public key', async (page) => {
      await startSSHD();
      await byId(page, 'nav-hosts').click();
      await byId(page, 'ssh-add').click();
      await byId(page, 'ssh-name').fill(hostName);
      await byId(page, 'ssh-address').fill('127.0.0.1');
      await byId(page, 'ssh-port').fill(String(port));
      await byId(page, 'ssh-user').fill(userInfo().username);
      // The form asks who answers for the host; the backup revoker is left
      // empty here, so the Inventory has one gap to close (next steps).
      await byId(page, 'ssh-owner').fill('e2e owner');
      await byId(page, 'ssh-submit').click();
      const host = byId(page, `ssh-host-${hostName}`);
      await host.waitFor({ timeout: STEP_TIMEOUT });
      const pub = (await host.locator('[data-testid="ssh-pubkey"]').textContent()).trim();
      assert(pub.startsWith('ssh-ed25519 ') && pub.endsWith(`yett:${hostName}`), `the public key shown: ${pub}`);
      const html = await page.content();
      assert(!html.includes('PRIVATE KEY'), 'the page holds a private key');
      await shot(page, '40-ssh-host-added');
      await axeCheck(page, 'the SSH hosts view');
      // The person copies the public key into the host's authorized_keys.
      writeFileSync(join(dir, 'authorized_keys'), pub + '\n', { mode: 0o600 });
    }],

    ['Trust on first use pins the host key the test sshd presented', async (page) => {
      const host = byId(page, `ssh-host-${hostName}`);
      await host.locator('[data-testid="ssh-tofu"]').click();
      await host.locator('[data-testid="ssh-pin"]').waitFor({ timeout: STEP_TIMEOUT });
      const fp = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', join(dir, 'hostkey.pub')], { encoding: 'utf8' }).split(/\s+/)[1];
      const pinned = await host.locator('[data-testid="ssh-pin"]').textContent();
      assert(pinned.includes(fp), `pinned ${pinned}, the sshd's key is ${fp} (${hostKey})`);
      // Pinned, but nobody has said who else may revoke it yet: the owner
      // inventory's verdict (the one the gateway enforces) says so.
      assert((await host.locator('[data-testid="ssh-host-state"]').textContent()).includes('Not under control'), 'the host without a backup revoker is not marked');
      assert((await host.locator('[data-testid="ssh-problems"]').textContent()).includes('no backup revoker'), 'the missing backup revoker is not named');
      await shot(page, '41-ssh-host-pinned');
    }],

    ['naming its backup revoker in the Inventory puts the host under control', async (page) => {
      await byId(page, 'nav-inventory').click();
      const r = page.locator('[data-testid="inventory-row"]', { hasText: hostName });
      await r.waitFor({ timeout: STEP_TIMEOUT });
      await r.locator('[data-testid="inventory-edit-backup_revoker"]').click();
      await byId(page, 'inventory-editor').fill('e2e backup');
      await byId(page, 'inventory-editor').press('Enter');
      await r.locator('[data-testid="inventory-not-controlled"]').waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
      await byId(page, 'nav-hosts').click();
      const host = byId(page, `ssh-host-${hostName}`);
      await host.locator('[data-testid="ssh-host-state"]', { hasText: 'Ready' }).waitFor({ timeout: STEP_TIMEOUT });
    }],

    ['an agent’s ssh.exec waits on cards that name the host, user and exact command; approving runs it once', async (page) => {
      agent = startAgent();
      await card(page).waitFor({ timeout: STEP_TIMEOUT });
      let text = await card(page).innerText();
      assert(text.includes(command), `the session card does not name the command: ${text}`);
      await byId(page, 'approval-approve').click();
      // The host asks for every command: a call card follows.
      await page.waitForFunction(
        (cmd) => [...document.querySelectorAll('[data-testid="approval-card"]')].some((c) => c.innerText.includes(cmd) && /exactly/i.test(c.innerText)),
        command,
        { timeout: STEP_TIMEOUT },
      );
      text = await card(page).innerText();
      assert(text.includes(`${userInfo().username}@`) && text.includes(hostName), `the call card does not name the host and user: ${text}`);
      await shot(page, '42-ssh-call-card');
      await byId(page, 'approval-approve').click();
      const reply = await agent.reply;
      assert(!reply.error && !reply.isError, `ssh.exec failed: ${JSON.stringify(reply)}`);
      assert(reply.text.includes(`${marker}\\n`) || reply.text.includes(`${marker}\n`), `the command's output is not in the answer: ${reply.text}`);
      assert(/"exit_code":\s*0/.test(reply.text), `no exit code 0 in ${reply.text}`);
      assert(!reply.text.includes('PRIVATE KEY'), 'the key reached the agent');
      await card(page).waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
    }],

    ['"Approve calls like this for 10 minutes" lets the same command of the same run through, until the grant is revoked', async (page) => {
      const again = (n) => agent.call('ssh.exec', { host: hostName, command, idempotency_key: `e2e-ssh-grant-${n}` });
      let reply = again(1);
      await card(page).waitFor({ timeout: STEP_TIMEOUT });
      const words = await byId(page, 'approval-grant-words').innerText();
      assert(words.includes(`exactly this command on ${userInfo().username}@`) && words.includes('10 minutes'), `the grant offered: ${words}`);
      await shot(page, '43-ssh-call-card-grant');
      await byId(page, 'approval-grant').click();
      let r = await reply;
      assert(!r.error && !r.isError && /"exit_code":\s*0/.test(r.text), `the granted card's call: ${JSON.stringify(r)}`);
      await card(page).waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
      // Under the grant: no card, the command runs.
      r = await again(2);
      assert(!r.error && !r.isError && /"exit_code":\s*0/.test(r.text), `the call under the grant: ${JSON.stringify(r)}`);
      assert((await card(page).count()) === 0, 'a call under the grant raised a card');
      await byId(page, 'nav-sessions').click();
      const grant = byId(page, 'live-grant');
      await grant.waitFor({ timeout: STEP_TIMEOUT });
      const text = await grant.innerText();
      assert(text.includes('Used once'), `the grant says: ${text}`);
      await shot(page, '44-sessions-grant');
      await axeCheck(page, 'Sessions with a grant');
      await grant.locator('[data-testid="revoke-grant"]').click();
      await grant.waitFor({ state: 'detached', timeout: STEP_TIMEOUT });
      // Revoked: the same command asks again.
      reply = again(3);
      await card(page).waitFor({ timeout: STEP_TIMEOUT });
      await byId(page, 'approval-deny').click();
      r = await reply;
      assert(r.isError && r.text.includes('DENIED'), `after the revoke: ${JSON.stringify(r)}`);
      agent.stop();
    }],
  ];

  return {
    steps,
    cleanup() {
      agent?.proc.kill();
      sshd?.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
