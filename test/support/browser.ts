/**
 * A real browser for the UI tests: Debian's Chromium driven by playwright-core (no browser
 * download), headless, with a fresh profile (playwright makes a temporary one per launch), and
 * with the background services that would try to reach the internet turned off. Screenshots
 * go to test-output/ (not committed), for a person to look at.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type BrowserContextOptions, type Page } from 'playwright-core';
import { projectRoot } from '../../src/project-root.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  /**
   * A new tab, with `colorScheme` as the system's preference. `ownContext`: in a context of its
   * own, for what is context-wide in playwright, such as a faked clock.
   */
  page(opts?: { colorScheme?: 'light' | 'dark'; ownContext?: boolean }): Promise<Page>;
  /** Saves a full-page screenshot as test-output/<name>.png; returns its path. */
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

export async function startBrowser(): Promise<TestBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  const options: BrowserContextOptions = { viewport: { width: 1440, height: 900 } };
  const shared = await browser.newContext(options);
  const outDir = path.join(projectRoot(), 'test-output');
  await mkdir(outDir, { recursive: true });
  return {
    async page(opts = {}) {
      const context = opts.ownContext ? await browser.newContext(options) : shared;
      const page = await context.newPage();
      if (opts.ownContext) page.once('close', () => void context.close());
      await page.emulateMedia({ colorScheme: opts.colorScheme ?? 'light' });
      return page;
    },
    async screenshot(page, name) {
      const file = path.join(outDir, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      await browser.close();
    },
  };
}
