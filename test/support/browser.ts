import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium (apt-get install chromium); CHROMIUM_PATH names another. Nothing is downloaded. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** where the browser tests leave their screenshots (git-ignored) */
export const ARTIFACTS = resolve(__dirname, '../../test-artifacts/ui');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`);
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/**
 * What the page said went wrong: script errors, and console errors such as a Content-Security-Policy
 * refusal. The browser's own line for an API answer the page expects (a 404 for an action without a
 * decision, the 401 of a refused sign-in) is not a fault of the page.
 */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (/^Failed to load resource: the server responded with a status of (400|401|404)\b/.test(m.text())) return;
    errors.push(`console: ${m.text()}`);
  });
  return errors;
}

export const screenshot = (page: Page, name: string, fullPage = true) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage });
