import { describe, expect, it } from 'vitest';
import { confirmationWords } from './decisionWords';
import { formatTimestamp } from './time';
import { agentView, decision } from '../test/fakeApprovals';

const agent = agentView({ executable: 'claude', pid: 4242 });

describe('confirmationWords', () => {
  it.each([
    [{ kind: 'session', outcome: 'approved', target: 'api.github.com', credential: 'github' }, 'Approved: claude (pid 4242) may use “github” on api.github.com during this run.'],
    [{ kind: 'session', outcome: 'denied', target: 'api.github.com' }, 'Denied: claude (pid 4242) may not use api.github.com; it was told no.'],
    [{ kind: 'call', outcome: 'approved', method: 'DELETE', target: 'api.github.com/repos/a', credential: 'github' },
      'Approved this call: claude (pid 4242) may send DELETE api.github.com/repos/a with “github”, this once.'],
    [{ kind: 'call', outcome: 'denied', channel: 'ssh', method: 'exec', target: 'deploy@web-1:22', credential: 'web-1' },
      'Denied this call: claude (pid 4242) may not run a command on deploy@web-1:22 (“web-1”); it was told no.'],
    [{ kind: 'call', outcome: 'approved', channel: 'mcp_server', method: 'MCP', target: 'github.create_issue', credential: 'MCP server github' },
      'Approved this call: claude (pid 4242) may call the tool github.create_issue of the MCP server github, this once.'],
    [{ kind: 'access', outcome: 'approved', target: 'api.github.com' }, 'Answered: claude (pid 4242) is told that api.github.com is set up.'],
    [{ kind: 'access', outcome: 'denied', target: 'api.github.com' }, 'Refused: claude (pid 4242) is told it gets no access to api.github.com.'],
    [{ kind: 'session', outcome: 'refused' }, 'Approved, but it could not take effect: nothing was allowed to claude (pid 4242).'],
    [{ kind: 'session', outcome: 'expired', where: '' }, ''],
    [{ kind: 'call', outcome: 'withdrawn', where: '', why: 'the agent exited' }, ''],
  ] as const)('%o', (over, want) => {
    expect(confirmationWords(decision({ agent, where: 'in the window', ...over }))).toBe(want);
  });

  it('confirms a grant as the grant: which calls go without a card, and until when', () => {
    const until = '2026-11-29T18:11:00Z';
    const words = confirmationWords(decision({
      agent, where: 'in the window', kind: 'call', outcome: 'approved', method: 'POST', target: 'api.github.com/repos/a/issues', credential: 'github',
      grant: 'POST requests to api.github.com/repos/a/…', grantUntil: until,
    }));
    expect(words).toBe(
      `Approved calls like this until ${formatTimestamp(until)}: POST requests to api.github.com/repos/a/… with “github” from claude (pid 4242) go without a card, this call included.`,
    );
    expect(words).not.toContain('this once');
  });

  it('says where an answer came from when it was not this window', () => {
    expect(confirmationWords(decision({ agent, where: 'at the yett serve terminal' }))).toBe(
      'Approved (at the yett serve terminal): claude (pid 4242) may use api.example.com during this run.',
    );
  });
});
