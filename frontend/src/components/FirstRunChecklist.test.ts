// The Connect page's first-run checklist (issue 25): each step ticks only
// when the backend says it happened, live, and once the first call went
// through the page says it worked, with what, and what to do next, and
// never goes back to waiting for an agent.
import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import App from '../App.svelte';
import { credentialView, installBridge, vaultStatus } from '../test/fakeBridge';
import { agentView, approvalCard, installApprovals, liveSession } from '../test/fakeApprovals';
import { agentCall, installLastCall } from '../test/fakeAgentCall';
import type { AgentCall } from '../lib/backend';

const text = (id: string) => screen.getByTestId(id).textContent!.replace(/\s+/g, ' ').trim();
const done = (id: string) => screen.getByTestId(id).dataset.done;

async function openConnect(credentials = 0, call?: AgentCall) {
  const bridge = installBridge(vaultStatus({ state: 'unlocked' }));
  for (let i = 0; i < credentials; i++) bridge.credentials.push(credentialView({ id: `cred-${i}`, name: i === 0 ? 'receiver' : `key-${i}` }));
  // No client has called through Yett in these tests unless one says so.
  bridge.ConnectService.AgentClients.mockImplementation(async () =>
    ['claude', 'codex', 'cursor', 'vscode'].map((id) => ({
      id, name: id, path: `~/${id}`, state: 'absent', problem: '', lastCall: '', lastProgram: '', lastPid: 0,
    })),
  );
  const approvals = installApprovals();
  const audit = call === undefined ? installLastCall() : installLastCall(call);
  render(App);
  await fireEvent.click(await screen.findByTestId('nav-connect'));
  await screen.findByTestId('firstrun');
  return { bridge, approvals, audit };
}

describe('first-run checklist', () => {
  it('ticks the vault at once and nothing the backend has not reported', async () => {
    await openConnect();
    await waitFor(() => expect(done('firstrun-vault')).toBe('true'));
    expect(text('firstrun-vault')).toContain('Done:');
    for (const id of ['firstrun-credential', 'firstrun-agent', 'firstrun-call']) {
      expect(done(id)).toBe('false');
      expect(text(id)).toContain('not yet;');
    }
    expect(screen.queryByTestId('firstrun-worked')).toBeNull();
    expect(screen.getByTestId('connect-live-waiting')).toBeTruthy();
  });

  it('ticks each step live as the backend reports it, then says it worked, with what, and what to do next', async () => {
    const { approvals, audit } = await openConnect(1);
    await waitFor(() => expect(done('firstrun-credential')).toBe('true'));
    expect(text('firstrun-credential')).toContain('“receiver” is ready');
    const agent = agentView({ executable: 'claude', pid: 4242 });
    approvals.set({ cards: [approvalCard({ agent, target: '127.0.0.1:4545', credential: 'receiver' })] });
    await waitFor(() => expect(done('firstrun-agent')).toBe('true'));
    expect(text('firstrun-agent')).toContain('claude (process 4242) is asking');
    expect(done('firstrun-call')).toBe('false');
    approvals.set({ cards: [], sessions: [liveSession({ agent })] });
    await waitFor(() => expect(text('firstrun-agent')).toContain('claude (process 4242) is approved for this run'));
    audit.complete(agentCall({ target: '127.0.0.1:4545', path: '/profile', status: 200, credential: 'receiver' }));
    await waitFor(() => expect(done('firstrun-call')).toBe('true'));
    expect(text('firstrun-call')).toContain('GET 127.0.0.1:4545/profile answered 200 with “receiver”');
    const worked = screen.getByTestId('firstrun-worked');
    expect(worked.textContent!.replace(/\s+/g, ' ')).toContain('It worked.');
    expect(worked.textContent!.replace(/\s+/g, ' ')).toContain('claude (process 4242) called GET 127.0.0.1:4545/profile through Yett and got 200');
    // Announced politely, from a region that was there before it filled.
    expect(screen.getByTestId('firstrun-outcome').getAttribute('role')).toBe('status');
    const next = within(screen.getByTestId('firstrun-next'));
    expect(next.getByTestId('firstrun-next-approval').textContent).toContain('“receiver”');
    expect(next.getByTestId('firstrun-next-activity')).toBeTruthy();
    expect(next.getByTestId('firstrun-next-agent')).toBeTruthy();
  });

  it('never goes back to waiting once a call went through: the agent exited, or Yett restarted', async () => {
    const { approvals, audit } = await openConnect(1);
    approvals.set({ sessions: [liveSession()] });
    audit.complete(agentCall());
    await screen.findByTestId('firstrun-worked');
    approvals.set({ sessions: [] });
    await screen.findByTestId('connect-live-done');
    expect(screen.queryByTestId('connect-live-waiting')).toBeNull();
    expect(text('connect-live-done')).toContain('GET api.example.com/profile');
    // As after a restart: no live session, the log's call only.
    expect(done('firstrun-agent')).toBe('true');
    expect(text('firstrun-agent')).toContain('claude (process 4242) called through Yett');
  });

  it('says plainly when the service refused the call, and does not say it worked', async () => {
    await openConnect(1, agentCall({ status: 401, class: 'client_error' }));
    await waitFor(() => expect(done('firstrun-call')).toBe('true'));
    expect(text('firstrun-call')).toContain('GET api.example.com/profile answered 401 with “receiver”');
    const outcome = text('firstrun-outcome');
    expect(outcome).not.toContain('It worked');
    expect(outcome).toContain('the service refused it (401)');
    expect(outcome).toContain('check the secret of “receiver”');
  });

  it('names a credential removed since as such', async () => {
    await openConnect(0, agentCall({ credential: '' }));
    await waitFor(() => expect(done('firstrun-call')).toBe('true'));
    expect(text('firstrun-call')).toContain('with a credential since removed');
    expect(done('firstrun-credential')).toBe('false');
  });

  it('leads to Credentials and Activity, and back to the agent tabs to connect another', async () => {
    await openConnect(1, agentCall());
    await fireEvent.click(await screen.findByTestId('firstrun-next-agent'));
    await waitFor(() => expect(document.activeElement?.getAttribute('role')).toBe('tab'));
    await fireEvent.click(screen.getByTestId('firstrun-next-activity'));
    await screen.findByTestId('view-activity');
    await fireEvent.click(screen.getByTestId('nav-connect'));
    await fireEvent.click(await screen.findByTestId('firstrun-next-approval'));
    await screen.findByTestId('view-credentials');
  });
});
