/**
 * A real browser for the UI tests: Debian's Chromium driven by playwright-core (no browser
 * download), headless, with a fresh profile, and with the background services that would
 * try to reach the internet turned off. Screenshots go to test-output/ (not committed), for a
 * person to look at.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
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
  /** A new tab, with `colorScheme` as the system's preference. */
  page(opts?: { colorScheme?: 'light' | 'dark' }): Promise<Page>;
  /** Saves a full-page screenshot as test-output/<name>.png; returns its path. */
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

export async function startBrowser(): Promise<TestBrowser> {
  const profile = await mkdtemp(path.join(tmpdir(), 'redstate-chromium-'));
  // A persistent context is how playwright takes a --user-data-dir: a fresh one per run.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    viewport: { width: 1440, height: 900 },
  });
  const outDir = path.join(projectRoot(), 'test-output');
  await mkdir(outDir, { recursive: true });
  return {
    async page(opts = {}) {
      const page = await context.newPage();
      await page.emulateMedia({ colorScheme: opts.colorScheme ?? 'light' });
      return page;
    },
    async screenshot(page, name) {
      const file = path.join(outDir, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
