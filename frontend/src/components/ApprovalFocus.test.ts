// Where keyboard focus goes when a card that holds it leaves (issue 25,
// item 6), as a real browser reports it: Chromium fires a focusout with no
// related target just before a focused element leaves the page, and blurs
// a focused button that an answer disables. Neither is the person moving
// away, so focus still goes on to the next card; only focus that arrives
// somewhere outside the panel keeps it where the person put it.
import { describe, expect, it } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';
import { approvalCard, installApprovals } from '../test/fakeApprovals';
import { READ_MS } from '../lib/shortcuts';

async function openApp(ids: string[]) {
  installBridge(vaultStatus({ state: 'unlocked' }));
  const approvals = installApprovals({ cards: ids.map((id) => approvalCard({ id })) });
  render(App);
  await screen.findByTestId('shell');
  await waitFor(() => expect(screen.getAllByTestId('approval-card')).toHaveLength(ids.length));
  return approvals;
}

/** Holds the backend's answer until release(): the card stays until then. */
function holdAnswer(approvals: Awaited<ReturnType<typeof openApp>>) {
  let release = () => {};
  const answer = approvals.ApprovalService.Answer.getMockImplementation()!;
  approvals.ApprovalService.Answer.mockImplementationOnce(
    (id: string, approve: boolean) => new Promise<void>((done) => (release = () => done(answer(id, approve)))),
  );
  return () => release();
}

const card = (id: string) => screen.getAllByTestId('approval-card').find((c) => c.dataset.approvalId === id)!;

describe('focus when a card leaves', () => {
  it('goes to the next card when the answered card took focus with it as it left (Chromium)', async () => {
    const user = userEvent.setup();
    const approvals = await openApp(['rq-1', 'rq-2']);
    await user.keyboard('{Control>}j{/Control}');
    await waitFor(() => expect(document.activeElement).toBe(card('rq-1')));
    card('rq-1').dataset.focusedAt = String(Date.now() - READ_MS - 1);
    const release = holdAnswer(approvals);
    await user.keyboard('a');
    // The card leaves with focus: Chromium says so first, as a focusout.
    card('rq-1').blur();
    expect(document.activeElement).toBe(document.body);
    release();
    await waitFor(() => expect(screen.getAllByTestId('approval-card')).toHaveLength(1));
    await waitFor(() => expect(document.activeElement).toBe(card('rq-2')));
  });

  it('goes to the next card when the answer disabled the focused button and the browser blurred it', async () => {
    const user = userEvent.setup();
    const approvals = await openApp(['rq-3', 'rq-4']);
    await user.keyboard('{Control>}j{/Control}');
    await waitFor(() => expect(document.activeElement).toBe(card('rq-3')));
    await user.tab(); // Deny
    await user.tab(); // Approve
    const button = within(card('rq-3')).getByTestId('approval-approve') as HTMLButtonElement;
    expect(document.activeElement).toBe(button);
    const release = holdAnswer(approvals);
    await user.keyboard('{Enter}');
    expect(button.disabled).toBe(true);
    // Chromium blurs a focused button once it is disabled: a focusout
    // with no related target (jsdom's blur() leaves a disabled one be).
    button.dispatchEvent(new FocusEvent('focusout', { bubbles: true, relatedTarget: null }));
    release();
    await waitFor(() => expect(screen.getAllByTestId('approval-card')).toHaveLength(1));
    await waitFor(() => expect(document.activeElement).toBe(card('rq-4')));
  });

  it('goes to the page, not the body, when the last card leaves', async () => {
    const user = userEvent.setup();
    const approvals = await openApp(['rq-1']);
    await user.keyboard('{Control>}j{/Control}');
    await waitFor(() => expect(document.activeElement).toBe(card('rq-1')));
    card('rq-1').dataset.focusedAt = String(Date.now() - READ_MS - 1);
    const release = holdAnswer(approvals);
    await user.keyboard('d');
    card('rq-1').blur();
    release();
    await waitFor(() => expect(screen.queryByTestId('approval-card')).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('view-credentials')));
  });

  it('stays where the person put it outside the panel when a card leaves or comes', async () => {
    const user = userEvent.setup();
    const approvals = await openApp(['rq-1', 'rq-2']);
    await user.keyboard('{Control>}j{/Control}');
    await waitFor(() => expect(document.activeElement).toBe(card('rq-1')));
    const nav = screen.getByTestId('nav-activity');
    nav.focus();
    approvals.set({ cards: [approvalCard({ id: 'rq-2' })] });
    await waitFor(() => expect(screen.getAllByTestId('approval-card')).toHaveLength(1));
    approvals.set({ cards: [approvalCard({ id: 'rq-2' }), approvalCard({ id: 'rq-5' })] });
    await waitFor(() => expect(screen.getAllByTestId('approval-card')).toHaveLength(2));
    expect(document.activeElement).toBe(nav);
  });
});
