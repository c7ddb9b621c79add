// The dashboard in a real browser: Debian's headless Chromium, driven by
// Playwright (playwright-core, no browser of its own), against a running
// `quarry demo`. Run by tools/browser-tests, which starts the demo and
// passes its first stdout line in QUARRY_DEMO_LINE.
//
// One person's whole visit, in order: sign in, connect a tool through the
// vendor's OAuth (authorization code + PKCE) and one that asks for a
// setting first, issue an API token and use it from here, see the
// questions asked on the Activity page (each tool by its label, the last
// day's chart) and run one again, approve an assistant's device code at
// /device, allow an MCP client at its consent page (/oauth/authorize)
// and see it listed, register and remove a webhook, delete the account
// and see every token stop working;
// then bob signs in with the identity provider (single sign-on, OIDC).
// Every page visited is screenshotted (full page) into
// QUARRY_SCREENSHOT_DIR/NN-name.png and checked for a few accessibility
// basics; any console error (a CSP violation shows as one) fails the run.
//
// TLS: the browser trusts exactly the demo's CA and the fake vendors' CA,
// by their public keys (--ignore-certificate-errors-spki-list), not every
// certificate; node's requests trust the same two CAs (https `ca`).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';

import { demo, launch, shotsDir } from './chromium.mjs';

const origin = new URL(demo.dashboard_url).origin;
const fakeOrigin = new URL(demo.fake_upstreams).origin;
const alice = demo.users.find((u) => u.email === 'alice@acme.test');
const cas = [fs.readFileSync(demo.ca_cert), fs.readFileSync(demo.fake_upstreams_ca_cert)];

/** One HTTPS request from node, trusting the two demo CAs only. */
function request(method, url, { headers = {}, form, json } = {}) {
  let body;
  if (form) {
    body = new URLSearchParams(form).toString();
    headers = { 'content-type': 'application/x-www-form-urlencoded', ...headers };
  } else if (json !== undefined) {
    body = JSON.stringify(json);
    headers = { 'content-type': 'application/json', ...headers };
  }
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, ca: cas, rejectUnauthorized: true, timeout: 60_000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed = null;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode, headers: res.headers, text, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: timed out`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const bearer = (token) => ({ authorization: `Bearer ${token}` });
const query = (token, body) => request('POST', `${origin}/v1/query`, { headers: bearer(token), json: body });
const me = (token) => request('GET', `${origin}/v1/me`, { headers: bearer(token) });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the page, its screenshots and checks ---------------------------------

let browser;
let page;
let shotNumber = 0;
const shots = [];
const consoleErrors = [];

/** Basic accessibility of the page: a lang, a title, one main landmark,
 * one h1, every control labelled, every button and link named, ids unique. */
async function accessibilityProblems() {
  return page.evaluate(() => {
    const problems = [];
    const text = (el) => (el?.textContent || '').replace(/\s+/g, ' ').trim();
    if (!document.documentElement.lang) problems.push('<html> has no lang');
    if (!document.title.trim()) problems.push('no <title>');
    const mains = document.querySelectorAll('main, [role="main"]');
    if (mains.length !== 1) problems.push(`${mains.length} main landmarks (want 1)`);
    const h1s = document.querySelectorAll('h1');
    if (h1s.length !== 1) problems.push(`${h1s.length} h1 elements (want 1)`);
    else if (!text(h1s[0])) problems.push('the h1 is empty');
    for (const el of document.querySelectorAll('input, select, textarea')) {
      if (el.type === 'hidden') continue;
      const byLabel = [...(el.labels || [])].some((l) => text(l));
      const byAria = (el.getAttribute('aria-label') || '').trim();
      const byRef = (el.getAttribute('aria-labelledby') || '')
        .split(/\s+/)
        .some((id) => id && text(document.getElementById(id)));
      if (!byLabel && !byAria && !byRef) problems.push(`no label: ${el.outerHTML}`);
    }
    for (const el of document.querySelectorAll('button, a[href]')) {
      if (!text(el) && !(el.getAttribute('aria-label') || '').trim()) problems.push(`no name: ${el.outerHTML}`);
    }
    const seen = new Set();
    for (const el of document.querySelectorAll('[id]')) {
      if (seen.has(el.id)) problems.push(`duplicate id ${el.id}`);
      seen.add(el.id);
    }
    return problems;
  });
}

/** Screenshots the page (full page) and checks it. */
async function visit(name) {
  await page.waitForLoadState('load');
  shotNumber += 1;
  const file = path.join(shotsDir, `${String(shotNumber).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  shots.push(file);
  const problems = await accessibilityProblems();
  assert.deepEqual(problems, [], `accessibility of ${page.url()} (${file})`);
  assert.deepEqual(consoleErrors, [], `console errors on ${page.url()}`);
}

/** Runs `action` (a click that submits or a goto) and returns the response
 * of the page the browser ends on, after every redirect. */
async function navigate(action) {
  const [response] = await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), action()]);
  return response;
}

const h1 = () => page.locator('h1').innerText();

/** A step of the visit; after a failed one the rest are skipped (each needs
 * the ones before), and the page it failed on is screenshotted. */
let failed = false;
function step(t, name, fn) {
  return t.test(name, { skip: failed && 'an earlier step failed' }, async () => {
    try {
      await fn();
    } catch (error) {
      failed = true;
      const file = path.join(shotsDir, `${String(shotNumber + 1).padStart(2, '0')}-FAILED.png`);
      await page
        ?.screenshot({ path: file, fullPage: true })
        .catch(() => {});
      throw error;
    }
  });
}

test.before(async () => {
  fs.mkdirSync(shotsDir, { recursive: true });
  ({ browser, page } = await launch(cas));
  // Chromium logs an error for a page answered with 4xx (a wrong password's
  // 401, say); the steps check those statuses themselves, so only other
  // errors count: a subresource that failed, a CSP violation, a script.
  const documents = new Map();
  page.on('response', (response) => {
    const request = response.request();
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) {
      documents.set(response.url(), response.status());
    }
  });
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const failed = /^Failed to load resource: the server responded with a status of (\d+)/.exec(message.text());
    if (failed && documents.get(message.location().url) === Number(failed[1])) return;
    consoleErrors.push(`${page.url()}: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${error}`));
});

test.after(async () => {
  await browser?.close();
});

// ---- the visit, step by step (each step needs the ones before) ------------

test('a visit to the dashboard in Chromium', async (t) => {
  const version = browser.version();
  t.diagnostic(`chromium ${version}`);

  await step(t, 'signs in as alice', async () => {
    const response = await navigate(() => page.goto(demo.dashboard_url));
    assert.equal(new URL(page.url()).pathname, '/dashboard/login', 'signed out: the sign-in page');
    assert.equal(response.status(), 200);
    const csp = response.headers()['content-security-policy'];
    assert.match(csp, /default-src 'none'/);
    await visit('sign-in');

    // A wrong password first: refused, with the reason on the page.
    await page.getByLabel('Email').fill(alice.email);
    await page.getByLabel('Password').fill('not-the-password');
    const wrong = await navigate(() => page.getByRole('button', { name: 'Sign in' }).click());
    assert.equal(wrong.status(), 401);
    await assert.doesNotReject(page.getByRole('alert').waitFor());
    await visit('sign-in-wrong-password');

    await page.getByLabel('Email').fill(alice.email);
    await page.getByLabel('Password').fill(alice.password);
    const done = await navigate(() => page.getByRole('button', { name: 'Sign in' }).click());
    assert.equal(done.status(), 200);
    assert.equal(new URL(page.url()).pathname, '/dashboard/tools');
    assert.equal(await h1(), 'Connected tools');
    assert.ok((await page.locator('header').innerText()).includes(alice.email));
    const cookies = await page.context().cookies(origin);
    const session = cookies.find((c) => c.name === '__Host-quarry_session');
    assert.ok(session, 'a session cookie');
    assert.ok(session.secure && session.httpOnly && session.sameSite === 'Lax', JSON.stringify(session));
    await visit('tools');
  });

  await step(t, 'connects Linear through the vendor (OAuth code + PKCE)', async () => {
    const linear = page.locator('tr[data-connector="linear"]');
    // The demo connected it by hand: disconnect, then connect in the browser.
    assert.equal(await linear.getAttribute('data-status'), 'connected');
    await navigate(() => page.getByRole('button', { name: 'Disconnect Linear' }).click());
    assert.equal(await h1(), 'Disconnected');
    await visit('tool-disconnected');
    await navigate(() => page.getByRole('link', { name: 'Back to your tools' }).click());
    assert.equal(await linear.getAttribute('data-status'), 'not_connected');

    const hops = [];
    const record = (r) => {
      if (r.isNavigationRequest() && r.frame() === page.mainFrame()) hops.push(`${r.method()} ${r.url()}`);
    };
    page.on('request', record);
    const landed = await navigate(() => page.getByRole('button', { name: 'Connect Linear' }).click());
    page.off('request', record);

    // Ours, the vendor's authorize page, our callback, and back to the tools.
    const [connect, authorize, callback, tools] = hops;
    assert.equal(hops.length, 4, hops.join('\n'));
    assert.equal(connect, `POST ${origin}/dashboard/tools/linear/connect`);
    const authorizeUrl = new URL(authorize.replace(/^GET /, ''));
    assert.equal(authorizeUrl.origin, fakeOrigin, 'the browser went to the vendor');
    assert.equal(authorizeUrl.pathname, '/_vendor/linear.app/oauth/authorize');
    const params = authorizeUrl.searchParams;
    assert.equal(params.get('response_type'), 'code');
    assert.equal(params.get('code_challenge_method'), 'S256');
    assert.match(params.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/);
    assert.equal(params.get('scope'), 'read', "only the manifest's read-only scope");
    assert.equal(params.get('redirect_uri'), `${origin}/dashboard/oauth/callback`);
    assert.ok(params.get('state'));
    const callbackUrl = new URL(callback.replace(/^GET /, ''));
    assert.equal(callbackUrl.origin + callbackUrl.pathname, `${origin}/dashboard/oauth/callback`);
    assert.equal(callbackUrl.searchParams.get('state'), params.get('state'));
    assert.ok(callbackUrl.searchParams.get('code'));
    assert.equal(tools, `GET ${origin}/dashboard/tools?connected=linear`);

    assert.equal(landed.status(), 200);
    assert.equal(await page.getByRole('status').innerText(), 'Linear is connected.');
    assert.equal(await linear.getAttribute('data-status'), 'connected');
    await visit('tool-connected');

    // The vendor saw the PKCE verifier, and the new grant answers queries.
    const seen = await request('GET', `${fakeOrigin}/_fake/requests`);
    const exchange = seen.body.find((r) => r.path === '/oauth/token' && r.host === 'api.linear.app');
    assert.ok(exchange, 'a token exchange at Linear');
    const form = Buffer.from(exchange.body).toString('utf8');
    assert.match(form, /grant_type=authorization_code/);
    assert.match(form, /code_verifier=/);
    const reply = await query(alice.token, { query: 'checkout timeouts', connectors: ['linear'] });
    assert.equal(reply.status, 200, reply.text);
    const result = reply.body.results.find((r) => r.connector === 'linear');
    assert.ok(result && !result.error, reply.text);
  });

  await step(t, 'connects Zendesk after typing its subdomain', async () => {
    const zendesk = page.locator('tr[data-connector="zendesk"]');
    await navigate(() => page.getByRole('button', { name: 'Disconnect Zendesk' }).click());
    await navigate(() => page.getByRole('link', { name: 'Back to your tools' }).click());
    assert.equal(await zendesk.getAttribute('data-status'), 'not_connected');
    // Its OAuth endpoints are on the account's subdomain: asked for first.
    await navigate(() => page.getByRole('button', { name: 'Connect Zendesk' }).click());
    assert.equal(await h1(), 'Connect Zendesk');
    await visit('tool-settings');
    await page.getByLabel(/^subdomain/).fill('acme');
    const landed = await navigate(() => page.getByRole('button', { name: 'Continue to Zendesk' }).click());
    assert.equal(landed.status(), 200);
    assert.equal(await page.getByRole('status').innerText(), 'Zendesk is connected.');
    assert.equal(await zendesk.getAttribute('data-status'), 'connected');
    const reply = await query(alice.token, { query: 'checkout timeouts', connectors: ['zendesk'] });
    assert.equal(reply.status, 200, reply.text);
    assert.ok(!reply.body.results[0].error, reply.text);
  });

  await step(t, 'connects Google Calendar, a vendor fake-saas plays from data', async () => {
    const calendar = page.locator('tr[data-connector="google-calendar"]');
    await navigate(() => page.getByRole('button', { name: 'Disconnect Google Calendar' }).click());
    await navigate(() => page.getByRole('link', { name: 'Back to your tools' }).click());
    assert.equal(await calendar.getAttribute('data-status'), 'not_connected');
    const hops = [];
    const record = (request) => { if (request.isNavigationRequest()) hops.push(request.url()); };
    page.on('request', record);
    const landed = await navigate(() => page.getByRole('button', { name: 'Connect Google Calendar' }).click());
    page.off('request', record);
    assert.equal(landed.status(), 200);
    // Google's consent screen, asked for Calendar's read-only scope.
    const consent = hops
      .map((url) => new URL(url))
      .find((url) => url.origin === fakeOrigin && url.pathname.startsWith('/_vendor/accounts.google.com/'));
    assert.ok(consent, hops.join('\n'));
    assert.equal(consent.searchParams.get('scope'), 'https://www.googleapis.com/auth/calendar.events.readonly');
    assert.equal(await page.getByRole('status').innerText(), 'Google Calendar is connected.');
    assert.equal(await calendar.getAttribute('data-status'), 'connected');
    const reply = await query(alice.token, { query: 'postmortem certificate rotation', connectors: ['google-calendar'] });
    assert.equal(reply.status, 200, reply.text);
    const result = reply.body.results[0];
    assert.ok(!result.error, reply.text);
    assert.ok(reply.text.includes('Postmortem review: checkout 502s'), reply.text);
  });

  await step(t, 'connects Microsoft Teams, one of the four connectors Microsoft 365 became', async () => {
    const teams = page.locator('tr[data-connector="microsoft-teams"]');
    await navigate(() => page.getByRole('button', { name: 'Disconnect Microsoft Teams' }).click());
    await navigate(() => page.getByRole('link', { name: 'Back to your tools' }).click());
    assert.equal(await teams.getAttribute('data-status'), 'not_connected');
    const hops = [];
    const record = (request) => { if (request.isNavigationRequest()) hops.push(request.url()); };
    page.on('request', record);
    const landed = await navigate(() => page.getByRole('button', { name: 'Connect Microsoft Teams' }).click());
    page.off('request', record);
    assert.equal(landed.status(), 200);
    // Microsoft's consent screen, asked for Teams' chats only.
    const consent = hops
      .map((url) => new URL(url))
      .find((url) => url.origin === fakeOrigin && url.pathname.startsWith('/_vendor/login.microsoftonline.com/'));
    assert.ok(consent, hops.join('\n'));
    assert.equal(consent.searchParams.get('scope'), 'Chat.Read offline_access');
    assert.equal(await page.getByRole('status').innerText(), 'Microsoft Teams is connected.');
    assert.equal(await teams.getAttribute('data-status'), 'connected');
    const reply = await query(alice.token, { query: 'checkout 502 certificate', connectors: ['microsoft-teams'] });
    assert.equal(reply.status, 200, reply.text);
    assert.ok(!reply.body.results[0].error, reply.text);
    assert.ok(reply.text.includes('Teams message from'), reply.text);
  });

  let apiToken;
  await step(t, 'issues an API token that works against /v1/query', async () => {
    await navigate(() => page.getByRole('link', { name: 'API tokens' }).click());
    assert.equal(await h1(), 'API tokens');
    await visit('tokens');
    const issued = await navigate(() => page.getByRole('button', { name: 'Issue a token' }).click());
    assert.equal(issued.status(), 200);
    apiToken = (await page.getByLabel('New API token').innerText()).trim();
    assert.match(apiToken, /^qt_/);
    await visit('token-issued');

    const reply = await query(apiToken, { query: 'checkout timeouts', max_results: 5 });
    assert.equal(reply.status, 200, reply.text);
    assert.ok(Array.isArray(reply.body.results), reply.text);
    assert.equal((await me(apiToken)).body.email, alice.email);

    // Shown once: the list never shows it again.
    await navigate(() => page.reload());
    assert.ok(!(await page.content()).includes(apiToken), 'the token is shown once');
    assert.ok((await page.locator('tr[data-token-id]').count()) >= 1);
  });

  await step(t, 'shows what Quarry did: the tools asked, the Activity page, a question run again', async () => {
    // The tools by their labels, each with when it was last asked.
    await navigate(() => page.getByRole('link', { name: 'Connected tools' }).click());
    const github = page.locator('tr[data-connector="github"]');
    // Named by its label (the badge beside it is hidden from screen readers).
    assert.equal(await github.getByRole('cell', { name: 'GitHub', exact: true }).count(), 1);
    assert.equal(await github.locator('td.last-used time').count(), 1, 'asked by the last query');
    await visit('tools-last-asked');

    const activity = await navigate(() => page.getByRole('link', { name: 'Activity' }).click());
    assert.equal(await h1(), 'Activity');
    // The charts need no script and no image: the CSP stays strict.
    const csp = activity.headers()['content-security-policy'];
    assert.match(csp, /default-src 'none'/);
    assert.doesNotMatch(csp, /unsafe|script-src/);
    // Newest first: the API token's question of every connected tool.
    const questions = page.locator('tr[data-question]');
    const asked = await questions.count();
    assert.ok(asked >= 3, `${asked} questions listed`);
    const latest = questions.first();
    assert.equal(await latest.locator('td').first().innerText(), 'checkout timeouts');
    const githubThere = latest.locator('li[data-connector="github"]');
    assert.equal(await githubThere.locator('strong').innerText(), 'GitHub');
    assert.match(await githubThere.innerText(), /\d+ ms/);
    // The last day's chart: server-rendered SVG, named and described.
    const chart = page.locator('figure[data-connector="github"] svg.chart');
    assert.equal(await chart.getAttribute('role'), 'img');
    assert.match(await chart.locator('title').first().textContent(), /^GitHub: latency and failures over the last 24 hours$/);
    assert.match(await chart.locator('desc').textContent(), /questions? in the last 24 hours/);
    assert.ok((await chart.locator('rect.bar').count()) >= 1, 'a bar for this hour');
    assert.equal(await page.getByRole('table', { name: 'Each tool over the last 24 hours' }).count(), 1);
    await visit('activity');

    // Run the Linear-only question again: the answer, grouped by tool.
    const linearOnly = questions.filter({ hasText: 'checkout timeouts' }).filter({
      has: page.locator('li[data-connector="linear"]'),
      hasNot: page.locator('li[data-connector="github"]'),
    });
    const answered = await navigate(() => linearOnly.first().getByRole('button', { name: /^Run again/ }).click());
    assert.equal(answered.status(), 200);
    assert.equal(await h1(), 'Answer');
    const linear = page.getByRole('region', { name: 'Linear' });
    assert.ok(await linear.isVisible());
    assert.equal(await page.locator('section[data-connector]').count(), 1, 'only the tool it asked');
    assert.ok((await linear.locator('ol.passages li').count()) >= 1, await linear.innerText());
    await visit('activity-run-again');
    await navigate(() => page.getByRole('link', { name: 'Back to your activity' }).click());
    assert.equal(await questions.count(), asked + 1, 'the question asked again is in the history');
  });

  let deviceToken;
  await step(t, "approves an assistant's device code at /device", async () => {
    const clientId = 'Browser Test Assistant';
    const started = await request('POST', `${origin}/oauth/device_authorization`, { form: { client_id: clientId } });
    assert.equal(started.status, 200, started.text);
    const { device_code: deviceCode, user_code: userCode, verification_uri: verificationUri } = started.body;
    assert.equal(verificationUri, `${origin}/device`);
    let interval = started.body.interval * 1000;
    const poll = () =>
      request('POST', `${origin}/oauth/token`, {
        form: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: deviceCode, client_id: clientId },
      });
    const pending = await poll();
    assert.equal(pending.status, 400, pending.text);
    assert.equal(pending.body.error, 'authorization_pending');

    await navigate(() => page.goto(verificationUri));
    assert.equal(await h1(), 'Connect an assistant');
    await visit('device');
    await page.getByLabel('Code').fill(userCode.toLowerCase());
    const review = await navigate(() => page.getByRole('button', { name: 'Continue' }).click());
    assert.equal(review.status(), 200);
    assert.equal(await h1(), 'Approve an assistant?');
    assert.equal(await page.locator('main strong').first().innerText(), clientId);
    await visit('device-review');
    const approved = await navigate(() => page.getByRole('button', { name: 'Approve' }).click());
    assert.equal(approved.status(), 200);
    assert.equal(await h1(), 'Assistant approved');
    await visit('device-approved');

    // The assistant polls as RFC 8628 says: every `interval`, longer on slow_down.
    const deadline = Date.now() + 60_000;
    let tokens;
    while (!tokens) {
      assert.ok(Date.now() < deadline, 'no token within a minute');
      await sleep(interval);
      const reply = await poll();
      if (reply.status === 200) tokens = reply.body;
      else if (reply.body?.error === 'slow_down') interval += 5000;
      else assert.equal(reply.body?.error, 'authorization_pending', reply.text);
    }
    assert.equal(tokens.token_type, 'Bearer');
    assert.equal(tokens.expires_in, 3600);
    assert.ok(tokens.refresh_token);
    deviceToken = tokens.access_token;
    const who = await me(deviceToken);
    assert.equal(who.status, 200, who.text);
    assert.equal(who.body.email, alice.email);
  });

  await step(t, 'allows an MCP client at its consent page', async () => {
    // The client's loopback redirect (RFC 8252): where the browser lands.
    const callback = http.createServer((req, res) => res.end('<!doctype html><title>Signed in</title>'));
    await new Promise((resolve) => callback.listen(0, '127.0.0.1', resolve));
    const redirectUri = `http://127.0.0.1:${callback.address().port}/callback`;
    try {
      const registered = await request('POST', `${origin}/oauth/register`, {
        json: { client_name: 'Browser MCP Client', redirect_uris: [redirectUri] },
      });
      assert.equal(registered.status, 201, registered.text);
      const clientId = registered.body.client_id;
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const authorize = new URL(`${origin}/oauth/authorize`);
      for (const [k, v] of Object.entries({
        response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'browser-state',
        code_challenge: challenge, code_challenge_method: 'S256', resource: demo.mcp_url,
      })) authorize.searchParams.set(k, v);

      await navigate(() => page.goto(authorize.href));
      assert.equal(await h1(), 'Allow Browser MCP Client?');
      assert.equal(await page.locator('main strong').first().innerText(), 'Browser MCP Client');
      assert.ok(await page.getByRole('region', { name: 'It will be able to' }).isVisible());
      await visit('mcp-consent');
      await navigate(() => page.getByRole('button', { name: 'Allow' }).click());
      const back = new URL(page.url());
      assert.equal(back.origin + back.pathname, redirectUri);
      assert.equal(back.searchParams.get('state'), 'browser-state');
      assert.equal(back.searchParams.get('iss'), origin);

      const tokens = await request('POST', `${origin}/oauth/token`, {
        form: {
          grant_type: 'authorization_code', code: back.searchParams.get('code'), redirect_uri: redirectUri,
          client_id: clientId, code_verifier: verifier, resource: demo.mcp_url,
        },
      });
      assert.equal(tokens.status, 200, tokens.text);
      const listed = await request('POST', demo.mcp_url, {
        headers: { ...bearer(tokens.body.access_token), accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        json: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
      assert.equal(listed.status, 200, listed.text);

      await navigate(() => page.goto(`${origin}/dashboard/tokens`));
      const row = page.locator('tr[data-assistant-id]', { hasText: 'Browser MCP Client' });
      assert.equal(await row.count(), 1);
      await visit('mcp-connected');
    } finally {
      callback.close();
    }
  });

  await step(t, 'registers and removes a webhook', async () => {
    await navigate(() => page.getByRole('link', { name: 'Webhooks' }).click());
    assert.equal(await h1(), 'Webhooks');
    await visit('webhooks');
    // The demo allows plain HTTP to this machine (a local receiver).
    await page.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/quarry-events');
    const registered = await navigate(() => page.getByRole('button', { name: 'Register' }).click());
    assert.equal(registered.status(), 201);
    const secret = (await page.getByLabel('Signing secret').innerText()).trim();
    assert.match(secret, /^whsec_/);
    const row = page.locator('tr[data-webhook-id]');
    assert.equal(await row.count(), 1);
    const id = await row.getAttribute('data-webhook-id');
    await visit('webhook-registered');
    const listed = await request('GET', `${origin}/v1/webhooks`, { headers: bearer(apiToken) });
    assert.equal(listed.status, 200, listed.text);
    assert.ok(listed.text.includes(id), listed.text);

    await navigate(() => page.getByRole('button', { name: `Remove ${id}` }).click());
    assert.equal(new URL(page.url()).pathname, '/dashboard/webhooks');
    assert.equal(await row.count(), 0);
    assert.ok(!(await page.content()).includes(secret), 'the secret is shown once');
    await visit('webhook-removed');
    const after = await request('GET', `${origin}/v1/webhooks`, { headers: bearer(apiToken) });
    assert.ok(!after.text.includes(id), after.text);
  });

  await step(t, 'deletes the account behind the confirmation', async () => {
    await navigate(() => page.getByRole('link', { name: 'Delete my data' }).click());
    assert.equal(await h1(), 'Delete all my data');
    await visit('delete-confirm');
    // Someone else's email: nothing happens.
    await page.getByLabel(/Type your email/).fill('bob@acme.test');
    const refused = await navigate(() => page.getByRole('button', { name: 'Delete all my data' }).click());
    assert.equal(refused.status(), 400);
    await page.getByRole('alert').waitFor();
    await visit('delete-mismatch');
    assert.equal((await me(apiToken)).status, 200, 'nothing was deleted');

    await page.getByLabel(/Type your email/).fill(alice.email);
    const deleted = await navigate(() => page.getByRole('button', { name: 'Delete all my data' }).click());
    assert.equal(deleted.status(), 200);
    assert.equal(await h1(), 'Your data is deleted');
    assert.match(await page.locator('main').innerText(), /Goodbye/);
    await visit('deleted');

    // Every token of hers stops working: the dashboard's, the assistant's,
    // and the one the demo issued.
    for (const [name, token] of [['dashboard token', apiToken], ['device-flow token', deviceToken], ['demo token', alice.token]]) {
      const reply = await query(token, { query: 'checkout timeouts' });
      assert.equal(reply.status, 401, `${name}: ${reply.text}`);
    }
    // Signed out, and the password is gone with the account.
    await navigate(() => page.goto(`${origin}/dashboard/tools`));
    assert.equal(new URL(page.url()).pathname, '/dashboard/login');
    await page.getByLabel('Email').fill(alice.email);
    await page.getByLabel('Password').fill(alice.password);
    const again = await navigate(() => page.getByRole('button', { name: 'Sign in' }).click());
    assert.equal(again.status(), 401);
    await visit('sign-in-after-deletion');
    // Bob is untouched.
    const bob = demo.users.find((u) => u.email === 'bob@acme.test');
    assert.equal((await me(bob.token)).status, 200);
  });

  await step(t, 'bob signs in with Okta (single sign-on)', async () => {
    await navigate(() => page.goto(`${origin}/dashboard/login`));
    await navigate(() => page.getByRole('link', { name: 'Sign in with Okta' }).click());
    assert.equal(new URL(page.url()).origin, fakeOrigin, 'at the identity provider');
    assert.equal(await h1(), 'Sign in to acme');
    await visit('sso-identity-provider');
    const landed = await navigate(() => page.getByRole('link', { name: /bob@acme\.test/ }).click());
    assert.equal(landed.status(), 200);
    assert.equal(new URL(page.url()).pathname, '/dashboard/tools');
    assert.ok((await page.locator('header').innerText()).includes('bob@acme.test'));
    const cookies = await page.context().cookies(origin);
    assert.ok(cookies.some((c) => c.name === '__Host-quarry_session'), 'a session');
    assert.ok(!cookies.some((c) => c.name === '__Host-quarry_sso'), 'the flow cookie is gone');
    await visit('sso-signed-in');
  });
});
