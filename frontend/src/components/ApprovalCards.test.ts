import { READ_MS } from '../lib/shortcuts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';
import { agentView, approvalCard, installApprovals, liveSession } from '../test/fakeApprovals';

async function openApp(cards = [approvalCard()]) {
  installBridge(vaultStatus({ state: 'unlocked' }));
  const approvals = installApprovals({ cards });
  render(App);
  await screen.findByTestId('shell');
  return approvals;
}

describe('approval cards', () => {
  afterEach(() => vi.useRealTimers());

  it('shows who asks, what changed and the time left, over the open view', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-29T18:00:00Z') });
    await openApp();
    await vi.advanceTimersByTimeAsync(0);
    const card = screen.getByTestId('approval-card');
    const q = within(card);
    expect(q.getByTestId('approval-headline').textContent).toBe('The agent restarted');
    // What changed comes first, then what approving does.
    expect(q.getByTestId('approval-detail').textContent).toBe(
      'An earlier run of this program (pid 4242) ended at 14:03:02 (it exited). This is a new process.',
    );
    expect(
      q.getByTestId('approval-detail').compareDocumentPosition(q.getByTestId('approval-sentence')) &
        Node.DOCUMENT_POSITION_FOLLOWING,
    ).toBeTruthy();
    // The detail says which run ended and when; the sentence says only
    // what approving does (issue 25: the card said it twice).
    expect(q.getByTestId('approval-sentence').textContent).toBe(
      'Approve this newly started process to use api.example.com during this run.',
    );
    expect(card.textContent?.match(/earlier run/gi)?.length).toBe(1);
    expect(q.getByTestId('agent-executable').textContent).toBe('claude');
    expect(q.getByTestId('agent-pid').textContent).toBe('48192');
    expect(q.getByTestId('agent-signer').textContent?.trim()).toBe('unsigned');
    expect(q.getByTestId('agent-parents').textContent).toBe('zsh (pid 48001) ← tmux (pid 1200)');
    expect(q.getByTestId('agent-hash').textContent).toContain('sha256:0123456789ab');
    expect(q.getByTestId('agent-via').textContent).toBe('/usr/bin/yett');
    expect(q.getByTestId('approval-target').textContent).toContain('api.example.com');
    expect(q.getByTestId('approval-countdown').textContent).toContain('2m 00s left');
    await vi.advanceTimersByTimeAsync(5000);
    expect(q.getByTestId('approval-countdown').textContent).toContain('1m 55s left');
    // Over whichever view is open, with a count in the sidebar.
    expect(screen.getByTestId('view-credentials')).toBeTruthy();
    expect(screen.getByTestId('approval-badge-count').textContent).toBe('1');
    expect(screen.getByTestId('approval-announce').textContent).toContain('waiting for your approval');
  });

  it('shows the nearest parents and keeps the whole chain in the tooltip', async () => {
    const parents = [1, 2, 3, 4, 5].map((n) => ({ name: `p${n}`, pid: n }));
    await openApp([approvalCard({ agent: agentView({ parents }) })]);
    const chain = await screen.findByTestId('agent-parents');
    expect(chain.textContent).toBe('p1 (pid 1) ← p2 (pid 2) ← p3 (pid 3) ← …');
    expect(chain.title).toBe('p1 (pid 1) ← p2 (pid 2) ← p3 (pid 3) ← p4 (pid 4) ← p5 (pid 5)');
  });

  it('shows the yett mcp that connected, who started it and who holds its input and output', async () => {
    await openApp();
    const card = await screen.findByTestId('approval-card');
    const q = within(card);
    expect(q.getByTestId('agent-shim').textContent).toContain('pid 48230');
    expect(q.getByTestId('agent-shim-parent-name').textContent).toBe('claude (pid 48192)');
    expect(q.getByTestId('agent-shim-parent').textContent).toContain('this agent');
    expect(q.getByTestId('agent-shim-parent-cmdline').textContent).toBe('claude --resume');
    const stdio = q.getByTestId('agent-stdio');
    expect(stdio.textContent?.trim()).toBe('This process started yett mcp and holds its input and output.');
    expect(stdio.classList.contains('ok')).toBe(true);
  });

  // Issue 9, item 6: a command the agent ran execs the genuine yett mcp on
  // pipes its own driver holds. The card names the driver, shows the agent
  // only as the process that started yett mcp, and warns.
  it('warns when the process that asks did not start yett mcp', async () => {
    const driver = agentView({
      name: 'python3',
      executable: 'python3',
      pid: 51000,
      parents: [
        { name: 'yett', pid: 50990 },
        { name: 'claude', pid: 48192 },
      ],
      shimPid: 50990,
      shimParent: { name: 'claude', pid: 48192, startedAt: '2026-11-29T18:00:00Z', cmdline: 'claude --resume' },
      stdio: 'held-not-parent',
      stdioText:
        'yett mcp was started by claude (pid 48192), but this process holds its input and output: this process asks, not the one that started yett mcp.',
      stdioOk: false,
    });
    await openApp([approvalCard({ agent: driver })]);
    const card = await screen.findByTestId('approval-card');
    const q = within(card);
    expect(q.getByTestId('agent-executable').textContent).toBe('python3');
    expect(q.getByTestId('agent-shim-parent-name').textContent).toBe('claude (pid 48192)');
    expect(q.getByTestId('agent-shim-parent').textContent).not.toContain('this agent');
    const stdio = q.getByTestId('agent-stdio');
    expect(stdio.textContent).toContain('this process asks, not the one that started yett mcp');
    expect(stdio.classList.contains('warn')).toBe(true);
    expect(stdio.classList.contains('ok')).toBe(false);
  });

  it('says plainly when the stdio check is not made on this OS', async () => {
    await openApp([
      approvalCard({
        agent: agentView({
          stdio: 'not-checked',
          stdioText: "Who holds yett mcp's input and output is not checked on this OS.",
          stdioOk: false,
        }),
      }),
    ]);
    const stdio = await screen.findByTestId('agent-stdio');
    expect(stdio.textContent).toContain('not checked on this OS');
    expect(stdio.classList.contains('warn')).toBe(true);
  });

  it('names the signer of a signed agent', async () => {
    await openApp([approvalCard({ agent: agentView({ signer: 'Developer ID Application: Example (AB12)', signed: true }) })]);
    const signer = await screen.findByTestId('agent-signer');
    expect(signer.textContent?.trim()).toBe('Developer ID Application: Example (AB12)');
    expect(signer.classList.contains('ok')).toBe(true);
  });

  it('never answers by itself and does not take focus', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-29T18:00:00Z') });
    const approvals = await openApp();
    await vi.advanceTimersByTimeAsync(130_000);
    expect(approvals.ApprovalService.Answer).not.toHaveBeenCalled();
    expect(screen.getByTestId('approval-card').contains(document.activeElement)).toBe(false);
    // The backend, not the page, decides the card timed out.
    expect(screen.getByTestId('approval-countdown').textContent).toContain('0s left');
  });

  it('approves through the backend, and the card leaves when the backend drops it', async () => {
    const approvals = await openApp();
    await fireEvent.click(await screen.findByTestId('approval-approve'));
    expect(approvals.ApprovalService.Answer).toHaveBeenCalledWith('rq-1', true);
    await waitFor(() => expect(screen.queryByTestId('approval-card')).toBeNull());
    expect(screen.queryByTestId('approval-badge')).toBeNull();
  });

  it('denies through the backend just as directly', async () => {
    const approvals = await openApp();
    await fireEvent.click(await screen.findByTestId('approval-deny'));
    expect(approvals.ApprovalService.Answer).toHaveBeenCalledWith('rq-1', false);
    await waitFor(() => expect(screen.queryByTestId('approval-card')).toBeNull());
  });

  it('drops a card the backend withdrew (agent exited, vault locked, timeout)', async () => {
    const approvals = await openApp([approvalCard(), approvalCard({ id: 'rq-2', headline: 'New agent' })]);
    await waitFor(() => expect(screen.getAllByTestId('approval-card')).toHaveLength(2));
    expect(screen.getByTestId('approval-badge-count').textContent).toBe('2');
    approvals.set({ cards: [approvals.state.cards[1]] });
    await waitFor(() => expect(screen.getAllByTestId('approval-card')).toHaveLength(1));
    expect(screen.getByTestId('approval-card').dataset.approvalId).toBe('rq-2');
    approvals.set({ cards: [] });
    await waitFor(() => expect(screen.queryByTestId('approval-card')).toBeNull());
    expect(approvals.ApprovalService.Answer).not.toHaveBeenCalled();
  });

  it('says why an answer failed and lets the person try again', async () => {
    const approvals = await openApp();
    approvals.ApprovalService.Answer.mockRejectedValueOnce(
      'This request was withdrawn: the agent exited, or the vault was locked or unlocked. Nothing was approved.',
    );
    await fireEvent.click(await screen.findByTestId('approval-approve'));
    expect((await screen.findByTestId('approval-error')).textContent).toContain('Nothing was approved');
    expect((screen.getByTestId('approval-deny') as HTMLButtonElement).disabled).toBe(false);
  });

  it('says when the agent stopped waiting, and that the answer applies if it sends the call again', async () => {
    await openApp([approvalCard({ kind: 'call', agentStoppedWaiting: true })]);
    expect((await screen.findByTestId('approval-agent-left')).textContent).toContain('if it sends this call again, your answer applies');
    expect((screen.getByTestId('approval-approve') as HTMLButtonElement).disabled).toBe(false);
  });

  it('says nothing of the kind while the agent waits', async () => {
    await openApp([approvalCard({ kind: 'call' })]);
    await screen.findByTestId('approval-card');
    expect(screen.queryByTestId('approval-agent-left')).toBeNull();
  });

  it('says when approving asks the system to confirm it is the person, and keeps Deny open while it asks', async () => {
    let release: () => void = () => {};
    const approvals = await openApp([approvalCard({ verifies: true })]);
    expect((await screen.findByTestId('approval-verifies')).textContent).toContain('asks your system to confirm');
    approvals.ApprovalService.Answer.mockImplementationOnce(() => new Promise<void>((r) => (release = () => r())));
    await fireEvent.click(screen.getByTestId('approval-approve'));
    expect((await screen.findByTestId('approval-verifying')).textContent).toContain("Confirm it is you in your system's prompt");
    expect((screen.getByTestId('approval-approve') as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByTestId('approval-deny') as HTMLButtonElement).disabled).toBe(false);
    release();
    await waitFor(() => expect(screen.queryByTestId('approval-verifying')).toBeNull());
  });

  it('shows a per-call card with the method, path and credential name', async () => {
    const approvals = await openApp([
      approvalCard({
        kind: 'call', change: '', headline: 'Approve this call?', method: 'DELETE', path: '/v1/repos/x',
        credential: 'deploy-key',
        sentence: 'claude wants to send DELETE /v1/repos/x to api.example.com with the credential “deploy-key”, which needs your approval for every call.',
      }),
    ]);
    const card = await screen.findByTestId('approval-card');
    expect(card.dataset.kind).toBe('call');
    expect(within(card).getByTestId('approval-target').textContent).toMatch(/DELETE \/v1\/repos\/x\s+on\s+api\.example\.com\s+with\s+“deploy-key”/);
    const approve = within(card).getByTestId('approval-approve');
    expect(approve.textContent?.replace(/\s+/g, ' ').trim()).toBe('Approve this call A');
    await fireEvent.click(approve);
    expect(approvals.ApprovalService.Answer).toHaveBeenCalledWith('rq-1', true);
  });

  it('offers calls like this one for 10 minutes, says exactly which, and lists the grant with Revoke in Sessions', async () => {
    installBridge(vaultStatus({ state: 'unlocked' }));
    const session = liveSession({ id: 'ap-7' });
    const approvals = installApprovals({
      sessions: [session],
      cards: [
        approvalCard({
          kind: 'call', change: '', headline: 'Approve this call?', method: 'POST', path: '/repos/a/issues', credential: 'gh',
          grantWords: 'POST requests to api.example.com/repos/a/…', grantMinutes: 10,
        }),
      ],
    });
    render(App);
    const card = await screen.findByTestId('approval-card');
    expect(within(card).getByTestId('approval-grant').textContent?.trim()).toBe('Approve calls like this for 10 minutes');
    expect(within(card).getByTestId('approval-grant-words').textContent!.replace(/\s+/g, ' ')).toContain(
      'Also lets POST requests to api.example.com/repos/a/… with “gh” from this run (pid 48192) go without a card for 10 minutes',
    );
    await fireEvent.click(within(card).getByTestId('approval-grant'));
    expect(approvals.ApprovalService.AnswerGrant).toHaveBeenCalledWith('rq-1');
    expect(approvals.ApprovalService.Answer).not.toHaveBeenCalled();
    await waitFor(() => expect(screen.queryByTestId('approval-card')).toBeNull());
    await fireEvent.click(screen.getByTestId('nav-sessions'));
    const grant = await screen.findByTestId('live-grant');
    expect(grant.textContent!.replace(/\s+/g, ' ')).toContain('POST requests to api.example.com/repos/a/… with “gh”. Used 0 times.');
    await fireEvent.click(within(grant).getByTestId('revoke-grant'));
    expect(approvals.ApprovalService.RevokeGrant).toHaveBeenCalledWith('gr-rq-1');
    await waitFor(() => expect(screen.queryByTestId('live-grant')).toBeNull());
    expect(screen.getByTestId('live-session')).toBeTruthy();
  });

  it('answers the cards of runs of one program waiting together in one action, and no others', async () => {
    const runs = [4101, 4102, 4103].map((pid, i) =>
      approvalCard({ id: `rq-${pid}`, program: 'prog-node', agent: agentView({ pid }), headline: `run ${i}` }),
    );
    const approvals = await openApp([...runs, approvalCard({ id: 'rq-other', program: 'prog-other', agent: agentView({ pid: 5000 }) })]);
    const batch = await screen.findByTestId('approval-batch');
    expect(screen.getAllByTestId('approval-batch')).toHaveLength(1);
    expect(batch.textContent!.replace(/\s+/g, ' ')).toContain('3 runs of claude (pids 4101, 4102, 4103) ask for HTTP to api.example.com');
    await fireEvent.click(within(batch).getByTestId('approval-batch-approve'));
    expect(approvals.ApprovalService.AnswerRuns).toHaveBeenCalledWith(['rq-4101', 'rq-4102', 'rq-4103'], true);
    await waitFor(() => expect(screen.getAllByTestId('approval-card')).toHaveLength(1));
    expect(screen.queryByTestId('approval-batch')).toBeNull();
    expect(screen.getByTestId('approval-card').dataset.approvalId).toBe('rq-other');
  });

  it("shows an agent's request for access with its reason as text, leads to where it is added, and answers it", async () => {
    const approvals = await openApp([
      approvalCard({
        kind: 'access', change: '', headline: 'An agent asks for access', channel: 'http', target: 'api.github.com',
        wants: 'a credential for api.github.com', reason: '<img src=x onerror=alert(1)> to open the release PR',
        scope: 'nothing by itself: the agent is told your answer',
      }),
    ]);
    const card = await screen.findByTestId('approval-card');
    expect(within(card).getByTestId('approval-access').textContent).toContain('Asks for a credential for api.github.com');
    expect(within(card).getByTestId('approval-reason').textContent).toBe('<img src=x onerror=alert(1)> to open the release PR');
    expect(card.querySelector('img')).toBeNull();
    expect(within(card).getByTestId('approval-deny').textContent).toContain('Refuse');
    expect(within(card).getByTestId('approval-approve').textContent).toContain('It is set up: tell the agent');
    await fireEvent.click(within(card).getByTestId('approval-access-add'));
    await screen.findByTestId('view-credentials');
    // The cards fold into the sidebar's badge so the view has the window.
    expect(screen.queryByTestId('approval-card')).toBeNull();
    await fireEvent.click(screen.getByTestId('approval-badge'));
    await fireEvent.click(within(await screen.findByTestId('approval-card')).getByTestId('approval-approve'));
    expect(approvals.ApprovalService.Answer).toHaveBeenCalledWith('rq-1', true);
  });

  it('offers no grant on a card that cannot give one', async () => {
    await openApp([approvalCard({ kind: 'call', method: 'POST', path: '/x' })]);
    await screen.findByTestId('approval-card');
    expect(screen.queryByTestId('approval-grant')).toBeNull();
  });

  // Issue 20: the operation editor promises "Agents and approval cards show
  // this sentence"; the session card said only "OAUTH to host".
  it('names the operation, what it does and the account, on the session card and on a per-call card', async () => {
    await openApp([
      approvalCard({
        id: 'rq-s', channel: 'oauth', target: 'api.tracker.example', credential: 'tracker (alice@example.com, production)',
        operation: 'tracker.create_issue', description: 'Create an issue in project A',
      }),
      approvalCard({
        id: 'rq-c', kind: 'call', change: '', channel: 'oauth', method: 'POST', target: 'api.tracker.example', path: '/projects/A/issues',
        credential: 'tracker (alice@example.com, production)', operation: 'tracker.create_issue', description: 'Create an issue in project A',
      }),
    ]);
    const [session, call] = await screen.findAllByTestId('approval-card');
    for (const card of [session, call]) {
      expect(within(card).getByTestId('approval-operation').textContent).toContain('tracker.create_issue: Create an issue in project A');
      expect(within(card).getByTestId('approval-target').textContent).toContain('through “tracker (alice@example.com, production)”');
      expect(within(card).getByTestId('approval-target').textContent).not.toContain('OAUTH');
    }
    expect(within(call).getByTestId('approval-target').textContent).toMatch(/POST \/projects\/A\/issues\s+on\s+api\.tracker\.example/);
    expect(within(session).getByTestId('approval-target').textContent).toContain('until this process exits');
  });

  it('shows an SSH command card with the exact command, its input and the host, as text', async () => {
    const command = 'systemctl restart nginx && echo "<b>done</b>"';
    await openApp([
      approvalCard({
        kind: 'call', change: '', headline: 'Approve this call?', channel: 'ssh', method: 'exec', target: 'deploy@web-1.internal:2222',
        credential: 'web-1', command, stdin: 'line one\n', stdinBytes: 4096,
        sentence: 'claude wants to run a command on the SSH host “web-1” (deploy@web-1.internal:2222), which needs your approval for every command. Read the command below: it runs exactly as shown.',
      }),
    ]);
    const card = await screen.findByTestId('approval-card');
    const shown = within(card).getByTestId('approval-command');
    expect(shown.querySelector('pre')?.textContent).toBe(command);
    expect(shown.querySelector('b')).toBeNull();
    expect(shown.textContent).toContain('as deploy@web-1.internal:2222 (“web-1”):');
    expect(within(card).getByTestId('approval-stdin').textContent).toBe('line one\n');
    expect(shown.textContent).toContain('4096 bytes on its input, starting with');
    expect(within(card).getByTestId('approval-target').textContent).toMatch(/SSH\s+on\s+deploy@web-1\.internal:2222\s+with\s+“web-1”/);
  });

  it('shows an upstream MCP tool call card with the tool, the server and its arguments, as text', async () => {
    const args = '{\n  "title": "<img src=x onerror=alert(1)>",\n  "repo": "a/b"\n}';
    await openApp([
      approvalCard({
        kind: 'call', change: '', headline: 'Approve this call?', channel: 'mcp_server', method: 'MCP', target: 'github.create_issue',
        credential: 'MCP server github', tool: 'github.create_issue', arguments: args, argumentsBytes: 9000,
        sentence: 'claude wants to call the tool github.create_issue of the MCP server github, which needs your approval for this tool\'s calls.',
      }),
    ]);
    const card = await screen.findByTestId('approval-card');
    const shown = within(card).getByTestId('approval-tool');
    expect(within(card).getByTestId('approval-arguments').textContent).toBe(args);
    expect(shown.querySelector('img')).toBeNull();
    expect(shown.textContent).toContain('Calls github.create_issue of the MCP server github with these arguments (9000 bytes, starting with):');
    expect(within(card).getByTestId('approval-target').textContent).toMatch(/MCP\s+tool\s+github\.create_issue\s+of the MCP server github/);
    expect(within(card).queryByTestId('approval-command')).toBeNull();
  });

  it('is reachable from the keyboard through the sidebar badge', async () => {
    const user = userEvent.setup();
    const approvals = await openApp();
    await user.click(await screen.findByTestId('approval-badge'));
    expect(document.activeElement).toBe(screen.getByTestId('approval-layer'));
    await user.tab(); // Deny comes first
    expect(document.activeElement).toBe(screen.getByTestId('approval-deny'));
    await user.tab();
    expect(document.activeElement).toBe(screen.getByTestId('approval-approve'));
    await user.keyboard('{Enter}');
    expect(approvals.ApprovalService.Answer).toHaveBeenCalledWith('rq-1', true);
  });

  it('after an answer, moves focus to the next card itself, where neither Enter nor the same key answers it at once', async () => {
    const user = userEvent.setup();
    const approvals = await openApp([approvalCard(), approvalCard({ id: 'rq-2' })]);
    await user.click(await screen.findByTestId('approval-badge'));
    await user.tab();
    expect(document.activeElement?.getAttribute('data-testid')).toBe('approval-deny');
    await user.keyboard('d');
    expect(approvals.ApprovalService.Answer).toHaveBeenCalledWith('rq-1', false);
    await waitFor(() => expect(screen.getAllByTestId('approval-card')).toHaveLength(1));
    const next = screen.getByTestId('approval-card');
    await waitFor(() => expect(document.activeElement).toBe(next));
    expect(next.dataset.approvalId).toBe('rq-2');
    // Enter on the card itself answers nothing; a held key's repeat and a
    // press right after the card came forward answer nothing either.
    await user.keyboard('{Enter}');
    await fireEvent.keyDown(window, { key: 'd', repeat: true });
    await user.keyboard('d');
    expect(approvals.ApprovalService.Answer).toHaveBeenCalledTimes(1);
    // Once it has been in front of the person for a moment, A answers it.
    next.dataset.focusedAt = String(Date.now() - READ_MS - 1);
    await user.keyboard('a');
    expect(approvals.ApprovalService.Answer).toHaveBeenLastCalledWith('rq-2', true);
  });

  it('Ctrl+J shows the folded cards and focuses the oldest, from any view', async () => {
    const user = userEvent.setup();
    await openApp([approvalCard(), approvalCard({ id: 'rq-2' })]);
    await user.click(await screen.findByTestId('approval-fold'));
    await waitFor(() => expect(screen.queryByTestId('approval-layer')).toBeNull());
    await fireEvent.click(screen.getByTestId('nav-activity'));
    await user.keyboard('{Control>}j{/Control}');
    await waitFor(() => expect(document.activeElement?.getAttribute('data-approval-id')).toBe('rq-1'));
  });

  it('shows an unreadable update as an error, not as a card', async () => {
    const approvals = await openApp([]);
    approvals.emitRaw({ cards: [{ id: 'rq-x', kind: 'auto-approve' }], sessions: [] });
    expect((await screen.findByTestId('approval-store-error')).textContent).toContain('does not understand');
    expect(screen.queryByTestId('approval-card')).toBeNull();
  });

  it('lists an approved session under Live sessions', async () => {
    const approvals = await openApp([]);
    approvals.set({ sessions: [liveSession()] });
    await fireEvent.click(screen.getByTestId('nav-sessions'));
    expect((await screen.findByTestId('live-session')).textContent).toContain('claude');
  });
});

// A window the size of SMALL_WINDOW in ApprovalCards.svelte, as matchMedia
// reports it; `resize` plays the change event a real window sends.
function fakeWindowSize(small: boolean) {
  const listeners = new Set<(e: MediaQueryListEvent) => void>();
  const query = {
    matches: small,
    media: '',
    addEventListener: (_: string, f: (e: MediaQueryListEvent) => void) => listeners.add(f),
    removeEventListener: (_: string, f: (e: MediaQueryListEvent) => void) => listeners.delete(f),
  };
  Object.defineProperty(window, 'matchMedia', { configurable: true, writable: true, value: vi.fn(() => query) });
  return {
    resize(toSmall: boolean) {
      query.matches = toSmall;
      for (const f of listeners) f({ matches: toSmall } as MediaQueryListEvent);
    },
  };
}

describe('approval cards in a small window (issue 15: never hides the page at 820x560)', () => {
  afterEach(() => {
    delete (window as { matchMedia?: unknown }).matchMedia;
  });

  it('take their place in the page column above the view instead of floating over it', async () => {
    const size = fakeWindowSize(true);
    await openApp();
    const layer = await screen.findByTestId('approval-layer');
    const main = screen.getByTestId('view-credentials');
    expect(layer.dataset.placement).toBe('docked');
    expect(layer.classList.contains('docked')).toBe(true);
    // In the same column as the page, before it: the page scrolls below.
    expect(layer.parentElement).toBe(main.parentElement);
    expect(layer.compareDocumentPosition(main) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    // Still impossible to miss: the sidebar counts it and it is announced;
    // the status bar does not count it a third time while the panel shows it.
    expect(screen.queryByTestId('status-approvals')).toBeNull();
    expect(screen.getByTestId('approval-badge-count').textContent).toBe('1');
    expect(screen.getByTestId('approval-announce').textContent).toContain('waiting for your approval');
    // A larger window puts it back over the page, and a smaller one in again.
    size.resize(false);
    await waitFor(() => expect(layer.dataset.placement).toBe('over'));
    expect(layer.classList.contains('docked')).toBe(false);
    size.resize(true);
    await waitFor(() => expect(layer.dataset.placement).toBe('docked'));
  });

  it('fold into the sidebar badge and the status bar count, and keep the keyboard answers and focus', async () => {
    fakeWindowSize(true);
    const user = userEvent.setup();
    const approvals = await openApp([approvalCard(), approvalCard({ id: 'rq-2' })]);
    await user.click(await screen.findByTestId('approval-fold'));
    await waitFor(() => expect(screen.queryByTestId('approval-layer')).toBeNull());
    // Nothing floats over the page: focus is on the sidebar's badge.
    expect(document.activeElement).toBe(screen.getByTestId('approval-badge'));
    expect(screen.getByTestId('status-approvals-count').textContent).toBe('2');
    // The status bar's count opens the panel and gives it focus.
    await user.click(screen.getByTestId('status-approvals'));
    const layer = await screen.findByTestId('approval-layer');
    expect(document.activeElement).toBe(layer);
    expect(layer.classList.contains('docked')).toBe(true);
    expect(screen.queryByTestId('status-approvals')).toBeNull();
    await user.tab();
    expect(document.activeElement?.getAttribute('data-testid')).toBe('approval-deny');
    await user.keyboard('d');
    expect(approvals.ApprovalService.Answer).toHaveBeenCalledWith('rq-1', false);
    await waitFor(() => expect(screen.getAllByTestId('approval-card')).toHaveLength(1));
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('approval-card')));
  });

  it('a large window gives the panel a column of its own: the page is narrowed, never under it', async () => {
    fakeWindowSize(false);
    await openApp();
    await screen.findByTestId('approval-layer');
    expect(screen.getByTestId('shell').classList.contains('panel-open')).toBe(true);
    await fireEvent.click(screen.getByTestId('approval-fold'));
    await waitFor(() => expect(screen.getByTestId('shell').classList.contains('panel-open')).toBe(false));
  });

  it('float over the page in a large window', async () => {
    fakeWindowSize(false);
    await openApp();
    expect((await screen.findByTestId('approval-layer')).dataset.placement).toBe('over');
  });
});
