// After a card is answered it leaves; a short confirmation of what the
// person did stays for a moment in a polite live region (issue 25, item 3),
// said from the decision the backend recorded. It never takes focus, and
// focus goes on to the next card, where A and D work (item 6).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import App from '../App.svelte';
import { installBridge, vaultStatus } from '../test/fakeBridge';
import { agentView, approvalCard, decision, installApprovals } from '../test/fakeApprovals';
import { CONFIRM_MS } from './ApprovalConfirmation.svelte';
import { READ_MS } from '../lib/shortcuts';
import type { ApprovalState } from '../lib/backend';

const agent = agentView({ executable: 'claude', pid: 4242 });
const said = () => screen.getByTestId('approval-confirmation').textContent!.replace(/\s+/g, ' ').trim();

async function openApp(initial: Partial<ApprovalState>) {
  installBridge(vaultStatus({ state: 'unlocked' }));
  const approvals = installApprovals(initial);
  render(App);
  await screen.findByTestId('shell');
  return approvals;
}

describe('the confirmation of an answer', () => {
  afterEach(() => vi.useRealTimers());

  it('says what was approved, in a polite live region, for a moment, without taking focus', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    await openApp({ cards: [approvalCard({ agent, target: '127.0.0.1:4545', credential: 'receiver' })] });
    const region = screen.getByTestId('approval-confirmation');
    expect(region.getAttribute('role')).toBe('status');
    expect(region.getAttribute('aria-live')).toBe('polite');
    expect(said()).toBe('');
    await fireEvent.click(await screen.findByTestId('approval-approve'));
    await waitFor(() => expect(said()).toBe('Approved: claude (pid 4242) may use “receiver” on 127.0.0.1:4545 during this run.'));
    expect(screen.queryByTestId('approval-card')).toBeNull();
    expect(region.contains(document.activeElement)).toBe(false);
    expect(region.querySelector('button, a, [tabindex]')).toBeNull();
    await vi.advanceTimersByTimeAsync(CONFIRM_MS - 100);
    expect(said()).not.toBe('');
    await vi.advanceTimersByTimeAsync(200);
    expect(said()).toBe('');
  });

  it('says what was denied', async () => {
    await openApp({ cards: [approvalCard({ agent, target: 'api.example.com' })] });
    await fireEvent.click(await screen.findByTestId('approval-deny'));
    await waitFor(() => expect(said()).toBe('Denied: claude (pid 4242) may not use api.example.com; it was told no.'));
  });

  it('stays beside the next card, where focus goes and whose answers still work from the keyboard', async () => {
    const user = userEvent.setup();
    const approvals = await openApp({
      cards: [approvalCard({ agent, credential: 'receiver' }), approvalCard({ id: 'rq-2', agent: agentView({ pid: 5151 }) })],
    });
    await user.click(await screen.findByTestId('approval-badge'));
    await user.tab();
    expect(document.activeElement?.getAttribute('data-testid')).toBe('approval-deny');
    await user.keyboard('a');
    await waitFor(() => expect(said()).toContain('Approved: claude (pid 4242) may use “receiver”'));
    const next = screen.getByTestId('approval-card');
    await waitFor(() => expect(document.activeElement).toBe(next));
    // Outside the panel: it covers none of the next card's answers.
    expect(screen.getByTestId('approval-layer').contains(screen.getByTestId('approval-confirmation'))).toBe(false);
    expect((within(next).getByTestId('approval-approve') as HTMLButtonElement).disabled).toBe(false);
    next.dataset.focusedAt = String(Date.now() - READ_MS - 1);
    await user.keyboard('d');
    expect(approvals.ApprovalService.Answer).toHaveBeenLastCalledWith('rq-2', false);
    await waitFor(() => expect(said()).toContain('Denied: claude (pid 5151)'));
  });

  it('stays while another card waits (going away would move its answers), and goes a moment after the last answer', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    await openApp({ cards: [approvalCard({ agent, target: 'api.example.com' }), approvalCard({ id: 'rq-2', agent: agentView({ pid: 5151 }) })] });
    await fireEvent.click(within(await screen.findByTestId('approval-layer')).getAllByTestId('approval-deny')[0]);
    await waitFor(() => expect(said()).toContain('Denied: claude (pid 4242)'));
    await vi.advanceTimersByTimeAsync(CONFIRM_MS * 2);
    expect(said()).toContain('Denied: claude (pid 4242)');
    await fireEvent.click(screen.getByTestId('approval-approve'));
    await waitFor(() => expect(said()).toContain('Approved: claude (pid 5151)'));
    await vi.advanceTimersByTimeAsync(CONFIRM_MS + 100);
    expect(said()).toBe('');
  });

  it('stays in view under the status bar, in the page column, whichever view is open', async () => {
    await openApp({ cards: [approvalCard({ agent })] });
    const region = screen.getByTestId('approval-confirmation');
    expect(region.parentElement).toBe(screen.getByTestId('status-bar').parentElement);
    expect(screen.getByTestId('status-bar').compareDocumentPosition(region) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
  });

  it('confirms an answer given from a notification too, and says where', async () => {
    const approvals = await openApp({ cards: [approvalCard({ id: 'rq-9' })] });
    await screen.findByTestId('approval-card');
    approvals.set({ cards: [], decisions: [decision({ id: 'rq-9', agent, target: 'api.example.com', where: 'from a notification' })] });
    await waitFor(() => expect(said()).toBe('Approved (from a notification): claude (pid 4242) may use api.example.com during this run.'));
  });

  it('says nothing of answers given before the window opened, nor of cards nobody answered', async () => {
    const approvals = await openApp({ cards: [approvalCard({ id: 'rq-wait' })], decisions: [decision({ id: 'rq-old', agent: agentView({ pid: 1 }) })] });
    // The first state is in (its card shows): rq-old was answered before.
    await screen.findByTestId('approval-card');
    approvals.set({
      cards: [],
      decisions: [
        decision({ id: 'rq-new', agent, target: 'api.example.com', outcome: 'denied', where: 'in the window' }),
        decision({ id: 'rq-x', agent: agentView({ pid: 2 }), outcome: 'expired', where: '' }),
        decision({ id: 'rq-y', agent: agentView({ pid: 3 }), outcome: 'withdrawn', why: 'the agent exited', where: '' }),
        decision({ id: 'rq-old', agent: agentView({ pid: 1 }) }),
      ],
    });
    await waitFor(() => expect(said()).not.toBe(''));
    expect(said()).toBe('Denied: claude (pid 4242) may not use api.example.com; it was told no.');
  });
});
