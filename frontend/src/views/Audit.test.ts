import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';
import type { ActivityFilter, ActivityItem, AuditStatus, LoggedSession, PageRequest } from '../lib/backend';

const CANARY = 'CANARY-audit-' + Math.random().toString(36).slice(2);

function auditStatus(over: Partial<AuditStatus> = {}): AuditStatus {
  return {
    state: 'intact', writing: true, problem: '', entries: 4, treeHead: '4 abc=', signedSize: 4,
    firstBad: -1, reason: '', torn: '', notes: [], ...over,
  };
}

function item(over: Partial<ActivityItem> = {}): ActivityItem {
  return {
    kind: 'authority', index: 0, time: '2026-11-29T18:00:00Z', type: 'vault_unlocked', sessionId: '', reason: '',
    vaultEpoch: 2, requestId: '', channel: '', operation: '', target: '', state: '', class: '', status: 0, bytes: 0,
    durationMs: 0, path: '', credentialRef: '', credentialName: '', step: '', outcome: '', code: '', authorizationId: '',
    drillId: '', drillKind: '', drill: false, ...over,
  };
}

function session(over: Partial<LoggedSession> = {}): LoggedSession {
  return {
    id: 'S1', executable: '/usr/bin/claude', pid: 4242, exeSha256: 'ab'.repeat(32), signer: 'unsigned', bootId: 'B1',
    vaultEpoch: 3, approvedAt: '2026-11-29T18:00:00Z', approvedBy: 'ana', surface: 'notification', ended: true,
    endedAt: '2026-11-29T18:05:00Z', endReason: 'process_exited', endInferred: false, calls: 2, ...over,
  };
}

/** Adds a fake app.AuditService to the fake Wails bridge. */
function installAudit(status = auditStatus(), vault: 'unlocked' | 'locked' = 'unlocked') {
  const bridge = installBridge(vaultStatus({ state: vault, epoch: 3 }));
  const AuditService = {
    Status: vi.fn(async (): Promise<unknown> => status),
    Sessions: vi.fn(async (_p: PageRequest): Promise<unknown> => ({ readable: true, note: '', sessions: [], more: false, next: 0 })),
    Activity: vi.fn(async (_f: ActivityFilter): Promise<unknown> => ({ readable: true, note: '', items: [], more: false, next: 0 })),
    ExportCheckpoint: vi.fn(async (): Promise<unknown> => ({ saved: true, path: '/media/usb/cp.txt', size: 4, treeHead: '4 abc=' })),
  };
  (window.go!.app as Record<string, unknown>).AuditService = AuditService;
  const emitChanged = () => {
    const on = window.runtime!.EventsOn as unknown as { mock: { calls: [string, () => void][] } };
    for (const [name, cb] of on.mock.calls) if (name === 'audit:changed') cb();
  };
  return { bridge, AuditService, emitChanged };
}

async function open(view: 'activity' | 'sessions') {
  render(App);
  await fireEvent.click(await screen.findByTestId(`nav-${view}`));
}

describe('audit banner', () => {
  it('is red and names the first bad entry when the log is tampered', async () => {
    installAudit(auditStatus({ state: 'tampered', writing: false, firstBad: 7, reason: 'audit: record checksum mismatch',
      problem: 'The audit log failed verification and is not being written to. It was left exactly as found.' }));
    render(App);
    const banner = await screen.findByTestId('audit-banner');
    expect(banner.getAttribute('role')).toBe('alert');
    expect(banner.className).toContain('error');
    expect(banner.textContent).toContain('failed verification');
    expect(banner.textContent).toContain('Entry 7');
    expect(banner.textContent).toContain('left exactly as found');
    expect(banner.textContent).not.toMatch(/repair/i);
  });

  it('is absent when the log is intact and recorded', async () => {
    const { AuditService } = installAudit();
    render(App);
    await waitFor(() => expect(AuditService.Status).toHaveBeenCalled());
    expect(screen.queryByTestId('audit-banner')).toBeNull();
  });

  it('is shown on the unlock screen too: verifying needs no key', async () => {
    installAudit(auditStatus({ state: 'tampered', writing: false, firstBad: 2, reason: 'audit: record checksum mismatch' }), 'locked');
    render(App);
    await screen.findByTestId('unlock-screen');
    expect((await screen.findByTestId('audit-banner')).textContent).toContain('Entry 2');
  });

  it('says the log is being verified, then shows the result when the backend says it changed', async () => {
    const { AuditService, emitChanged } = installAudit(auditStatus({ state: 'verifying', treeHead: '', signedSize: 0 }));
    render(App);
    const verifying = await screen.findByTestId('audit-verifying');
    expect(verifying.getAttribute('role')).toBe('status');
    expect(verifying.className).not.toContain('error');
    expect(screen.queryByTestId('audit-banner')).toBeNull();
    AuditService.Status.mockResolvedValue(auditStatus({ state: 'tampered', writing: false, firstBad: 3, reason: 'audit: entries do not match a signed checkpoint',
      problem: 'The audit log failed verification and Yett stopped writing to it. Nothing in it was repaired or removed.' }));
    emitChanged();
    const banner = await screen.findByTestId('audit-banner');
    expect(banner.textContent).toContain('Entry 3');
    expect(banner.textContent).toContain('stopped writing');
    expect(screen.queryByTestId('audit-verifying')).toBeNull();
  });

  it('goes away when the verification finds the log intact', async () => {
    const { AuditService, emitChanged } = installAudit(auditStatus({ state: 'verifying' }));
    render(App);
    await screen.findByTestId('audit-verifying');
    AuditService.Status.mockResolvedValue(auditStatus());
    emitChanged();
    await waitFor(() => expect(screen.queryByTestId('audit-verifying')).toBeNull());
    expect(screen.queryByTestId('audit-banner')).toBeNull();
  });

  it('shows a write problem even when the file verifies', async () => {
    installAudit(auditStatus({ problem: 'The audit log is not being written by this window: another Yett process holds it.' }));
    render(App);
    expect((await screen.findByTestId('audit-problem')).textContent).toContain('another Yett process');
  });
});

describe('activity view', () => {
  it('lists calls and vault events with their reasons, and says intact', async () => {
    const { AuditService } = installAudit();
    AuditService.Activity.mockResolvedValue({
      readable: true, note: '', more: false, next: 0,
      items: [
        item({ index: 5, kind: 'call', type: 'action_requested', channel: 'http', operation: 'create_issue',
          target: 'api.example.com', state: 'denied', class: 'denied', reason: 'vault_locked', sessionId: 'S1' }),
        item({ index: 3, type: 'vault_locked', reason: 'user', vaultEpoch: 3 }),
        // A backend bug adding a field must not reach the page.
        { ...item({ index: 1 }), secret: CANARY },
      ],
    });
    await open('activity');
    const rows = await screen.findAllByTestId('activity-item');
    expect(rows).toHaveLength(3);
    expect(rows[0].textContent).toContain('create_issue api.example.com');
    expect(rows[0].textContent).toContain('Denied');
    expect(rows[0].textContent).toContain('the vault was locked');
    expect(rows[1].textContent).toContain('Vault locked');
    expect(rows[1].textContent).toContain('locked by you');
    expect(rows[2].getAttribute('data-type')).toBe('vault_unlocked');
    expect((await screen.findByTestId('audit-state')).textContent).toBe('Intact');
    expect(document.body.innerHTML).not.toContain(CANARY);
  });

  // Issue 25: HTTP rows had no path though the page promises "the
  // credential and path it used", and adding a credential or rotating a
  // secret both read "vault changed" with no subject.
  it('names each call\'s path and credential, and each change to the vault with what it changed', async () => {
    const { AuditService } = installAudit();
    AuditService.Activity.mockResolvedValue({
      readable: true, note: '', more: false, next: 0,
      items: [
        item({ index: 9, kind: 'call', type: 'action_requested', channel: 'http', operation: 'GET', target: 'api.github.com',
          path: '/user', state: 'completed', class: 'success', status: 200, credentialRef: 'cred_1', credentialName: '' }),
        item({ index: 7, type: 'vault_changed', reason: 'secret_rotated', credentialRef: 'cred_gone', credentialName: 'github' }),
        item({ index: 6, type: 'vault_changed', reason: 'credential_added', credentialRef: 'cred_gone', credentialName: 'github' }),
        item({ index: 5, type: 'vault_changed', reason: 'ssh_host_added', credentialName: 'web-1' }),
        item({ index: 4, type: 'vault_changed', reason: 'passphrase_changed' }),
      ],
    });
    await open('activity');
    const rows = await screen.findAllByTestId('activity-item');
    expect(rows[0].textContent).toContain('GET api.github.com/user');
    expect(rows[1].textContent).toContain('Secret rotated: “github” (removed since)');
    expect(rows[2].textContent).toContain('Credential added: “github”');
    expect(rows[3].textContent).toContain('SSH host added: “web-1”');
    expect(rows[4].textContent).toContain('Vault passphrase changed');
    expect(document.body.textContent).not.toContain('vault changed');
  });

  // Issue 25: a removal undone, a rotation reminder and the backup
  // reminder are vault changes too; the card explains "checkpoint".
  it('names a removal and its undo, and the reminders\' changes; the audit card explains checkpoints', async () => {
    const { AuditService } = installAudit();
    AuditService.Activity.mockResolvedValue({
      readable: true, note: '', more: false, next: 0,
      items: [
        item({ index: 9, type: 'vault_changed', reason: 'backup_reminder_changed', credentialName: 'after 7 days' }),
        item({ index: 8, type: 'vault_changed', reason: 'rotation_reminder_changed', credentialRef: 'cred_gone', credentialName: 'github' }),
        item({ index: 7, type: 'vault_changed', reason: 'credential_restored', credentialRef: 'cred_gone', credentialName: 'github' }),
        item({ index: 6, type: 'vault_changed', reason: 'credential_removed', credentialRef: 'cred_gone', credentialName: 'github' }),
      ],
    });
    await open('activity');
    const rows = await screen.findAllByTestId('activity-item');
    expect(rows[0].textContent).toContain('Backup reminder changed: “after 7 days”');
    expect(rows[1].textContent).toContain('Rotation reminder changed: “github”');
    expect(rows[2].textContent).toContain('Credential restored (removal undone): “github”');
    expect(rows[3].textContent).toContain('Credential removed: “github”');
    await fireEvent.click(screen.getByTestId('help-checkpoint'));
    expect(screen.getByTestId('help-checkpoint-text').textContent).toContain('yett audit verify --checkpoint');
  });

  // Issue 20: after drills, Activity named no drill or step, said
  // "Account revoked at the provider" for every step even when
  // verification failed, showed switching back on as "connected", and
  // mixed the drill client's refused calls with agents'.
  it('names drills and their steps, each revocation step by its outcome, and the drill client\'s own calls', async () => {
    const { AuditService } = installAudit();
    let n = 100;
    const oauth = (step: string, outcome: string, code: string, type = 'authorization_revoked') =>
      item({ index: n--, type, step, outcome, code, authorizationId: 'az-1' });
    AuditService.Activity.mockResolvedValue({
      readable: true, note: '', more: false, next: 0,
      items: [
        item({ index: 200, type: 'drill_finished', outcome: 'failed', drillId: 'dr-9', drillKind: 'unattended', authorizationId: 'az-1' }),
        oauth('resume', 'ok', '', 'authorization_connected'),
        item({ index: 150, type: 'drill_step', step: 'refresh_token_kept', outcome: 'failed', drillId: 'dr-9', drillKind: 'unattended' }),
        item({ index: 140, kind: 'call', type: 'action_denied', channel: 'oauth', operation: 'tracker.list', target: 'api.example.test',
          state: 'denied', class: 'denied', reason: 'authorization_suspended', drill: true }),
        oauth('suspend', 'ok', '', 'authorization_disabled'),
        oauth('provider_revocation', 'ok', 'refresh_token'),
        oauth('verification', 'ok', 'refresh_token'),
        oauth('verification', 'ok', 'unverified_access_token'),
        oauth('verification', 'failed', 'access_token'),
      ],
    });
    await open('activity');
    const rows = (await screen.findAllByTestId('activity-item')).map((r) => r.textContent ?? '');
    expect(rows[0]).toContain('Unattended revocation drill failed');
    expect(rows[0]).toContain('drill dr-9');
    expect(rows[1]).toContain('Account switched back on');
    expect(rows[2]).toContain('Drill step failed: the refresh token is left alone');
    expect(rows[3]).toContain('Revocation drill’s own call');
    expect(rows[3]).toContain('no agent');
    expect(rows[4]).toContain('Account switched off in Yett');
    expect(rows[5]).toContain('Revoked at the provider: the refresh token');
    expect(rows[6]).toContain('Revocation verified: the refresh token is inactive');
    expect(rows[7]).toContain('not verified: no introspection endpoint for the access token');
    expect(rows[8]).toContain('Revocation not verified: the access token may still be active');
    expect(rows.filter((r) => r.includes('Account revoked at the provider'))).toHaveLength(0);
  });

  it('sends the filters to the backend', async () => {
    const { AuditService } = installAudit();
    await open('activity');
    await screen.findByTestId('activity-empty');
    await fireEvent.input(screen.getByTestId('filter-session'), { target: { value: ' S2 ' } });
    await fireEvent.input(screen.getByTestId('filter-channel'), { target: { value: 'ssh' } });
    await fireEvent.change(screen.getByTestId('filter-class'), { target: { value: 'denied' } });
    await fireEvent.input(screen.getByTestId('filter-from'), { target: { value: '2026-11-29T10:00' } });
    await fireEvent.click(screen.getByTestId('filter-apply'));
    await waitFor(() => {
      const f = AuditService.Activity.mock.calls.at(-1)![0];
      expect(f).toMatchObject({ sessionId: 'S2', channel: 'ssh', class: 'denied', to: '' });
      expect(f.from).toBe(new Date('2026-11-29T10:00').toISOString());
    });
  });

  it('asks to unlock when the log cannot be decrypted', async () => {
    const { AuditService } = installAudit();
    AuditService.Activity.mockResolvedValue({ readable: false, note: 'Unlock the vault to read the log.', items: null, more: false, next: 0 });
    await open('activity');
    expect((await screen.findByTestId('activity-locked')).textContent).toBe('Unlock the vault to read the log.');
  });

  it('reloads when the log changes', async () => {
    const { AuditService, emitChanged } = installAudit();
    await open('activity');
    await screen.findByTestId('activity-empty');
    AuditService.Activity.mockResolvedValue({ readable: true, note: '', more: false, next: 0, items: [item({ index: 9, type: 'vault_locked', reason: 'idle' })] });
    emitChanged();
    expect((await screen.findByTestId('activity-item')).textContent).toContain('idle timeout');
  });

  it('saves a checkpoint and says where', async () => {
    const { AuditService } = installAudit();
    await open('activity');
    await fireEvent.click(await screen.findByTestId('checkpoint-save'));
    expect(AuditService.ExportCheckpoint).toHaveBeenCalledTimes(1);
    expect((await screen.findByTestId('checkpoint-saved')).textContent).toContain('/media/usb/cp.txt');
    expect(screen.getByTestId('audit-status').textContent).toContain('prove later');
  });

  it('asks for the first page, then the older one before the last item shown', async () => {
    const { AuditService, emitChanged } = installAudit();
    AuditService.Activity.mockImplementation(async (f: ActivityFilter) =>
      f.before === 0
        ? { readable: true, note: '', more: true, next: 8, items: [item({ index: 9 }), item({ index: 8 })] }
        : { readable: true, note: '', more: false, next: 0, items: [item({ index: 3 })] },
    );
    await open('activity');
    expect(await screen.findAllByTestId('activity-item')).toHaveLength(2);
    expect(AuditService.Activity.mock.calls.at(-1)![0]).toMatchObject({ before: 0, limit: 100 });
    await fireEvent.click(screen.getByTestId('activity-older'));
    await waitFor(() => expect(screen.getAllByTestId('activity-item')).toHaveLength(3));
    expect(AuditService.Activity.mock.calls.at(-1)![0]).toMatchObject({ before: 8, limit: 100 });
    expect(screen.queryByTestId('activity-older')).toBeNull();
    // A change reloads from the newest, as many as are shown.
    emitChanged();
    await waitFor(() => expect(AuditService.Activity.mock.calls.at(-1)![0]).toMatchObject({ before: 0, limit: 100 }));
  });

  // Issue 25: at 820 px the audit card and the filters pushed every entry
  // below the fold.
  it('keeps the audit card to one line and the filters folded while all is well, and Ctrl+F opens them', async () => {
    installAudit();
    await open('activity');
    await screen.findByTestId('audit-about');
    expect((screen.getByTestId('audit-about') as HTMLDetailsElement).open).toBe(false);
    const box = screen.getByTestId('activity-filter-box') as HTMLDetailsElement;
    expect(box.open).toBe(false);
    await fireEvent.keyDown(window, { key: 'f', ctrlKey: true });
    expect(box.open).toBe(true);
    expect(document.activeElement).toBe(screen.getByTestId('filter-session'));
  });

  it('spells out a tampered log at once', async () => {
    installAudit(auditStatus({ state: 'tampered', writing: false, firstBad: 7, reason: 'audit: record checksum mismatch' }));
    await open('activity');
    await waitFor(() => expect((screen.getByTestId('audit-about') as HTMLDetailsElement).open).toBe(true));
  });

  it('shows the verification in progress in the status card', async () => {
    installAudit(auditStatus({ state: 'verifying', entries: 1000000 }));
    await open('activity');
    await waitFor(() => expect(screen.getByTestId('audit-state').textContent).toBe('Verifying'));
    expect(screen.getByTestId('audit-status').textContent).toContain('being verified');
    expect((screen.getByTestId('checkpoint-save') as HTMLButtonElement).disabled).toBe(true);
  });

  it('offers no checkpoint of a tampered log', async () => {
    installAudit(auditStatus({ state: 'tampered', firstBad: 2, reason: 'x' }));
    await open('activity');
    await waitFor(() => expect((screen.getByTestId('checkpoint-save') as HTMLButtonElement).disabled).toBe(true));
  });
});

describe('sessions view', () => {
  it('shows an honest empty state', async () => {
    installAudit();
    await open('sessions');
    expect((await screen.findByTestId('sessions-empty')).textContent).toContain('No agent sessions recorded yet');
  });

  it('shows who approved, through which surface, and why it ended', async () => {
    const { AuditService } = installAudit();
    AuditService.Sessions.mockResolvedValue({
      readable: true, note: '', more: false, next: 0,
      sessions: [
        session({ id: 'S2', ended: false, endReason: '', endedAt: '', surface: 'app' }),
        session(),
        session({ id: 'S0', endReason: 'gateway_restarted', endInferred: true }),
      ],
    });
    await open('sessions');
    const rows = await screen.findAllByTestId('session-row');
    expect(rows).toHaveLength(3);
    expect(within(rows[0]).getByTestId('session-state').textContent).toBe('Open in the log');
    expect(rows[0].textContent).toContain('by ana in the app.');
    expect(rows[1].textContent).toContain('by ana');
    expect(rows[1].textContent).toContain('from a notification');
    expect(within(rows[1]).getByTestId('session-end').textContent).toContain('the agent process exited');
    expect(within(rows[2]).getByTestId('session-end').textContent).toContain('inferred');
  });

  it('pages through older sessions', async () => {
    const { AuditService } = installAudit();
    AuditService.Sessions.mockImplementation(async (p: PageRequest) =>
      p.before === 0
        ? { readable: true, note: '', more: true, next: 40, sessions: [session({ id: 'S2' })] }
        : { readable: true, note: '', more: false, next: 0, sessions: [session({ id: 'S1' })] },
    );
    await open('sessions');
    expect(await screen.findAllByTestId('session-row')).toHaveLength(1);
    await fireEvent.click(screen.getByTestId('sessions-older'));
    await waitFor(() => expect(screen.getAllByTestId('session-row')).toHaveLength(2));
    expect(AuditService.Sessions.mock.calls.at(-1)![0]).toEqual({ before: 40, limit: 100 });
  });

  it('asks to unlock when locked', async () => {
    const { AuditService } = installAudit();
    AuditService.Sessions.mockResolvedValue({ readable: false, note: 'Unlock the vault to read the log.', sessions: [], more: false, next: 0 });
    await open('sessions');
    await screen.findByTestId('sessions-locked');
  });

  it('refuses a malformed session instead of guessing', async () => {
    const { AuditService } = installAudit();
    AuditService.Sessions.mockResolvedValue({ readable: true, note: '', sessions: [{ id: 'S1' }], more: false, next: 0 });
    await open('sessions');
    expect((await screen.findByTestId('sessions-error')).textContent).toContain('does not understand');
  });
});

describe('audit payload parsing', () => {
  it('refuses a verification state it does not know', async () => {
    const { parseView } = await import('../lib/backend');
    expect(() => parseView('AuditStatus', { ...auditStatus(), state: 'probably_fine' })).toThrow(/does not understand/);
    expect(parseView('AuditStatus', { ...auditStatus(), notes: null }).notes).toEqual([]);
  });

  it('copies only known activity fields', async () => {
    const { parseView } = await import('../lib/backend');
    const v = parseView('ActivityView', { readable: true, note: '', more: false, next: 0, items: [{ ...item(), token: CANARY }] });
    expect(JSON.stringify(v)).not.toContain(CANARY);
    expect(() => parseView('ActivityView', { readable: true, note: '', more: false, next: 0, items: [{ ...item(), kind: 'secret' }] })).toThrow();
    expect(() => parseView('ActivityView', { readable: true, note: '', items: [] })).toThrow(/does not understand/);
  });
});
