import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import LiveSessions from './LiveSessions.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';
import { agentView, installApprovals, liveSession } from '../test/fakeApprovals';

function setup(sessions = [liveSession(), liveSession({ id: 'ap-2', agent: agentView({ executable: 'cursor', pid: 777 }) })]) {
  installBridge(vaultStatus({ state: 'unlocked' }));
  const approvals = installApprovals({ sessions });
  render(LiveSessions);
  return approvals;
}

describe('live sessions', () => {
  it('lists who holds a session, and says so when nobody does', async () => {
    setup();
    const rows = await screen.findAllByTestId('live-session');
    expect(rows).toHaveLength(2);
    expect(within(rows[1]).getByTestId('agent-executable').textContent).toBe('cursor');
    expect(within(rows[0]).getByTestId('agent-signer').textContent?.trim()).toBe('unsigned');
    expect(rows[0].textContent).toContain('approved Nov 29, 2026');
    expect(rows[0].textContent).toContain('· in the app');
  });

  it('says so when no agent has a session', async () => {
    setup([]);
    expect((await screen.findByTestId('live-sessions-empty')).textContent).toContain('No agent has a live session');
  });

  it('asks before revoking, and can be cancelled', async () => {
    const approvals = setup();
    const [first] = await screen.findAllByTestId('live-session');
    await fireEvent.click(within(first).getByTestId('revoke'));
    expect(within(first).getByTestId('revoke-question').textContent).toContain('claude (pid 48192)');
    expect(approvals.ApprovalService.Revoke).not.toHaveBeenCalled();
    await fireEvent.click(within(first).getByText('Keep it'));
    expect(within(first).queryByTestId('revoke-question')).toBeNull();
    expect(approvals.ApprovalService.Revoke).not.toHaveBeenCalled();
  });

  it('revokes after confirmation; the row leaves when the backend ends the session', async () => {
    const approvals = setup();
    const [first] = await screen.findAllByTestId('live-session');
    await fireEvent.click(within(first).getByTestId('revoke'));
    await fireEvent.click(within(first).getByTestId('revoke-confirm'));
    expect(approvals.ApprovalService.Revoke).toHaveBeenCalledWith('ap-1');
    await waitFor(() => expect(screen.getAllByTestId('live-session')).toHaveLength(1));
    expect(screen.getByTestId('live-session').dataset.sessionId).toBe('ap-2');
  });

  it('shows why a revoke failed', async () => {
    const approvals = setup();
    approvals.ApprovalService.Revoke.mockRejectedValueOnce('This session has already ended.');
    const [first] = await screen.findAllByTestId('live-session');
    await fireEvent.click(within(first).getByTestId('revoke'));
    await fireEvent.click(within(first).getByTestId('revoke-confirm'));
    expect((await screen.findByTestId('revoke-error')).textContent).toBe('This session has already ended.');
  });

  // Issue 15, broken text: the parts of "started by" once read "this agent , started".
  it('says who started yett mcp in one line, with no space before the comma', async () => {
    setup([liveSession()]);
    const [row] = await screen.findAllByTestId('live-session');
    const starter = within(row).getByTestId('agent-shim-parent');
    const line = starter.textContent!.replace(within(row).getByTestId('agent-shim-parent-cmdline').textContent!, '').trim();
    expect(line).toMatch(/^claude \(pid 48192\) · this agent, started \S/);
    expect(line).not.toMatch(/\s,|\s{2}/);
  });
});
