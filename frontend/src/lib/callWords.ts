// A call an agent made through Yett, in words, from what the audit log
// recorded of it (AgentCall): what it asked for and what came back.

import type { AgentCall } from './backend';

/** What the call asked for: "GET api.github.com/user", by channel. */
export function callWhat(c: AgentCall): string {
  switch (c.channel) {
    case 'ssh':
      return `a command on ${c.target}`;
    case 'mcp_server':
      return `the tool ${c.operation} of ${c.target}`;
    case 'oauth':
      return `the operation ${c.operation} (${c.target}${c.path})`;
  }
  return `${c.operation} ${c.target}${c.path}`;
}

/** What came back: "answered 200", "exited 0", by channel and class. */
export function callResultWords(c: AgentCall): string {
  if (c.class === 'transport_error') return 'got no answer (the connection failed)';
  if (c.class === 'unknown') return 'was sent; what came back is not known';
  if (c.channel === 'ssh') return `exited ${c.status}`;
  if (c.channel === 'mcp_server') return c.class === 'success' ? 'returned a result' : 'returned an error';
  return `answered ${c.status}`;
}
