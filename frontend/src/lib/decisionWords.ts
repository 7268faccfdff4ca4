// What a person just did to a card, in one sentence, from the decision the
// backend recorded (never from the button that was pressed): the short
// confirmation the window shows after an answer.

import type { DecisionView } from './backend';
import { formatTimestamp } from './time';

/** The process that asked, as the card named it. */
export function askerWords(d: DecisionView): string {
  return `${d.agent.executable || d.agent.name} (pid ${d.agent.pid})`;
}

/** What a per-call card asked to do, by channel, as a verb phrase. */
function callWords(d: DecisionView): string {
  if (d.channel === 'ssh') return `run a command on ${d.target}${d.credential ? ` (“${d.credential}”)` : ''}`;
  if (d.channel === 'mcp_server') return `call the tool ${d.target}${d.credential ? ` of the ${d.credential}` : ''}`;
  return `send ${d.method} ${d.target}${d.credential ? ` with “${d.credential}”` : ''}`;
}

/** What a session card let the run use. */
function runWords(d: DecisionView): string {
  return d.credential ? `“${d.credential}” on ${d.target}` : d.target;
}

/**
 * The confirmation of a person's answer, "" for an outcome nobody chose
 * (expired, withdrawn): those are not what the person did.
 */
export function confirmationWords(d: DecisionView): string {
  const who = askerWords(d);
  const where = d.where && d.where !== 'in the window' ? ` (${d.where})` : '';
  switch (`${d.outcome}:${d.kind}`) {
    case 'approved:session':
      return `Approved${where}: ${who} may use ${runWords(d)} during this run.`;
    case 'approved:call':
      if (d.grant) {
        // An MCP server's tool already names its server.
        const grant = `${d.grant}${d.credential && d.channel !== 'mcp_server' ? ` with “${d.credential}”` : ''}`;
        return `Approved calls like this until ${formatTimestamp(d.grantUntil)}${where}: ${grant} from ${who} go without a card, this call included.`;
      }
      return `Approved this call${where}: ${who} may ${callWords(d)}, this once.`;
    case 'approved:access':
      return `Answered${where}: ${who} is told that ${d.target} is set up.`;
    case 'denied:session':
      return `Denied${where}: ${who} may not use ${runWords(d)}; it was told no.`;
    case 'denied:call':
      return `Denied this call${where}: ${who} may not ${callWords(d)}; it was told no.`;
    case 'denied:access':
      return `Refused${where}: ${who} is told it gets no access to ${d.target}.`;
  }
  if (d.outcome === 'refused') return `Approved${where}, but it could not take effect: nothing was allowed to ${who}.`;
  return '';
}
