// The everyday app: connecting an agent, settings (passphrase, backups,
// keyring, theme), setup's recovery sheet, the layout's landmarks and the
// keyboard shortcuts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import App from '../App.svelte';
import { connectInfo, credentialView, installBridge, vaultStatus } from '../test/fakeBridge';
import { approvalCard, installApprovals, liveSession } from '../test/fakeApprovals';
import { installOAuth } from '../test/fakeOAuth';

afterEach(() => {
  document.documentElement.removeAttribute('data-theme');
  localStorage.clear();
});

async function openView(id: string, over = {}) {
  const bridge = installBridge(vaultStatus({ state: 'unlocked', ...over }));
  const approvals = installApprovals();
  render(App);
  await fireEvent.click(await screen.findByTestId(`nav-${id}`));
  await screen.findByTestId(`view-${id}`);
  return { bridge, approvals };
}

/** The views' ids in the order the sidebar lists them. */
function sidebarOrder(): string[] {
  return [...document.querySelectorAll('nav [data-testid^="nav-"]')].map((b) => b.getAttribute('data-testid')!.slice(4));
}

/** Creates a vault through the setup screen; the app then shows Connect an agent. */
async function createVault() {
  const bridge = installBridge(vaultStatus({ state: 'uninitialised', epoch: 0 }));
  render(App);
  await fireEvent.input(await screen.findByTestId('setup-passphrase'), { target: { value: 'correct horse battery staple' } });
  await fireEvent.input(screen.getByTestId('setup-confirm'), { target: { value: 'correct horse battery staple' } });
  await fireEvent.submit(screen.getByTestId('setup-screen'));
  await screen.findByTestId('view-connect');
  return bridge;
}

describe('layout', () => {
  it('has one main landmark, a named navigation, and an h1 on every view', async () => {
    installBridge(vaultStatus({ state: 'unlocked' }));
    render(App);
    await screen.findByTestId('shell');
    const order = sidebarOrder();
    for (const id of ['connect', 'credentials', 'connections', 'sessions', 'activity', 'settings', 'about']) expect(order).toContain(id);
    for (const id of order) {
      await fireEvent.click(screen.getByTestId(`nav-${id}`));
      const main = await screen.findByTestId(`view-${id}`);
      expect(document.querySelectorAll('main')).toHaveLength(1);
      expect(main.tagName).toBe('MAIN');
      await waitFor(() => expect(main.querySelectorAll('h1')).toHaveLength(1));
      expect(document.activeElement).toBe(main);
    }
    expect(screen.getByRole('navigation', { name: 'Main' })).toBeTruthy();
  });

  it('opens on "Connect an agent" right after the vault is created, with focus at its start, not on the body', async () => {
    const bridge = await createVault();
    expect(bridge.VaultService.Create).toHaveBeenCalledTimes(1);
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('view-connect')));
  });

  it('opens on Credentials when the app starts unlocked', async () => {
    installBridge(vaultStatus({ state: 'unlocked' }));
    render(App);
    await screen.findByTestId('view-credentials');
  });

  it('after an auto-lock, unlocking returns to the view that was open, with focus at its start', async () => {
    const bridge = await createVault();
    await fireEvent.click(screen.getByTestId('nav-activity'));
    await screen.findByTestId('view-activity');
    bridge.emit({ ...bridge.status, state: 'locked', epoch: bridge.status.epoch + 1 });
    await fireEvent.input(await screen.findByTestId('unlock-passphrase'), { target: { value: 'right passphrase 1' } });
    await fireEvent.submit(screen.getByTestId('unlock-screen'));
    const main = await screen.findByTestId('view-activity');
    await waitFor(() => expect(document.activeElement).toBe(main));
  });

  it('after Ctrl+L, unlocking returns to the view that was open; right after setup that is Connect an agent', async () => {
    const bridge = await createVault();
    await fireEvent.keyDown(window, { key: 'l', ctrlKey: true });
    await screen.findByTestId('unlock-screen');
    bridge.emit({ ...bridge.status, state: 'unlocked', epoch: bridge.status.epoch + 1 });
    await screen.findByTestId('view-connect');
    await fireEvent.click(screen.getByTestId('nav-settings'));
    await fireEvent.keyDown(window, { key: 'l', ctrlKey: true });
    await screen.findByTestId('unlock-screen');
    expect(bridge.VaultService.Lock).toHaveBeenCalledTimes(2);
    bridge.emit({ ...bridge.status, state: 'unlocked', epoch: bridge.status.epoch + 1 });
    await screen.findByTestId('view-settings');
  });
});

describe('Connect an agent', () => {
  it('gives each agent one line with the real path of yett', async () => {
    const { bridge } = await openView('connect');
    const command = await screen.findByTestId('client-command');
    expect(command.textContent).toBe('claude mcp add --scope user yett -- /opt/Yett/yett mcp');
    expect(command.textContent).not.toContain('/path/to');
    await fireEvent.click(screen.getByTestId('client-tab-codex'));
    expect(screen.getByTestId('client-command').textContent).toBe('codex mcp add yett -- /opt/Yett/yett mcp');
    // Arrow keys move between the tabs.
    await fireEvent.keyDown(screen.getByTestId('client-tab-codex'), { key: 'ArrowRight' });
    expect(screen.getByTestId('client-tab-vscode').getAttribute('aria-selected')).toBe('true');
    expect(document.activeElement).toBe(screen.getByTestId('client-tab-vscode'));
    await fireEvent.keyDown(screen.getByTestId('client-tab-vscode'), { key: 'End' });
    expect(screen.getByTestId('client-tab-other').getAttribute('aria-selected')).toBe('true');
    // Any other client has no one-click: only the command and the config.
    expect(screen.queryByTestId('agent-oneclick')).toBeNull();
    expect(screen.getByTestId('connect-cli-path').textContent).toBe('/opt/Yett/yett');
    expect(bridge.ConnectService.Info).toHaveBeenCalled();
    // No credential yet: it says to add one.
    await screen.findByTestId('connect-add-credential');
  });

  it('writes Yett into a client in one click, showing the change first, and takes it out again', async () => {
    const { bridge } = await openView('connect');
    // VS Code already has Yett: its tab says so.
    await screen.findByTestId('client-tab-added-vscode');
    expect(screen.queryByTestId('client-tab-added-claude-code')).toBeNull();
    const state = await screen.findByTestId('agent-state');
    expect(state.textContent!.replace(/\s+/g, ' ')).toContain('Not added yet. Yett can write itself into ~/.claude.json');
    expect(screen.getByTestId('agent-last-call').textContent).toContain('No call from Claude Code through Yett yet.');
    await fireEvent.click(screen.getByTestId('agent-add'));
    // Nothing is written before the person sees the change and says so.
    const change = await screen.findByTestId('agent-change');
    expect(bridge.ConnectService.ApplyAgent).not.toHaveBeenCalled();
    expect(change.textContent!.replace(/\s+/g, ' ')).toContain('This adds Yett to ~/.claude.json');
    expect(screen.getByTestId('agent-change-entry').textContent).toContain('"command": "/opt/Yett/yett"');
    await fireEvent.click(screen.getByTestId('agent-write'));
    expect(bridge.ConnectService.ApplyAgent).toHaveBeenCalledWith('claude', false, 'plan-claude-false');
    expect((await screen.findByTestId('agent-written')).textContent).toContain('The file as it was is ~/.claude.json.yett-backup.');
    await screen.findByTestId('client-tab-added-claude-code');
    expect((await screen.findByTestId('agent-state')).textContent).toContain('Yett is in Claude Code.');
    // Taking it out is shown first too; Cancel writes nothing.
    await fireEvent.click(screen.getByTestId('agent-remove'));
    await screen.findByTestId('agent-change');
    await fireEvent.click(screen.getByTestId('agent-cancel'));
    expect(screen.queryByTestId('agent-change')).toBeNull();
    await fireEvent.click(screen.getByTestId('agent-remove'));
    expect((await screen.findByTestId('agent-change')).textContent).toContain('This takes Yett out of ~/.claude.json');
    expect(screen.queryByTestId('agent-change-entry')).toBeNull();
    await fireEvent.click(screen.getByTestId('agent-write'));
    await screen.findByTestId('agent-add');
    expect(screen.queryByTestId('client-tab-added-claude-code')).toBeNull();
    expect(bridge.ConnectService.ApplyAgent).toHaveBeenCalledTimes(2);
    // Another command under the name yett: the button updates it.
    await fireEvent.click(screen.getByTestId('client-tab-codex'));
    expect((await screen.findByTestId('agent-state')).textContent).toContain('Codex has an entry named yett that is not this Yett’s');
    expect(screen.getByTestId('agent-add').textContent).toContain('Update Yett in Codex');
    // When a client last called, and from which process.
    await fireEvent.click(screen.getByTestId('client-tab-vscode'));
    expect((await screen.findByTestId('agent-last-call')).textContent!.replace(/\s+/g, ' ')).toMatch(
      /Last called through Yett .*2026.*, from code \(process 4242\), as the client names itself\./,
    );
    // A file Yett cannot edit safely: no button, and why.
    await fireEvent.click(screen.getByTestId('client-tab-cursor'));
    expect((await screen.findByTestId('agent-state')).textContent).toContain('the file is not valid JSON.');
    expect(screen.queryByTestId('agent-add')).toBeNull();
  });

  it('says what went wrong when the file changed since the change was shown', async () => {
    const { bridge } = await openView('connect');
    await fireEvent.click(await screen.findByTestId('agent-add'));
    await screen.findByTestId('agent-change');
    bridge.ConnectService.ApplyAgent.mockRejectedValueOnce('~/.claude.json changed since the change was shown: nothing was written; look at the change again');
    await fireEvent.click(screen.getByTestId('agent-write'));
    expect((await screen.findByTestId('agent-error')).textContent).toContain('nothing was written');
    expect(screen.queryByTestId('agent-written')).toBeNull();
  });

  it('says plainly when the yett command is missing', async () => {
    const bridge = installBridge(vaultStatus({ state: 'unlocked' }));
    bridge.ConnectService.Info.mockResolvedValue(connectInfo({ cliFound: false }));
    render(App);
    await fireEvent.click(await screen.findByTestId('nav-connect'));
    expect((await screen.findByTestId('connect-cli-missing')).textContent).toContain('/opt/Yett/yett');
  });

  it('shows the first agent live: waiting, then its card, then its session', async () => {
    const { bridge, approvals } = await openView('connect');
    bridge.credentials.push(credentialView());
    await screen.findByTestId('connect-live-waiting');
    approvals.set({ cards: [approvalCard({ agent: { ...approvalCard().agent, executable: 'node', pid: 777 } })] });
    const card = await screen.findByTestId('connect-live-card');
    expect(card.textContent!.replace(/\s+/g, ' ')).toContain('node (process 777) wants to reach api.example.com');
    approvals.set({ cards: [], sessions: [liveSession({ agent: { ...liveSession().agent, executable: 'node', pid: 777 } })] });
    expect((await screen.findByTestId('connect-live-session')).textContent!.replace(/\s+/g, ' ')).toContain('node (process 777) is approved');
  });
});

describe('Connections form', () => {
  async function startConnect() {
    installBridge(vaultStatus({ state: 'unlocked' }));
    const oauth = installOAuth();
    render(App);
    await fireEvent.click(await screen.findByTestId('nav-connections'));
    await fireEvent.click(await screen.findByTestId('connect-start'));
    await screen.findByTestId('connect-form');
    await waitFor(() => expect(screen.getAllByRole('option').length).toBeGreaterThan(2));
    await fireEvent.change(screen.getByTestId('oc-provider'), { target: { value: 'github' } });
    return oauth;
  }

  it('shows the redirect address to register and the provider’s own steps in plain words', async () => {
    await startConnect();
    const steps = screen.getByTestId('oc-steps');
    expect(steps.textContent).toContain('register Yett with GitHub');
    expect(steps.textContent).toContain('Developer settings, then OAuth Apps');
    expect(screen.getByTestId('oc-redirect').textContent).toBe('http://127.0.0.1/callback');
    expect(within(steps).getByRole('button', { name: /copy/i })).toBeTruthy();
    // No implementation notes in the steps themselves.
    expect(steps.querySelector('ol')?.textContent).not.toMatch(/PKCE|RFC|refresh token/);
    await fireEvent.change(screen.getByTestId('oc-provider'), { target: { value: 'microsoft' } });
    expect(screen.getByTestId('oc-steps').textContent).toContain('App registrations');
    expect(screen.getByTestId('oc-steps').textContent).toContain('Public client/native');
  });

  it('"I own this and revoke it myself" makes this person owner and backup revoker, and says so', async () => {
    const oauth = await startConnect();
    await fireEvent.click(screen.getByTestId('oc-alone'));
    const owner = screen.getByTestId('oc-owner') as HTMLInputElement;
    const backup = screen.getByTestId('oc-backup') as HTMLInputElement;
    await waitFor(() => expect(owner.value).toBe('ana'));
    expect(backup.value).toBe('ana');
    expect(backup.readOnly).toBe(true);
    expect(screen.getByTestId('connect-form').textContent).toContain('nobody else is named');
    // The backup revoker follows the owner while the box is ticked.
    await fireEvent.input(owner, { target: { value: 'ana@example.com' } });
    await waitFor(() => expect(backup.value).toBe('ana@example.com'));
    await fireEvent.input(screen.getByTestId('oc-name'), { target: { value: 'tracker' } });
    await fireEvent.input(screen.getByTestId('oc-client-id'), { target: { value: 'Iv1.abc' } });
    await fireEvent.change(screen.getByTestId('oc-environment'), { target: { value: 'production' } });
    await fireEvent.input(screen.getByTestId('oc-secret'), { target: { value: 'client-secret' } });
    await fireEvent.submit(screen.getByTestId('connect-form'));
    await waitFor(() => expect(oauth.OAuthService.Connect).toHaveBeenCalledTimes(1));
    expect(oauth.OAuthService.Connect).toHaveBeenCalledWith(expect.objectContaining({ owner: 'ana@example.com', backupRevoker: 'ana@example.com' }));
  });
});

describe('settings', () => {
  it('changes the passphrase: checks the fields first, empties them, and says what changed', async () => {
    const { bridge } = await openView('settings', { keyringEnabled: true });
    const form = screen.getByTestId('settings-passphrase');
    await fireEvent.submit(form);
    expect(form.textContent).toContain('Enter the passphrase you use now');
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('pp-current')));
    expect(screen.getByTestId('pp-current').getAttribute('aria-describedby')).toBe('pp-current-error');
    await fireEvent.input(screen.getByTestId('pp-current'), { target: { value: 'right passphrase 1' } });
    await fireEvent.input(screen.getByTestId('pp-next'), { target: { value: 'a new long passphrase' } });
    await fireEvent.input(screen.getByTestId('pp-repeat'), { target: { value: 'a new long passphrase' } });
    await fireEvent.submit(form);
    await waitFor(() => expect(bridge.VaultService.ChangePassphrase).toHaveBeenCalledWith('right passphrase 1', 'a new long passphrase'));
    const done = await screen.findByTestId('pp-done');
    expect(done.textContent).toContain('The old one no longer opens this vault');
    expect(done.textContent).toContain('Keyring unlock now uses a new key');
    for (const id of ['pp-current', 'pp-next', 'pp-repeat']) expect((screen.getByTestId(id) as HTMLInputElement).value).toBe('');
  });

  it('refuses a wrong current passphrase and puts focus back on it', async () => {
    await openView('settings');
    await fireEvent.input(screen.getByTestId('pp-current'), { target: { value: 'not it' } });
    await fireEvent.input(screen.getByTestId('pp-next'), { target: { value: 'a new long passphrase' } });
    await fireEvent.input(screen.getByTestId('pp-repeat'), { target: { value: 'a new long passphrase' } });
    await fireEvent.submit(screen.getByTestId('settings-passphrase'));
    expect((await screen.findByTestId('pp-error')).textContent).toBe('Wrong passphrase.');
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('pp-current')));
  });

  it('exports an encrypted backup after asking for the passphrase', async () => {
    const { bridge } = await openView('settings');
    await fireEvent.click(screen.getByTestId('export-submit'));
    expect(screen.getByTestId('export-error').textContent).toContain('opens with it and nothing else');
    expect(bridge.VaultService.ExportBackup).not.toHaveBeenCalled();
    await fireEvent.input(screen.getByTestId('export-pass'), { target: { value: 'right passphrase 1' } });
    await fireEvent.click(screen.getByTestId('export-submit'));
    expect((await screen.findByTestId('backup-done')).textContent).toContain('yett-2026-11-30.yettbackup');
    expect((screen.getByTestId('export-pass') as HTMLInputElement).value).toBe('');
  });

  it('restores a backup only after the file, its passphrase and a confirmation; Esc keeps the vault', async () => {
    const { bridge } = await openView('settings');
    await fireEvent.click(screen.getByTestId('restore-choose'));
    const confirm = await screen.findByTestId('restore-confirm');
    expect(confirm.textContent).toContain('yett-2026-11-30.yettbackup');
    expect(confirm.textContent).toContain('kept beside it, not deleted');
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('restore-pass')));
    await fireEvent.keyDown(screen.getByTestId('restore-pass'), { key: 'Escape' });
    await waitFor(() => expect(screen.queryByTestId('restore-confirm')).toBeNull());
    expect(document.activeElement).toBe(screen.getByTestId('restore-choose'));
    expect(bridge.VaultService.RestoreBackup).not.toHaveBeenCalled();

    await fireEvent.click(screen.getByTestId('restore-choose'));
    await screen.findByTestId('restore-confirm');
    await fireEvent.input(screen.getByTestId('restore-pass'), { target: { value: 'wrong one' } });
    await fireEvent.click(screen.getByTestId('restore-submit'));
    expect((await screen.findByTestId('restore-error')).textContent).toBe('Wrong passphrase.');
    await fireEvent.input(screen.getByTestId('restore-pass'), { target: { value: 'right passphrase 1' } });
    await fireEvent.click(screen.getByTestId('restore-submit'));
    await waitFor(() => expect(bridge.VaultService.RestoreBackup).toHaveBeenLastCalledWith('/home/ana/yett-2026-11-30.yettbackup', 'right passphrase 1'));
    await screen.findByTestId('backup-done');
  });

  it('stays on Settings through the lock and unlock a restore makes, instead of passing through the unlock screen', async () => {
    const { bridge } = await openView('settings');
    let sawUnlockScreen = false;
    bridge.VaultService.RestoreBackup.mockImplementation(async () => {
      // The real backend locks (every session ends), swaps the file, then unlocks.
      const before = bridge.status;
      bridge.emit({ ...before, state: 'locked', epoch: before.epoch + 1 });
      await Promise.resolve();
      sawUnlockScreen ||= screen.queryByTestId('unlock-screen') !== null;
      const after = { ...before, state: 'unlocked' as const, epoch: before.epoch + 2 };
      bridge.emit(after);
      return after;
    });
    await fireEvent.click(screen.getByTestId('restore-choose'));
    await fireEvent.input(await screen.findByTestId('restore-pass'), { target: { value: 'right passphrase 1' } });
    await fireEvent.click(screen.getByTestId('restore-submit'));
    expect((await screen.findByTestId('backup-done')).textContent).toContain('was restored');
    expect(sawUnlockScreen).toBe(false);
    expect(screen.getByTestId('view-settings')).toBeTruthy();
  });

  it('shows the unlock screen when a restore ends with the vault locked', async () => {
    const { bridge } = await openView('settings');
    bridge.VaultService.RestoreBackup.mockImplementation(async () => {
      bridge.emit({ ...bridge.status, state: 'locked', epoch: bridge.status.epoch + 1 });
      throw 'The backup was restored but could not be unlocked.';
    });
    await fireEvent.click(screen.getByTestId('restore-choose'));
    await fireEvent.input(await screen.findByTestId('restore-pass'), { target: { value: 'right passphrase 1' } });
    await fireEvent.click(screen.getByTestId('restore-submit'));
    await screen.findByTestId('unlock-screen');
  });

  it('says it waits for the system keyring, keeps the app usable, and stops waiting on request', async () => {
    const { bridge } = await openView('settings');
    let finish: (v: unknown) => void = () => {};
    bridge.VaultService.EnableKeyring.mockImplementation(() => new Promise((r) => (finish = r)));
    bridge.VaultService.CancelKeyringWait.mockImplementation(async () => finish(Promise.reject('Stopped waiting for the system keyring; nothing was changed.')));
    await fireEvent.click(screen.getByTestId('keyring-toggle'));
    const wait = await screen.findByTestId('keyring-waiting', {}, { timeout: 2000 });
    expect(wait.textContent).toContain('Waiting for your system keyring');
    expect(document.activeElement).toBe(screen.getByTestId('keyring-cancel'));
    // Another view loads meanwhile.
    await fireEvent.click(screen.getByTestId('nav-credentials'));
    await screen.findByTestId('credentials-empty');
    await fireEvent.click(screen.getByTestId('nav-settings'));
    expect(bridge.VaultService.ListCredentials).toHaveBeenCalled();
  });

  it('stops waiting for the keyring from the settings page', async () => {
    const { bridge } = await openView('settings');
    let fail: (e: unknown) => void = () => {};
    bridge.VaultService.EnableKeyring.mockImplementation(() => new Promise((_r, j) => (fail = j)));
    bridge.VaultService.CancelKeyringWait.mockImplementation(async () => fail('Stopped waiting for the system keyring; nothing was changed.'));
    await fireEvent.click(screen.getByTestId('keyring-toggle'));
    await fireEvent.click(await screen.findByTestId('keyring-cancel', {}, { timeout: 2000 }));
    expect((await screen.findByTestId('keyring-error')).textContent).toContain('nothing was changed');
    expect(screen.queryByTestId('keyring-waiting')).toBeNull();
    expect(screen.getByTestId('keyring-state').textContent).toBe('off');
  });

  it('applies the chosen theme and remembers it', async () => {
    await openView('settings');
    await fireEvent.click(screen.getByTestId('theme-dark'));
    expect(document.documentElement.getAttribute('data-theme')).toBe('dark');
    expect(localStorage.getItem('yett.theme')).toBe('dark');
    await fireEvent.click(screen.getByTestId('theme-system'));
    expect(document.documentElement.hasAttribute('data-theme')).toBe(false);
  });
});

describe('setup', () => {
  it('says the strength once, shows the passphrase on request, and offers a recovery sheet that says what it cannot do', async () => {
    installBridge(vaultStatus({ state: 'uninitialised', epoch: 0 }));
    render(App);
    await fireEvent.input(await screen.findByTestId('setup-passphrase'), { target: { value: 'correct horse battery staple' } });
    const strength = screen.getByTestId('setup-strength').textContent!.trim();
    expect(strength).toBe('Strong. Write it down somewhere safe: Yett cannot recover it.');
    await fireEvent.click(screen.getByTestId('setup-passphrase-toggle'));
    expect((screen.getByTestId('setup-passphrase') as HTMLInputElement).type).toBe('text');
    await fireEvent.click(screen.getByTestId('setup-recovery'));
    const sheet = await screen.findByTestId('recovery-sheet');
    expect(sheet.textContent).toContain('What this sheet can recover');
    expect(sheet.textContent).toContain('What it cannot recover');
    expect(sheet.textContent).not.toContain('correct horse');
    const print = vi.spyOn(window, 'print').mockImplementation(() => {});
    await fireEvent.click(screen.getByTestId('recovery-print'));
    expect(print).toHaveBeenCalled();
    await fireEvent.keyDown(sheet, { key: 'Escape' });
    expect(screen.queryByTestId('recovery-sheet')).toBeNull();
  });
});

describe('shortcuts', () => {
  it('Ctrl+1.. open the views, Ctrl+L locks, and About lists them all', async () => {
    const bridge = installBridge(vaultStatus({ state: 'unlocked' }));
    render(App);
    await screen.findByTestId('shell');
    // Ctrl+N opens the Nth view of the sidebar, whatever views it holds.
    const order = sidebarOrder();
    await fireEvent.keyDown(window, { key: String(order.indexOf('sessions') + 1), ctrlKey: true });
    await screen.findByTestId('view-sessions');
    // About is the last of more than nine views: F1 opens it.
    await fireEvent.keyDown(window, { key: 'F1' });
    const about = await screen.findByTestId('shortcuts');
    for (const keys of ['Ctrl+L', 'Ctrl+1', `Ctrl+${Math.min(order.length, 9)}`, 'F1', 'Ctrl+F', 'Esc']) expect(about.textContent).toContain(keys);
    expect(about.textContent).toContain('Approve the approval card that has keyboard focus');
    await fireEvent.keyDown(window, { key: 'l', ctrlKey: true });
    await screen.findByTestId('unlock-screen');
    expect(bridge.VaultService.Lock).toHaveBeenCalledTimes(1);
  });

  it('A and D answer only the card that has keyboard focus', async () => {
    installBridge(vaultStatus({ state: 'unlocked' }));
    const approvals = installApprovals({ cards: [approvalCard(), approvalCard({ id: 'rq-2' })] });
    render(App);
    const cards = await screen.findAllByTestId('approval-card');
    await fireEvent.keyDown(window, { key: 'a' });
    expect(approvals.ApprovalService.Answer).not.toHaveBeenCalled();
    within(cards[1]).getByTestId('approval-deny').focus();
    await fireEvent.keyDown(document.activeElement!, { key: 'd' });
    expect(approvals.ApprovalService.Answer).toHaveBeenCalledWith('rq-2', false);
  });
});

describe('approval cards in a small window', () => {
  it('fold into a badge that shows the count and opens them again', async () => {
    installBridge(vaultStatus({ state: 'unlocked' }));
    installApprovals({ cards: [approvalCard()] });
    render(App);
    await screen.findByTestId('approval-card');
    await fireEvent.click(screen.getByTestId('approval-fold'));
    const badge = await screen.findByTestId('approval-badge');
    await waitFor(() => expect(screen.queryByTestId('approval-card')).toBeNull());
    expect(badge.textContent).toContain('1');
    expect(document.activeElement).toBe(badge);
    await fireEvent.click(badge);
    await screen.findByTestId('approval-card');
    expect(document.activeElement?.id).toBe('approval-cards');
  });

  it('the sidebar badge is named by its visible text first', async () => {
    installBridge(vaultStatus({ state: 'unlocked' }));
    installApprovals({ cards: [approvalCard()] });
    render(App);
    const badge = await screen.findByTestId('approval-badge');
    expect(badge.getAttribute('aria-label')!.startsWith('Approvals 1')).toBe(true);
  });
});
