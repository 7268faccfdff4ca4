import { afterEach, describe, expect, it } from 'vitest';
// The filter reaches the database after a pause in typing; polls wait
// longer than that pause on a loaded machine.
const PATIENT = { timeout: 5000 };
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';
import { installInventory, inventoryRow } from '../test/fakeInventory';
import { installTeam, teamCheckpoint, teamRequest, teamRow, teamStatusView } from '../test/fakeTeam';

type Initial = Parameters<typeof installTeam>[0];

async function openTeam(initial: Initial = {}) {
  installBridge(vaultStatus({ state: 'unlocked', epoch: 3 }));
  installInventory();
  const team = installTeam(initial);
  render(App);
  await fireEvent.click(await screen.findByTestId('nav-team'));
  await screen.findByTestId('view-team');
  await screen.findByTestId('team-status');
  return team;
}

const rows = () => [
  teamRow(),
  teamRow({
    machine: 'm-noa', hostname: 'noa-laptop', member: 'noa',
    row: inventoryRow({ id: 'cr-2', kind: 'http_credential', name: 'status page', owner: '', backupRevoker: '', controlled: false, missing: ['owner', 'backup revoker'] }),
  }),
  teamRow({ row: inventoryRow({ id: 'az-3', name: 'mail', owner: 'mia', backupRevoker: 'bob', reviewDue: true, drillOverdue: true }) }),
];

function rowNames(): string[] {
  return screen.getAllByTestId('team-row').map((r) => within(r).getByTestId('team-cell-name').querySelector('strong')?.textContent ?? '');
}

afterEach(() => {
  cleanup();
  delete window.go;
  delete window.runtime;
  localStorage.clear();
});

describe('Team', () => {
  it('is not in the sidebar of a machine in no team', async () => {
    installBridge(vaultStatus({ state: 'unlocked', epoch: 3 }));
    installTeam({ status: teamStatusView({ inTeam: false, teamName: '', role: '' }) });
    render(App);
    await screen.findByTestId('nav-inventory');
    await waitFor(() => expect(window.go!.app!.TeamService!.Status).toHaveBeenCalled());
    expect(screen.queryByTestId('nav-team')).toBeNull();
  });

  it('comes into the sidebar when this machine joins a team, and its status line follows the syncer', async () => {
    installBridge(vaultStatus({ state: 'unlocked', epoch: 3 }));
    installInventory();
    const team = installTeam({ status: teamStatusView({ inTeam: false, teamName: '', role: '' }) });
    render(App);
    await waitFor(() => expect(team.TeamService.Status).toHaveBeenCalled());
    expect(screen.queryByTestId('nav-team')).toBeNull();

    team.state.status = teamStatusView({ role: 'member', machine: 'mia-desktop', member: 'mia', waiting: 0 });
    team.changed();
    await fireEvent.click(await screen.findByTestId('nav-team'));
    expect((await screen.findByTestId('team-status')).textContent).not.toContain('wait');
    team.state.status = { ...team.state.status, waiting: 4, connected: false, problem: 'The team database cannot be reached; what this machine shares waits.' };
    team.changed();
    await waitFor(() => expect(screen.getByTestId('team-status').textContent).toContain('4 records wait to be sent'));
    expect(screen.getByTestId('team-problem').textContent).toContain('waits');
  });

  it('comes last in the sidebar, so joining a team moves no view\'s Ctrl+number', async () => {
    await openTeam({ status: teamStatusView({ role: 'member', machine: 'mia-desktop', member: 'mia' }) });
    const nav = screen.getAllByRole('link').concat(screen.queryAllByRole('button')).filter((e) => e.dataset.testid?.startsWith('nav-'));
    expect(nav.map((e) => e.dataset.testid).at(-1)).toBe('nav-team');
    await userEvent.keyboard('{Control>}7{/Control}');
    await screen.findByTestId('view-sessions');
  });

  it('shows a member only its status, and asks the database for nothing more', async () => {
    const team = await openTeam({ status: teamStatusView({ role: 'member', machine: 'mia-desktop', member: 'mia', waiting: 3 }) });
    const status = screen.getByTestId('team-status').textContent ?? '';
    expect(status).toContain('platform');
    expect(status).toContain('a member');
    expect(status).toContain('3 records wait to be sent');
    expect(screen.getByTestId('team-member-note')).toBeTruthy();
    expect(screen.queryByTestId('team-machines')).toBeNull();
    expect(screen.queryByTestId('team-rows')).toBeNull();
    expect(team.TeamService.Machines).not.toHaveBeenCalled();
    expect(team.TeamService.Rows).not.toHaveBeenCalled();
  });

  it('shows a lead the machines, every row, the checkpoints and the requests', async () => {
    await openTeam({ rows: rows().slice(0, 2), requests: [teamRequest()] });
    expect(screen.getByTestId('team-status').textContent).toContain('a lead');
    await screen.findByTestId('team-rows');
    expect(within(screen.getByTestId('team-machines')).getByText('mia-desktop')).toBeTruthy();
    expect(rowNames()).toEqual(['tracker', 'status page']);
    // A pending request names where it waits, since when, and who else can revoke.
    const outcome = screen.getByTestId('team-request-outcome').textContent ?? '';
    expect(outcome).toContain('pending at mia-desktop since');
    expect(outcome).toContain('backup revoker: bob');
    expect(screen.getByTestId('team-checkpoint-words').textContent).toContain('is witnessed by witness.example');
  });

  it('sends the Inventory filter to the service and pages on', async () => {
    const team = await openTeam({ rows: rows() });
    await screen.findByTestId('team-rows');
    expect(rowNames()).toEqual(['tracker', 'status page']);
    await fireEvent.click(screen.getByTestId('team-more'));
    await waitFor(() => expect(rowNames()).toEqual(['tracker', 'status page', 'mail']));
    expect(team.TeamService.Rows).toHaveBeenLastCalledWith({ text: '', state: '', machine: '' }, '2');

    await fireEvent.change(screen.getByTestId('team-state-filter'), { target: { value: 'not_under_control' } });
    await waitFor(() => expect(rowNames()).toEqual(['status page']), PATIENT);
    expect(team.TeamService.Rows).toHaveBeenLastCalledWith({ text: '', state: 'not_under_control', machine: '' }, '');

    await fireEvent.change(screen.getByTestId('team-state-filter'), { target: { value: 'review_due' } });
    await fireEvent.input(screen.getByTestId('team-filter'), { target: { value: 'mail' } });
    await waitFor(() => expect(team.TeamService.Rows).toHaveBeenLastCalledWith({ text: 'mail', state: 'review_due', machine: '' }, ''), PATIENT);
    await waitFor(() => expect(rowNames()).toEqual(['mail']), PATIENT);
    const mail = screen.getAllByTestId('team-row')[0];
    expect(within(mail).getByText('review due')).toBeTruthy();
    expect(within(mail).getByText('overdue')).toBeTruthy();

    await fireEvent.change(screen.getByTestId('team-machine-filter'), { target: { value: 'm-mia' } });
    await waitFor(() => expect(team.TeamService.Rows).toHaveBeenLastCalledWith({ text: 'mail', state: 'review_due', machine: 'm-mia' }, ''), PATIENT);

    await fireEvent.input(screen.getByTestId('team-filter'), { target: { value: 'nothing like it' } });
    await screen.findByTestId('team-no-rows', {}, PATIENT);
  });

  it('chooses columns with the Inventory chooser', async () => {
    await openTeam();
    await screen.findByTestId('team-rows');
    expect(screen.queryAllByTestId('team-cell-provider')).toHaveLength(0);
    await fireEvent.click(screen.getByTestId('team-column-provider'));
    expect(screen.getAllByTestId('team-cell-provider')[0].textContent).toContain('github.com');
    await fireEvent.click(screen.getByTestId('team-columns-default'));
    expect(screen.queryAllByTestId('team-cell-provider')).toHaveLength(0);
  });

  it('says a refused checkpoint and one not yet witnessed in words, not only in colour', async () => {
    await openTeam({
      checkpoints: [
        teamCheckpoint(),
        teamCheckpoint({
          machine: 'm-noa', hostname: 'noa-laptop', size: 12, cosignedSize: 140, witnessed: false, refused: true, refusal: 'rollback',
          refusedAt: '2026-12-07T05:10:00Z',
          words: "Refused by witness.example: noa-laptop's log was cut back (a checkpoint at 12 records, where the witness had cosigned 140).",
        }),
        teamCheckpoint({ machine: 'm-ida', hostname: 'ida-laptop', size: 60, cosignedSize: 50, witnessed: false, words: 'Not yet witnessed at 60 records: the witness cosigned up to 50.' }),
      ],
    });
    const items = await screen.findAllByTestId('team-checkpoint');
    expect(items[0].textContent).not.toMatch(/refused|not witnessed/);
    expect(items[0].textContent).toContain('is witnessed by witness.example');
    expect(items[1].textContent).toContain('refused by the witness');
    expect(items[1].textContent).toContain('log was cut back');
    expect(items[2].textContent).toContain('not witnessed');
    expect(items[2].textContent).not.toContain('refused');
  });

  it('asks for a revocation only after the confirm step, with the reason', async () => {
    const team = await openTeam();
    await screen.findByTestId('team-rows');
    await fireEvent.click(screen.getByTestId('team-request'));
    const confirm = screen.getByTestId('team-request-confirm');
    expect(confirm.textContent).toContain('mia-desktop');
    expect(confirm.textContent).toContain('bob');
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('team-request-reason')));
    await fireEvent.keyDown(screen.getByTestId('team-request-reason'), { key: 'Escape' });
    expect(screen.queryByTestId('team-request-confirm')).toBeNull();
    expect(document.activeElement).toBe(screen.getByTestId('team-request'));
    expect(team.TeamService.RequestRevocation).not.toHaveBeenCalled();

    await fireEvent.click(screen.getByTestId('team-request'));
    await fireEvent.input(screen.getByTestId('team-request-reason'), { target: { value: 'mia left the project' } });
    await fireEvent.click(screen.getByTestId('team-request-confirm-button'));
    await screen.findByTestId('team-asked');
    expect(team.TeamService.RequestRevocation).toHaveBeenCalledWith('m-mia', 'az-1', 'mia left the project');
    expect(screen.getByTestId('team-asked').textContent).toContain('pending at mia-desktop since');
    await waitFor(() => expect(screen.getByTestId('team-request-outcome').textContent).toContain('backup revoker: bob'));

    // The machine answers; the lead reads the team again and sees how.
    team.state.requests[0] = { ...team.state.requests[0], status: 'done', waiting: '', verified: true, outcome: 'tracker is disabled on mia-desktop, revoked at the provider.' };
    await fireEvent.click(screen.getByTestId('team-reload'));
    await waitFor(() => expect(screen.getByTestId('team-request-outcome').textContent).toBe('tracker is disabled on mia-desktop, revoked at the provider.'));
  });

  it('shows why a request was refused by the service', async () => {
    const team = await openTeam();
    await screen.findByTestId('team-rows');
    team.TeamService.RequestRevocation.mockRejectedValueOnce('A reason is at most 500 characters.');
    await fireEvent.click(screen.getByTestId('team-request'));
    await fireEvent.click(screen.getByTestId('team-request-confirm-button'));
    expect((await screen.findByTestId('team-request-error')).textContent).toBe('A reason is at most 500 characters.');
    expect(screen.getByTestId('team-request-confirm')).toBeTruthy();
  });

  it('exports the filtered rows as CSV and JSON', async () => {
    const team = await openTeam({ rows: rows() });
    await screen.findByTestId('team-rows');
    await fireEvent.change(screen.getByTestId('team-state-filter'), { target: { value: 'drill_overdue' } });
    await fireEvent.click(screen.getByTestId('team-export-csv'));
    await screen.findByTestId('team-exported');
    expect(team.TeamService.Export).toHaveBeenLastCalledWith('csv', { text: '', state: 'drill_overdue', machine: '' });
    expect(screen.getByTestId('team-exported').textContent).toContain('/home/lea/yett-team-inventory.csv');
    await fireEvent.click(screen.getByTestId('team-export-json'));
    await waitFor(() => expect(screen.getByTestId('team-exported').textContent).toContain('yett-team-inventory.json'));
  });

  it('shows the database error and no rows when it cannot be reached', async () => {
    const msg = 'The team database cannot be reached (no connection to the server); showing nothing rather than something stale.';
    const team = await openTeam({ failure: msg });
    expect((await screen.findByTestId('team-error')).textContent).toContain(msg);
    expect(screen.queryByTestId('team-row')).toBeNull();
    expect(screen.getAllByRole('alert')).toHaveLength(1);
    expect(screen.getByTestId('team-status').textContent).toContain('platform');
    // Nothing claims there are no requests or checkpoints: nothing was read.
    expect(screen.queryByTestId('team-no-requests')).toBeNull();
    expect(screen.queryByTestId('team-no-checkpoints')).toBeNull();
    team.state.failure = '';
    await fireEvent.click(screen.getByTestId('team-retry'));
    await screen.findByTestId('team-rows');
    expect(screen.queryByTestId('team-error')).toBeNull();
  });
});
