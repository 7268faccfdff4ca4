// A login and consent app for the Ory Hydra that e2e.sh starts: it signs
// in alice@example.test without asking and grants whatever the client
// requested (scopes and audience), so the authorization-code test can go
// through Hydra's whole browser flow. Loopback only; started by e2e.sh
// before Hydra, whose URLS_LOGIN and URLS_CONSENT point here.
//
// usage: node e2e/hydra-login.mjs PORT HYDRA_ADMIN_URL

import { createServer } from 'node:http';

const [port, adminArg] = process.argv.slice(2);
const admin = adminArg.replace(/\/$/, '');
const SUBJECT = 'alice@example.test';

async function hydra(method, path, challengeName, challenge, body) {
  const url = `${admin}/admin/oauth2/auth/requests/${path}?${challengeName}=${encodeURIComponent(challenge)}`;
  const r = await fetch(url, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(`${method} ${path}: HTTP ${r.status} ${json.error ?? ''}`);
  return json;
}

const server = createServer(async (req, res) => {
  try {
    const u = new URL(req.url, 'http://127.0.0.1');
    let done;
    if (u.pathname === '/health') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (req.method === 'GET' && u.pathname === '/login' && u.searchParams.get('login_challenge')) {
      done = await hydra('PUT', 'login/accept', 'login_challenge', u.searchParams.get('login_challenge'), { subject: SUBJECT });
    } else if (req.method === 'GET' && u.pathname === '/consent' && u.searchParams.get('consent_challenge')) {
      const c = u.searchParams.get('consent_challenge');
      const asked = await hydra('GET', 'consent', 'consent_challenge', c);
      done = await hydra('PUT', 'consent/accept', 'consent_challenge', c, {
        grant_scope: asked.requested_scope,
        grant_access_token_audience: asked.requested_access_token_audience,
      });
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (!done.redirect_to) throw new Error('Hydra returned no redirect_to');
    res.writeHead(302, { location: done.redirect_to }).end();
  } catch (err) {
    process.stderr.write(`hydra-login: ${err.message}\n`);
    res.writeHead(500, { 'content-type': 'text/plain' }).end(`login app: ${err.message}\n`);
  }
});
server.listen(Number(port), '127.0.0.1', () => process.stdout.write(`hydra-login: listening on 127.0.0.1:${port}\n`));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
