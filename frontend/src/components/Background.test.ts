import { afterEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';
import { approvalCard, decision, installApprovals } from '../test/fakeApprovals';
import { installDesktop } from '../test/fakeDesktop';
import type { DesktopSettings } from '../lib/backend';
import { formatTimestamp } from '../lib/time';

async function openApp(cards = [approvalCard()], desktop: Partial<DesktopSettings> = {}, decisions = [decision()]) {
  installBridge(vaultStatus({ state: 'unlocked' }));
  const approvals = installApprovals({ cards, decisions });
  const fake = installDesktop(desktop);
  render(App);
  await screen.findByTestId('shell');
  return { approvals, desktop: fake };
}

describe('the card, finished', () => {
  afterEach(() => {
    document.title = '';
  });

  it('says what approving covers and names its keyboard shortcuts', async () => {
    await openApp([approvalCard(), approvalCard({ id: 'rq-2', kind: 'call', method: 'DELETE', path: '/v1/x', scope: 'this call only' })]);
    const [session, call] = await screen.findAllByTestId('approval-card');
    expect(within(session).getByTestId('approval-scope').textContent).toContain('this run: until pid 48192 exits');
    expect(within(call).getByTestId('approval-scope').textContent).toContain('this call only');
    expect(within(session).getByTestId('approval-approve').getAttribute('aria-keyshortcuts')).toBe('A');
    expect(within(session).getByTestId('approval-deny').getAttribute('aria-keyshortcuts')).toBe('D');
  });

  it('counts waiting cards in the window title, and in the status bar while their panel is folded', async () => {
    const { approvals } = await openApp([approvalCard(), approvalCard({ id: 'rq-2' })]);
    await waitFor(() => expect(document.title).toBe('Yett (2 waiting)'));
    // The open panel's title counts them; the status bar does not repeat it.
    expect(screen.queryByTestId('status-approvals')).toBeNull();
    await userEvent.click(await screen.findByTestId('approval-fold'));
    expect(screen.getByTestId('status-approvals-count').textContent).toBe('2');
    approvals.set({ cards: [] });
    await waitFor(() => expect(document.title).toBe('Yett'));
    expect(screen.queryByTestId('status-approvals')).toBeNull();
  });

  it('the status bar count brings the folded cards forward', async () => {
    await openApp();
    await userEvent.click(await screen.findByTestId('approval-fold'));
    expect(screen.queryByTestId('approval-layer')).toBeNull();
    await userEvent.click(screen.getByTestId('status-approvals'));
    expect(document.activeElement?.id).toBe('approval-cards');
  });
});

describe('recent decisions', () => {
  it('a card answered with a grant says so, and until when', async () => {
    await openApp([], {}, [
      decision({ id: 'rq-g', kind: 'call', method: 'POST', target: 'api.example.com/v1/x', grant: 'POST requests to api.example.com/v1/…', grantUntil: '2026-11-29T18:11:00Z' }),
    ]);
    await userEvent.click(screen.getByTestId('nav-sessions'));
    const list = await screen.findByTestId('recent-decisions');
    const [row] = within(list).getAllByTestId('recent-decision');
    expect(row.dataset.outcome).toBe('approved');
    expect(within(row).getByTestId('decision-what').textContent).toContain(
      `POST api.example.com/v1/x, and calls like it for a while: POST requests to api.example.com/v1/… until ${formatTimestamp('2026-11-29T18:11:00Z')}`,
    );
  });

  it('lists who answered what, where, newest first, and adds the window’s own answers', async () => {
    await openApp([approvalCard()], {}, [
      decision({ id: 'rq-a', outcome: 'approved', where: 'from a notification', by: 'ana' }),
      decision({ id: 'rq-b', kind: 'call', method: 'POST', target: 'api.example.com/v1/x', outcome: 'expired', where: '', by: '' }),
    ]);
    await userEvent.click(screen.getByTestId('nav-sessions'));
    const list = await screen.findByTestId('recent-decisions');
    let rows = within(list).getAllByTestId('recent-decision');
    expect(rows.map((r) => r.dataset.outcome)).toEqual(['approved', 'expired']);
    expect(within(rows[0]).getByTestId('decision-how').textContent).toContain('by ana from a notification');
    expect(within(rows[0]).getByTestId('decision-what').textContent).toContain('claude (pid 48192)');
    expect(within(rows[1]).getByTestId('decision-outcome').textContent?.trim()).toBe('No answer in time');
    expect(within(rows[1]).getByTestId('decision-what').textContent).toContain('POST api.example.com/v1/x');
    expect(within(rows[1]).getByTestId('decision-what').textContent).not.toContain('calls like it');
    await userEvent.click(screen.getByTestId('approval-deny'));
    await waitFor(() => expect(within(list).getAllByTestId('recent-decision')).toHaveLength(3));
    rows = within(list).getAllByTestId('recent-decision');
    expect(rows[0].dataset.outcome).toBe('denied');
    expect(within(rows[0]).getByTestId('decision-how').textContent).toContain('in the window');
  });
});

describe('a withdrawn card', () => {
  it('is listed with why it went away, never as an answer', async () => {
    await openApp([], {}, [
      decision({ id: 'rq-w', outcome: 'withdrawn', why: 'the vault was locked or unlocked, which withdraws every card', where: '', by: '' }),
    ]);
    await userEvent.click(screen.getByTestId('nav-sessions'));
    const row = within(await screen.findByTestId('recent-decisions')).getByTestId('recent-decision');
    expect(row.dataset.outcome).toBe('withdrawn');
    expect(within(row).getByTestId('decision-outcome').textContent?.trim()).toBe('Withdrawn');
    expect(within(row).getByTestId('decision-how').textContent).toContain('the vault was locked or unlocked');
  });
});

describe('Yett in the background', () => {
  it('a notification click or a second launch brings the asked card into view, without focusing its buttons', async () => {
    const { desktop } = await openApp([approvalCard(), approvalCard({ id: 'rq-2' })]);
    await userEvent.click(await screen.findByTestId('approval-fold'));
    desktop.emit('app:show-card', { id: 'rq-2' });
    await waitFor(() => expect(screen.getByTestId('card-in-view').textContent).toBe('rq-2'));
    expect(screen.getByTestId('approval-layer')).toBeTruthy();
    expect(document.activeElement?.id).toBe('approval-cards');
    const shown = document.querySelector('[data-approval-id="rq-2"]')!;
    expect(shown.classList.contains('shown')).toBe(true);
  });

  it('a card brought into view while keyboard focus is already in the panel leaves focus where the person put it', async () => {
    // Where notifications cannot show, every new card raises the window;
    // that event can arrive after the person reached the card (Ctrl+J) or
    // one of its buttons, and must not pull focus back to the panel.
    const { desktop } = await openApp([approvalCard(), approvalCard({ id: 'rq-2' })]);
    const [first, second] = await screen.findAllByTestId('approval-card');
    first.focus();
    desktop.emit('app:show-card', { id: 'rq-1' });
    await waitFor(() => expect(screen.getByTestId('card-in-view').textContent).toBe('rq-1'));
    expect(document.activeElement).toBe(first);
    const approve = within(second).getByTestId('approval-approve');
    approve.focus();
    desktop.emit('app:show-card', { id: 'rq-2' });
    await waitFor(() => expect(screen.getByTestId('card-in-view').textContent).toBe('rq-2'));
    expect(document.activeElement).toBe(approve);
    expect(second.classList.contains('shown')).toBe(true);
  });

  it('the first close says Yett keeps running, and Keep running hides the window', async () => {
    const { desktop } = await openApp([]);
    expect(screen.queryByTestId('close-notice')).toBeNull();
    desktop.emit('app:close-requested', {});
    const notice = await screen.findByTestId('close-notice');
    expect(notice.textContent).toContain('yett quit');
    expect(notice.textContent).toContain('icon in the system tray or menu bar');
    expect(document.activeElement).toBe(within(notice).getByTestId('close-notice-keep'));
    await userEvent.click(within(notice).getByTestId('close-notice-keep'));
    expect(desktop.DesktopService.KeepRunningInBackground).toHaveBeenCalledOnce();
    await waitFor(() => expect(screen.queryByTestId('close-notice')).toBeNull());
  });

  it('the first close says so on the setup and unlock screens too', async () => {
    for (const state of ['uninitialised', 'locked'] as const) {
      installBridge(vaultStatus({ state }));
      installApprovals({ cards: [], decisions: [] });
      const desktop = installDesktop();
      const { unmount } = render(App);
      await screen.findByTestId(state === 'locked' ? 'unlock-screen' : 'setup-screen');
      desktop.emit('app:close-requested', {});
      const notice = await screen.findByTestId('close-notice');
      await userEvent.click(within(notice).getByTestId('close-notice-keep'));
      expect(desktop.DesktopService.KeepRunningInBackground).toHaveBeenCalledOnce();
      unmount();
    }
  });

  it('Quit in the first-close notice quits', async () => {
    const { desktop } = await openApp([]);
    desktop.emit('app:close-requested', {});
    await userEvent.click(await screen.findByTestId('close-notice-quit'));
    expect(desktop.DesktopService.Quit).toHaveBeenCalledOnce();
  });
});

describe('Settings: background and notifications', () => {
  const sensitive = [
    { ref: 'cred_1', kind: 'credential' as const, name: 'prod-deploy', detail: 'deploy.example.com' },
    { ref: 'operation:close_issue', kind: 'operation' as const, name: 'close_issue', detail: 'POST' },
  ];

  it('turns autostart on and marks a credential sensitive through the backend', async () => {
    const { desktop } = await openApp([], { sensitive });
    await userEvent.click(screen.getByTestId('nav-settings'));
    const section = await screen.findByTestId('settings-background');
    await waitFor(() => expect(within(section).getByTestId('notify-status').textContent).toContain('dunst 1.9.0'));
    await userEvent.click(within(section).getByTestId('autostart-toggle'));
    expect(desktop.DesktopService.SetAutostart).toHaveBeenCalledWith(true);
    await waitFor(() => expect((within(section).getByTestId('autostart-toggle') as HTMLInputElement).checked).toBe(true));
    const toggles = within(section).getAllByTestId('sensitive-toggle');
    expect(toggles.map((t) => t.dataset.ref)).toEqual(['cred_1', 'operation:close_issue']);
    await userEvent.click(toggles[0]);
    expect(desktop.DesktopService.SetNotificationPolicy).toHaveBeenLastCalledWith({
      sessionCards: true,
      callCards: true,
      windowOnly: ['cred_1'],
    });
    await userEvent.click(within(section).getByTestId('policy-session'));
    expect(desktop.DesktopService.SetNotificationPolicy).toHaveBeenLastCalledWith({
      sessionCards: false,
      callCards: true,
      windowOnly: ['cred_1'],
    });
    await userEvent.click(within(section).getByTestId('quit-yett'));
    expect(desktop.DesktopService.Quit).toHaveBeenCalledOnce();
  });

  it('says why notifications are unavailable', async () => {
    await openApp([], {
      notifications: { available: false, actions: false, server: '', problem: 'No notification service is running on this desktop, so Yett shows its window when an agent asks.' },
    });
    await userEvent.click(screen.getByTestId('nav-settings'));
    const problem = await screen.findByTestId('notify-problem');
    expect(problem.textContent).toContain('No notification service is running');
  });

  it('shows a pushed change of the notification service', async () => {
    const { desktop } = await openApp([]);
    await userEvent.click(screen.getByTestId('nav-settings'));
    await screen.findByTestId('notify-status');
    desktop.emit('desktop:changed', {
      ...desktop.state,
      notifications: { available: true, actions: false, server: 'x', problem: 'no buttons here' },
    });
    await waitFor(() => expect(screen.getByTestId('notify-problem').textContent).toBe('no buttons here'));
    vi.clearAllMocks();
  });
});

describe('the notification server', () => {
  it('a server the person has not trusted is shown with who it is and why, and Trust accepts that very one', async () => {
    const { desktop } = await openApp([], {
      notificationServer: {
        current: 'dunst 1.9.0 (bus name :1.42, pid 5120, /usr/bin/python3)',
        name: ':1.42',
        trusted: false,
        why: 'the notification server changed since you unlocked Yett (it was dunst 1.9.0 (bus name :1.7, pid 1432, /usr/bin/dunst)).',
      },
    });
    await userEvent.click(screen.getByTestId('nav-settings'));
    const change = await screen.findByTestId('notify-server-change');
    expect(within(change).getByTestId('notify-server-current').textContent).toContain('pid 5120, /usr/bin/python3');
    expect(change.textContent).toContain('without Approve or Deny');
    expect(change.textContent).toContain('The notification server changed since you unlocked Yett');
    await userEvent.click(within(change).getByTestId('notify-server-accept'));
    expect(desktop.DesktopService.AcceptNotificationServer).toHaveBeenCalledWith(':1.42');
    await waitFor(() => expect(screen.queryByTestId('notify-server-change')).toBeNull());
    expect(screen.getByTestId('notify-server-current').textContent).toContain('/usr/bin/python3');
  });

  it('a refused acceptance says why and keeps the warning', async () => {
    const { desktop } = await openApp([], {
      notificationServer: { current: 'dunst 1.9.0 (bus name :1.42, pid 5120, /usr/bin/dunst)', name: ':1.42', trusted: false, why: 'x.' },
    });
    desktop.DesktopService.AcceptNotificationServer.mockRejectedValueOnce(
      new Error('Your system did not confirm it is you, so the notification server was not accepted.'),
    );
    await userEvent.click(screen.getByTestId('nav-settings'));
    await userEvent.click(await screen.findByTestId('notify-server-accept'));
    await screen.findByText(/did not confirm it is you/);
    expect(screen.getByTestId('notify-server-change')).toBeTruthy();
  });

  it('refuses settings without the server’s trust', async () => {
    const { parseView } = await import('../lib/backend');
    const { desktopSettingsFixture } = await import('../test/fakeDesktop');
    const bad = { ...desktopSettingsFixture(), notificationServer: { current: 'x', name: ':1.1', why: '' } };
    expect(() => parseView('DesktopSettings', bad)).toThrow();
  });
});

describe('confirming it is the person', () => {
  it('shows when Yett asks the system to confirm, why, and changes it (sealed in the vault)', async () => {
    const { desktop } = await openApp([], {
      verification: {
        mode: 'every',
        why: 'On an X11 desktop any program you run, an agent among them, can send clicks and keys to Yett’s window.',
        available: true,
        problem: '',
        editable: true,
      },
    });
    await userEvent.click(screen.getByTestId('nav-settings'));
    const modes = await screen.findAllByTestId('verification-mode');
    expect((modes.find((m) => (m as HTMLInputElement).value === 'every') as HTMLInputElement).checked).toBe(true);
    expect(screen.getByTestId('verification-why').textContent).toContain('X11');
    await userEvent.click(modes.find((m) => (m as HTMLInputElement).value === 'never')!);
    expect(desktop.DesktopService.SetVerification).toHaveBeenCalledWith('never');
  });

  it('says plainly when the system cannot confirm here, and that it cannot be changed while locked', async () => {
    await openApp([], {
      verification: { mode: 'every', why: 'x', available: false, problem: 'polkit is not running.', editable: false },
    });
    await userEvent.click(screen.getByTestId('nav-settings'));
    expect((await screen.findByTestId('verification-problem')).textContent).toContain('polkit is not running');
    expect((screen.getByTestId('verification') as HTMLFieldSetElement).disabled).toBe(true);
  });
});
