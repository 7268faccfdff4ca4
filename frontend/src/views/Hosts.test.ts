import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';
import { HOST_KEY_FP, installSSH, sshHost } from '../test/fakeSSH';
import { castText } from '../lib/sshCast';

const CANARY = 'CANARY-ssh-key-' + Math.random().toString(36).slice(2);

async function openHosts(initial: Parameters<typeof installSSH>[0] = {}) {
  installBridge(vaultStatus({ state: 'unlocked', epoch: 3 }));
  const ssh = installSSH(initial);
  render(App);
  await fireEvent.click(await screen.findByTestId('nav-hosts'));
  await screen.findByTestId('view-hosts');
  await waitFor(() => expect(ssh.SSHService.Hosts).toHaveBeenCalled());
  return ssh;
}

async function fill(values: Record<string, string>) {
  for (const [id, value] of Object.entries(values)) {
    await fireEvent.input(screen.getByTestId(id), { target: { value } });
  }
}

describe('SSH hosts', () => {
  it('adds a host with a key made in Yett, shows its public key and pins by trust on first use', async () => {
    const ssh = await openHosts();
    await screen.findByTestId('ssh-empty');
    await fireEvent.click(screen.getByTestId('ssh-add'));
    await screen.findByTestId('ssh-form');
    await fill({ 'ssh-name': 'web-1', 'ssh-address': '127.0.0.1', 'ssh-port': '2222', 'ssh-user': 'deploy', 'ssh-owner': 'ana', 'ssh-backup': 'luis' });
    await fireEvent.input(screen.getByTestId('ssh-rules'), { target: { value: 'exact: uptime\n' } });
    await fireEvent.click(screen.getByTestId('ssh-submit'));
    const card = await screen.findByTestId('ssh-host-web-1');
    const form = ssh.SSHService.AddHost.mock.calls[0][0];
    expect(form).toMatchObject({ name: 'web-1', address: '127.0.0.1', port: 2222, user: 'deploy', privateKey: '', passphrase: '' });
    expect(form.settings).toMatchObject({ approval: 'per_call', rules: 'exact: uptime\n', owner: 'ana', backupRevoker: 'luis' });
    expect(within(card).getByTestId('ssh-pubkey').textContent).toContain('GENERATED yett:web-1');
    expect(screen.getByTestId('ssh-notice').textContent).toContain('authorized_keys');
    expect(within(card).getByTestId('ssh-no-pins')).toBeTruthy();

    await fireEvent.click(within(card).getByTestId('ssh-tofu'));
    await waitFor(() => expect(ssh.SSHService.TrustOnFirstUse).toHaveBeenCalledWith('ssh_1'));
    await waitFor(() => expect(within(screen.getByTestId('ssh-host-web-1')).getByTestId('ssh-pin').textContent).toContain(HOST_KEY_FP));
    expect(screen.getByTestId('ssh-notice').textContent).toContain('after it accepted Yett’s key');
    expect(within(screen.getByTestId('ssh-host-web-1')).queryByTestId('ssh-tofu')).toBeNull();
  });

  it('asks who answers for a new host: "I own this" makes the owner the backup revoker, and the environment goes with the form', async () => {
    const ssh = await openHosts();
    await fireEvent.click(await screen.findByTestId('ssh-add'));
    await screen.findByTestId('ssh-form');
    await fill({ 'ssh-name': 'db-1', 'ssh-address': '10.0.0.5', 'ssh-user': 'ops', 'ssh-owner': 'ana' });
    await fireEvent.click(screen.getByTestId('ssh-alone'));
    expect((screen.getByTestId('ssh-backup') as HTMLInputElement).value).toBe('ana');
    expect((screen.getByTestId('ssh-backup') as HTMLInputElement).readOnly).toBe(true);
    await fireEvent.change(screen.getByTestId('ssh-environment'), { target: { value: 'production' } });
    await fireEvent.click(screen.getByTestId('ssh-submit'));
    await screen.findByTestId('ssh-host-db-1');
    const form = ssh.SSHService.AddHost.mock.calls[0][0];
    expect(form.environment).toBe('production');
    expect(form.settings).toMatchObject({ owner: 'ana', backupRevoker: 'ana' });
    // The edit form keeps owner and backup revoker; the environment is the Inventory's.
    await fireEvent.click(within(screen.getByTestId('ssh-host-db-1')).getByTestId('ssh-edit'));
    const edit = await screen.findByTestId('ssh-edit-form');
    expect(within(edit).queryByTestId('ssh-environment')).toBeNull();
    expect(within(edit).getByTestId('ssh-owner')).toBeTruthy();
  });

  it('imports a key: it goes to the backend once, the field is emptied and it never reaches the page', async () => {
    const ssh = await openHosts();
    await fireEvent.click(await screen.findByTestId('ssh-add'));
    await fill({ 'ssh-name': 'db', 'ssh-address': 'db.internal', 'ssh-user': 'ops' });
    await fireEvent.click(screen.getByTestId('ssh-key-import'));
    const key = `-----BEGIN OPENSSH PRIVATE KEY-----\n${CANARY}\n-----END OPENSSH PRIVATE KEY-----\n`;
    await fireEvent.input(await screen.findByTestId('ssh-private-key'), { target: { value: key } });
    await fireEvent.input(screen.getByTestId('ssh-key-passphrase'), { target: { value: 'open sesame' } });
    // A backend bug echoing the key back must still not reach the page.
    ssh.SSHService.Hosts.mockImplementation(async () => ssh.state.hosts.map((h) => ({ ...h, privateKey: key })));
    await fireEvent.click(screen.getByTestId('ssh-submit'));
    await screen.findByTestId('ssh-host-db');
    expect(ssh.SSHService.AddHost.mock.calls[0][0]).toMatchObject({ privateKey: key, passphrase: 'open sesame' });
    expect(screen.queryByTestId('ssh-form')).toBeNull();
    expect(document.body.innerHTML).not.toContain(CANARY);
    expect(document.body.innerHTML).not.toContain('open sesame');
  });

  it('shows a refused trust on first use in words and pins nothing', async () => {
    const ssh = await openHosts({ hosts: [sshHost()] });
    ssh.state.tofuError = 'The host refused Yett’s key.';
    const card = await screen.findByTestId('ssh-host-web-1');
    await fireEvent.click(within(card).getByTestId('ssh-tofu'));
    expect((await within(card).findByTestId('ssh-host-error')).textContent).toContain('refused Yett’s key');
    expect(within(card).queryByTestId('ssh-pin')).toBeNull();
  });

  it('names a changed host key and pins it only when the person says they checked', async () => {
    const ssh = await openHosts({ hosts: [sshHost({ pins: [{ type: 'ssh-ed25519', fingerprint: 'SHA256:old' }] })] });
    await screen.findByTestId('ssh-host-web-1');
    expect(screen.queryByTestId('ssh-alert')).toBeNull();
    ssh.state.hosts[0] = { ...ssh.state.hosts[0], alertFingerprint: 'SHA256:presented', alertAt: '2026-12-01T11:00:00Z' };
    ssh.changed();
    const alert = await screen.findByTestId('ssh-alert');
    expect(alert.textContent).toContain('SHA256:presented');
    expect(within(screen.getByTestId('ssh-host-web-1')).getByTestId('ssh-host-state').textContent).toContain('Host key changed');
    await fireEvent.click(within(alert).getByTestId('ssh-accept'));
    await waitFor(() => expect(ssh.SSHService.AcceptPresented).toHaveBeenCalledWith('ssh_1'));
    await waitFor(() => expect(screen.queryByTestId('ssh-alert')).toBeNull());
  });

  it('pins pasted keys, edits settings, shows a recording as text and removes a host', async () => {
    const ssh = await openHosts({ hosts: [sshHost()] });
    const card = await screen.findByTestId('ssh-host-web-1');
    await fireEvent.click(within(card).getByTestId('ssh-paste-open'));
    await fireEvent.input(within(card).getByTestId('ssh-paste'), { target: { value: 'ssh-ed25519 AAAA...' } });
    await fireEvent.click(within(card).getByTestId('ssh-paste-pin'));
    await waitFor(() => expect(ssh.SSHService.PinPasted).toHaveBeenCalledWith('ssh_1', 'ssh-ed25519 AAAA...'));

    await fireEvent.click(within(screen.getByTestId('ssh-host-web-1')).getByTestId('ssh-edit'));
    const edit = await screen.findByTestId('ssh-edit-form');
    await fireEvent.click(within(edit).getByTestId('ssh-approval-session'));
    await fireEvent.click(within(edit).getByTestId('ssh-record'));
    await fireEvent.click(within(edit).getByTestId('ssh-submit'));
    await waitFor(() => expect(ssh.SSHService.UpdateHost).toHaveBeenCalled());
    expect(ssh.SSHService.UpdateHost.mock.calls[0][1]).toMatchObject({ approval: 'session', record: true });

    await fireEvent.click(within(screen.getByTestId('ssh-host-web-1')).getByTestId('ssh-recordings'));
    await fireEvent.click(await screen.findByTestId('ssh-recording'));
    const view = await screen.findByTestId('ssh-recording-view');
    expect(view.textContent).toContain('<b>up 3 days</b>');
    expect(view.querySelector('b')).toBeNull();

    await fireEvent.click(within(screen.getByTestId('ssh-host-web-1')).getByTestId('ssh-remove'));
    await fireEvent.click(screen.getByTestId('ssh-remove-confirm'));
    await screen.findByTestId('ssh-empty');
    expect(ssh.SSHService.RemoveHost).toHaveBeenCalledWith('ssh_1');
  });
});

describe('castText', () => {
  it('reads output and input and skips what is not an event', () => {
    const t = castText('{"version":2,"command":"cat","title":"a@b"}\n[0.1,"i","in\\n"]\n[0.2,"o","out\\n"]\nnot json\n[1,"x","?"]\n');
    expect(t).toEqual({ command: 'cat', title: 'a@b', output: 'out\n', input: 'in\n', skipped: 2 });
  });
});
