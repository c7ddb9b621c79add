// What the browser tests share: the settings tools/browser-tests passes in
// the environment, and Chromium launched as both tests need it. Not a
// test itself (tools/browser-tests runs *.spec.mjs).
//
// TLS: the browser trusts the CAs it is given by their public keys
// (--ignore-certificate-errors-spki-list), not every certificate.

import { createRequire } from 'node:module';
import { X509Certificate, createHash } from 'node:crypto';
import path from 'node:path';

export function requiredEnv(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run tools/browser-tests`);
  return value;
}

/** The running demo, as its first stdout line describes it. */
export const demo = JSON.parse(requiredEnv('QUARRY_DEMO_LINE'));
export const shotsDir = requiredEnv('QUARRY_SCREENSHOT_DIR');
const modules = requiredEnv('QUARRY_BROWSER_MODULES');
const executablePath = process.env.QUARRY_CHROMIUM || '/usr/bin/chromium';
const { chromium } = createRequire(path.join(modules, 'package.json'))('playwright-core');

/** base64 SHA-256 of a certificate's SubjectPublicKeyInfo (Chromium's SPKI pin format). */
function spkiHash(pem) {
  const spki = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

/**
 * Chromium trusting exactly the CA certificates `caPems`, and one page in
 * it with the tests' viewport, locale and timeouts: `{ browser, page }`.
 */
export async function launch(caPems) {
  const browser = await chromium.launch({
    executablePath,
    args: [
      `--ignore-certificate-errors-spki-list=${caPems.map(spkiHash).join(',')}`,
      // Playwright already turns off background networking, component
      // updates and sync (this machine's network is closed); no GPU here.
      '--disable-quic',
      '--disable-gpu',
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 }, locale: 'en-US' });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  page.setDefaultNavigationTimeout(60_000);
  return { browser, page };
}
