// The API reference page (/v1/docs, Swagger UI served from the binary) in
// Debian's headless Chromium, driven by Playwright, against the running
// `quarry demo` that tools/browser-tests starts (its first stdout line is
// QUARRY_DEMO_LINE).
//
// The page renders the description's Markdown (the info description's
// "## Authentication" becomes a heading), breaks none of its strict CSP
// (no violation, no console error), and "Try it out" sends GET /v1/me to
// this server with the bearer token typed into "Authorize". Full-page
// screenshots: QUARRY_SCREENSHOT_DIR/api-reference*.png.
//
// TLS: the browser trusts the demo's CA by its public key
// (--ignore-certificate-errors-spki-list), not every certificate.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { demo, launch, shotsDir } from './chromium.mjs';

const origin = new URL(demo.dashboard_url).origin;
// Not alice: the dashboard's visit deletes her account.
const bob = demo.users.find((u) => u.email.startsWith('bob@'));

let browser;
let page;
/** Console errors, script errors and CSP violations, as they happen. */
const problems = [];

async function screenshot(name) {
  fs.mkdirSync(shotsDir, { recursive: true });
  const file = path.join(shotsDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** The CSP violations the page has reported (securitypolicyviolation events). */
const violations = () => page.evaluate(() => window.cspViolations);

test.before(async () => {
  ({ browser, page } = await launch([fs.readFileSync(demo.ca_cert)]));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`script: ${error}`));
  // Added by the browser's debugging protocol, which the CSP does not govern.
  await page.addInitScript(() => {
    window.cspViolations = [];
    document.addEventListener('securitypolicyviolation', (event) => {
      window.cspViolations.push(`${event.violatedDirective}: ${event.blockedURI || 'inline'}`);
    });
  });
});

test.after(async () => {
  await browser?.close();
});

test('the API reference page renders the description under its CSP', async () => {
  const response = await page.goto(`${origin}/v1/docs`);
  assert.equal(response.status(), 200);
  const csp = response.headers()['content-security-policy'];
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-|https?:/);

  // "## Authentication" in info.description, rendered as a heading.
  const heading = page.getByRole('heading', { name: 'Authentication', exact: true });
  await heading.waitFor();
  assert.equal(await heading.evaluate((h) => h.tagName), 'H2');
  assert.ok(!(await page.locator('body').innerText()).includes('## Authentication'), 'no raw Markdown');
  // Every operation is listed on the page itself, not in a scroll box.
  await page.locator('#operations-Account-getMe').waitFor();
  const file = await screenshot('api-reference');

  assert.deepEqual(await violations(), [], `CSP violations (${file})`);
  assert.deepEqual(problems, [], `console errors (${file})`);
});

test('"Try it out" sends GET /v1/me with the bearer token from "Authorize"', async () => {
  assert.ok(bob, 'the demo has bob');
  await page.locator('.auth-wrapper button.authorize').click();
  const dialog = page.locator('.modal-ux');
  await dialog.locator('#auth-bearer-value').fill(bob.token);
  await dialog.getByRole('button', { name: 'Apply credentials' }).click();
  await dialog.getByRole('button', { name: 'Remove authorization' }).waitFor();
  await dialog.getByRole('button', { name: 'Close' }).click();

  const operation = page.locator('#operations-Account-getMe');
  await operation.locator('.opblock-summary-control').click();
  await operation.getByRole('button', { name: 'Try it out' }).click();
  const [sent] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${origin}/v1/me`),
    operation.getByRole('button', { name: 'Execute' }).click(),
  ]);
  assert.equal(sent.status(), 200);
  assert.equal(sent.request().headers().authorization, `Bearer ${bob.token}`);

  // The answer, shown on the page.
  const shown = operation.locator('.live-responses-table .response');
  await shown.waitFor();
  assert.equal((await shown.locator('.response-col_status').first().innerText()).trim(), '200');
  assert.ok((await shown.innerText()).includes(bob.email), 'the response body names bob');
  const file = await screenshot('api-reference-try-it');

  assert.deepEqual(await violations(), [], `CSP violations (${file})`);
  assert.deepEqual(problems, [], `console errors (${file})`);
});
