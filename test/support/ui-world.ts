/**
 * The world of the browser tests: per store a redstate with the UI test services
 * (services/ui.mjs) registered, a second endpoint (services/basic.mjs) left for the tests to
 * register from the UI, and one Chromium for all of them.
 */
import type { ExecutionContext, TestFn } from 'ava';
import type { Page } from 'playwright-core';
import { startBrowser, type TestBrowser } from './browser.js';
import { startService, type StartedService } from './sdk-service.js';
import { startStack, storeKinds, type Stack, type StoreKind } from './stack.js';

export interface UiStore {
  stack: Stack;
  /** An endpoint nobody registered yet. */
  unregistered: StartedService;
}

export interface UiWorld {
  stores: Record<StoreKind, UiStore>;
  browser: TestBrowser;
}

export function uiWorld(test: TestFn<UiWorld>): void {
  test.before(async (t) => {
    const [stacks, extras, browser] = await Promise.all([
      Promise.all(storeKinds.map((k) => startStack(k, { serviceFile: 'ui.mjs' }))),
      Promise.all(storeKinds.map(() => startService('basic.mjs'))),
      startBrowser(),
    ]);
    t.context = {
      browser,
      stores: Object.fromEntries(
        storeKinds.map((k, i) => [k, { stack: stacks[i]!, unregistered: extras[i]! }]),
      ) as Record<StoreKind, UiStore>,
    };
  });
  test.after.always(async (t) => {
    await t.context.browser?.close();
    await Promise.all(Object.values(t.context.stores ?? {}).flatMap((s) => [s.stack.stop(), s.unregistered.stop()]));
  });
}

/**
 * A page of the UI on this store's server; uncaught errors in the page fail the test.
 * `initScript` runs in the page before any of its own scripts; `clockAt` fakes its clock.
 */
export async function openPage(
  t: ExecutionContext<UiWorld>,
  store: StoreKind,
  path: string,
  opts: { colorScheme?: 'light' | 'dark'; initScript?: string; clockAt?: number } = {},
): Promise<Page> {
  // A faked clock is its context's: such a page gets a context of its own.
  const page = await t.context.browser.page({ ...opts, ownContext: opts.clockAt !== undefined });
  if (opts.initScript) await page.addInitScript(opts.initScript);
  // The page's clock starts there (playwright's fake timers), for tests of relative times.
  if (opts.clockAt !== undefined) await page.clock.install({ time: opts.clockAt });
  const fail = (err: Error) => t.fail(`error in the page: ${err.message}`);
  page.on('pageerror', fail);
  t.teardown(async () => {
    page.off('pageerror', fail);
    await page.close();
  });
  await page.goto(`${t.context.stores[store].stack.server.admin}${path}`);
  return page;
}

export async function screenshot(t: ExecutionContext<UiWorld>, page: Page, name: string): Promise<void> {
  // Let live reloads and transitions settle, so the picture shows what a person would see.
  await page.waitForTimeout(300);
  t.log(await t.context.browser.screenshot(page, name));
}
