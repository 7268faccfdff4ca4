// Yett's one rule for where a URL that will carry a credential or a token
// may use plain http: a host that names this computer by its literal (a
// loopback IP address, or "localhost"). Everything else must be https.
// The backend's rule is backend/target.PlainHTTPAllowed; both are tested
// against urlRule.cases.json, so the window never refuses what the backend
// accepts, or the other way round.

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** The 8 groups of an IPv6 address (an embedded IPv4 tail included), or null. */
function ipv6Groups(s: string): number[] | null {
  if (s.includes('%')) return null;
  let tail: number[] = [];
  const v4 = s.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/);
  if (v4) {
    if (!IPV4.test(v4[2])) return null;
    const o = v4[2].split('.').map(Number);
    tail = [(o[0] << 8) | o[1], (o[2] << 8) | o[3]];
    s = v4[1].endsWith('::') ? v4[1] : v4[1].slice(0, -1);
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const part = (h: string) => (h === '' ? [] : h.split(':'));
  const head = part(halves[0]);
  const rest = halves.length === 2 ? part(halves[1]) : [];
  if ([...head, ...rest].some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return null;
  const zeros = new Array(8 - known).fill(0);
  return [...head.map((g) => parseInt(g, 16)), ...zeros, ...rest.map((g) => parseInt(g, 16)), ...tail];
}

/** Whether plain http may go to host (a URL's host, brackets allowed, no port). */
export function plainHttpAllowed(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  if (IPV4.test(host)) return host.startsWith('127.');
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const g = ipv6Groups(h);
  if (g === null) return false;
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return true;
  // An IPv4-mapped address (::ffff:127.x.x.x) is its IPv4 address.
  return g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff && g[6] >> 8 === 127;
}

/**
 * The host of an absolute http(s) URL as written (not as a browser would
 * normalise it: "127.1" stays "127.1", which the backend refuses), or null.
 */
export function rawHost(url: string): string | null {
  const m = url.match(/^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i);
  if (!m) return null;
  const authority = m[1];
  if (authority.includes('@')) return null;
  if (authority.startsWith('[')) {
    const end = authority.indexOf(']');
    return end < 0 ? null : authority.slice(0, end + 1);
  }
  return authority.split(':', 1)[0];
}

/** Why url may not carry a credential or a token, or null: https, or plain http to this computer. */
export function secureUrlError(url: string): string | null {
  const scheme = url.match(/^([a-z][a-z0-9+.-]*):/i)?.[1].toLowerCase();
  if (scheme === 'https') return null;
  const refused = 'Use an https:// address (plain http only for a host on this computer: 127.0.0.1, ::1 or localhost).';
  const host = rawHost(url);
  if (scheme !== 'http' || host === null) return refused;
  try {
    return plainHttpAllowed(decodeURIComponent(host)) ? null : refused;
  } catch {
    return refused;
  }
}
