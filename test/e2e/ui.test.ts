/**
 * The web UI in a real browser (Debian's Chromium through playwright-core), against the real
 * server with real SDK services, on both stores. Each test saves screenshots under
 * test-output/ for a person to look at.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import type { Page } from 'playwright-core';
import { sqlRows, storeKinds } from '../support/stack.js';
import { resolveAwakeable, sendTo as send } from '../support/context.js';
import { openPage, screenshot, uiWorld, type UiWorld } from '../support/ui-world.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<UiWorld>;

/** No page shows an error box where all went well (a query /query refused, say). */
async function noErrorShown(t: ExecutionContext<UiWorld>, page: Page): Promise<void> {
  t.deepEqual(await page.locator('.error').allInnerTexts(), [], `errors shown on ${page.url()}`);
}
uiWorld(test);

const TIMEOUT = { timeout: 20_000 };

/**
 * Runs in the page before its own scripts: records every value the invocation diagram's
 * current state takes, from its first render on. A reload would lose the record.
 */
const RECORD_STATES = `
window.seenStates = [];
new MutationObserver(() => {
  const current = document.querySelector('#machine svg.diagram')?.getAttribute('data-current');
  if (current && window.seenStates.at(-1) !== current) window.seenStates.push(current);
}).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-current'] });
`;
for (const store of storeKinds) {
  test.serial(`${store}: every page opens, with what it is about`, async (t) => {
    const { stack } = t.context.stores[store];
    const done = await send(stack, 'Walker/hello', 'Ada');
    await stack.ingress.post('restate/call/Tally/pages/add', { json: 2 });
    await send(stack, 'Approval/wf-pages/run', 'holiday');
    await waitFor(async () => (await sqlRows(stack.admin, `SELECT status FROM sys_invocation WHERE id = '${done}'`))[0]?.status === 'completed', 15_000);

    const page = await openPage(t, store, '/');
    await page.waitForSelector('a.stat[data-status="succeeded"] .n:not(:text("…"))', TIMEOUT);
    t.regex(await page.locator('h1').innerText(), /Overview/);
    await page.waitForSelector('svg.chart rect.ok', TIMEOUT);
    await noErrorShown(t, page);
    await screenshot(t, page, `ui-${store}-overview`);

    await page.click('nav >> text=Invocations');
    await page.waitForSelector(`tr[data-id="${done}"]`, TIMEOUT);
    await noErrorShown(t, page);
    await screenshot(t, page, `ui-${store}-invocations`);
    // Filters live in the address: a time range that holds the call, and one that does not.
    const hourAgo = Date.now() - 3_600_000;
    await page.goto(`${stack.server.admin}/ui/invocations?service=Walker&from=${hourAgo}`);
    await page.waitForSelector(`tr[data-id="${done}"]`, TIMEOUT);
    await page.goto(`${stack.server.admin}/ui/invocations?service=Walker&to=${hourAgo}`);
    await page.waitForSelector('text=No invocations match.', TIMEOUT);
    await noErrorShown(t, page);

    await page.click('nav >> text=Services');
    await page.waitForSelector('td >> text=Walker', TIMEOUT);
    await screenshot(t, page, `ui-${store}-services`);
    await page.click('a >> text=Tally');
    await page.waitForSelector('#handler-add', TIMEOUT);
    t.regex(await page.locator('#handler-add').innerText(), /exclusive/i);
    await screenshot(t, page, `ui-${store}-service`);

    await page.click('nav >> text=Deployments');
    await page.waitForSelector('td >> text=Walker', TIMEOUT);
    await screenshot(t, page, `ui-${store}-deployments`);

    await page.goto(`${stack.server.admin}/ui/objects/Approval/wf-pages`);
    await page.waitForSelector('#promises >> text=decision', TIMEOUT);
    await screenshot(t, page, `ui-${store}-workflow`);

    await page.click('nav >> text=SQL console');
    await page.fill('textarea[name=sql]', "SELECT target, status FROM sys_invocation WHERE target LIKE 'Walker/%'");
    await page.click('button >> text=Run');
    await page.waitForSelector('td >> text=Walker/hello', TIMEOUT);
    await noErrorShown(t, page);
    await screenshot(t, page, `ui-${store}-sql`);

    // A failed attempt: the last failure with its stack trace, and the retries on the path.
    const stumbled = await send(stack, 'Walker/stumble', `${store}-pages`);
    await page.goto(`${stack.server.admin}/ui/invocations/${stumbled}`);
    await page.waitForSelector('#path >> text=complete', TIMEOUT);
    // The failure card reloads a moment after the path moved on.
    await page.waitForSelector('#failure >> text=stumbled on attempt 2', TIMEOUT);
    t.regex(await page.locator('#failure').innerText(), /Stack trace/);
    t.regex(await page.locator('#path').innerText(), /attemptFailed[\s\S]*backingOff[\s\S]*timerDue/);
    await screenshot(t, page, `ui-${store}-invocation-retried`);

    // A deep link opens its page directly, here in the dark theme.
    const dark = await openPage(t, store, `/ui/invocations/${done}`, { colorScheme: 'dark' });
    await dark.waitForSelector('#journal >> text=Output', TIMEOUT);
    await dark.waitForSelector('#machine svg.diagram[data-current="completed"]', TIMEOUT);
    t.regex(await dark.locator('#journal').innerText(), /hello Ada/);
    await screenshot(t, dark, `ui-${store}-invocation-dark`);
  });

  test.serial(`${store}: a deployment is registered from the form, and a discovery error is shown`, async (t) => {
    const { unregistered } = t.context.stores[store];
    const page = await openPage(t, store, '/ui/deployments');
    const form = page.locator('form[aria-label="register a deployment"]');
    await form.locator('input[name=uri]').fill('http://127.0.0.1:1/');
    await form.locator('button[type=submit]').click();
    await form.locator('[role=alert]').waitFor(TIMEOUT);
    t.regex(await form.locator('[role=alert]').innerText(), /META0003|discover|connect/i);
    await screenshot(t, page, `ui-${store}-deployment-error`);

    await form.locator('input[name=uri]').fill(unregistered.url);
    await form.locator('button[type=submit]').click();
    await page.waitForSelector('td >> text=Greeter', TIMEOUT);
    t.regex(await form.innerText(), /Registered dp_/);
    await screenshot(t, page, `ui-${store}-deployment-registered`);
  });

  test.serial(`${store}: a handler is called from the playground`, async (t) => {
    const page = await openPage(t, store, '/ui/services/Tally');
    const playground = page.locator('form[aria-label="playground add"]');
    await playground.locator('input[name=key]').fill('playground');
    await playground.locator('textarea[name=body]').fill('5');
    await playground.locator('button[type=submit]').click();
    const answer = playground.locator('[aria-label=answer]');
    await answer.waitFor(TIMEOUT);
    t.regex(await answer.innerText(), /200[\s\S]*\b5\b/);
    const link = answer.locator('a[href^="/ui/invocations/inv_"]');
    await link.waitFor(TIMEOUT);
    await screenshot(t, page, `ui-${store}-playground`);
    await link.click();
    await page.waitForSelector('#journal >> text=Output', TIMEOUT);
    await page.waitForSelector('#machine svg.diagram[data-current="completed"]', TIMEOUT);
  });

  test.serial(`${store}: an invocation moves running → suspended → running → completed on the diagram, without a reload`, async (t) => {
    const { stack } = t.context.stores[store];
    const tag = `${store}-walk`;
    const id = await send(stack, 'Walker/walk', tag);
    const page = await openPage(t, store, `/ui/invocations/${id}`, { initScript: RECORD_STATES });
    await page.waitForSelector('#machine svg.diagram[data-current="suspended"]', TIMEOUT);
    await screenshot(t, page, `ui-${store}-invocation-suspended`);
    await resolveAwakeable(stack, tag, 'go');
    await page.waitForSelector('#machine svg.diagram[data-current="completed"]', TIMEOUT);

    const seen = (await page.evaluate('window.seenStates')) as string[] | undefined;
    t.deepEqual(seen, ['running', 'suspended', 'running', 'completed'], 'seen live, in one page load');

    const path = page.locator('#path ol.timeline > li');
    await waitFor(async () => (await path.count()) === 4, 10_000);
    t.regex(await path.nth(1).innerText(), /running\s*—suspend→\s*suspended/);
    t.regex(await path.nth(2).innerText(), /suspended\s*—wake→\s*running/);
    t.regex(await path.nth(3).innerText(), /running\s*—complete→\s*completed/);
    await page.waitForSelector('#journal >> text=Output', TIMEOUT);
    const journal = await page.locator('#journal').innerText();
    // The awakeable's completion is a signal notification (protocol v4+).
    for (const entry of ['Input', 'Signal', 'Sleep', 'Output', `walked ${tag} with go`]) t.true(journal.includes(entry), entry);
    await screenshot(t, page, `ui-${store}-invocation-completed`);

    // Stepping back along the path shows where it was then.
    await page.locator('#path input[type=range]').fill('2');
    await page.waitForSelector('#machine svg.diagram[data-current="suspended"]', TIMEOUT);
    t.regex(await page.locator('#path').innerText(), /step 2 of 4/);
    await screenshot(t, page, `ui-${store}-invocation-step-back`);
  });

  test.serial(`${store}: cancel from the invocation page, kill from the table`, async (t) => {
    const { stack } = t.context.stores[store];
    const [cancelled, killed] = await Promise.all([send(stack, 'Walker/wait', `${store}-cancel`), send(stack, 'Walker/wait', `${store}-kill`)]);

    const page = await openPage(t, store, `/ui/invocations/${cancelled}`);
    await page.waitForSelector('#machine svg.diagram[data-current="suspended"]', TIMEOUT);
    await page.click('[aria-label=actions] button >> text=Cancel');
    await screenshot(t, page, `ui-${store}-cancel-confirm`);
    await page.click('dialog[open] button.primary');
    await page.waitForSelector('#machine svg.diagram[data-current="completed"]', TIMEOUT);
    await page.waitForSelector('.page-head .badge >> text=failed', TIMEOUT);
    await page.waitForSelector('#failure >> text=/cancel/i', TIMEOUT);
    await screenshot(t, page, `ui-${store}-cancelled`);

    await page.goto(`${stack.server.admin}/ui/invocations?service=Walker&handler=wait&status=suspended`);
    const row = page.locator(`tr[data-id="${killed}"]`);
    await row.waitFor(TIMEOUT);
    await row.locator('input[type=checkbox]').check();
    await page.click('.card button >> text=Kill');
    await page.click('dialog[open] button.primary');
    await row.waitFor({ state: 'detached', ...TIMEOUT });
    const [status] = await sqlRows(stack.admin, `SELECT status, completion_failure FROM sys_invocation WHERE id = '${killed}'`);
    t.is(status?.status, 'completed');
    t.regex(String(status?.completion_failure), /killed/);
    await page.goto(`${stack.server.admin}/ui/invocations/${killed}`);
    await page.waitForSelector('#path >> text=kill', TIMEOUT);
    await screenshot(t, page, `ui-${store}-killed`);
  });

  test.serial(`${store}: object state is edited through the admin state API`, async (t) => {
    const { stack } = t.context.stores[store];
    await stack.ingress.post('restate/call/Tally/edit-me/add', { json: 3 });
    const page = await openPage(t, store, '/ui/objects/Tally/edit-me');
    await page.waitForSelector('#state tr[data-key="count"] >> text=3', TIMEOUT);
    t.is(await page.locator('#lock svg.diagram').getAttribute('data-current'), 'free');
    await page.click('#state button >> text=Edit');
    await page.fill('#state textarea[aria-label="value of count"]', '42');
    await screenshot(t, page, `ui-${store}-state-editing`);
    await page.click('#state button >> text=Save state');
    await page.waitForSelector('#state tr[data-key="count"] >> text=42', TIMEOUT);
    const got = await stack.ingress.post('restate/call/Tally/edit-me/get', { json: null });
    t.is(got.body, '42');
    await screenshot(t, page, `ui-${store}-state-saved`);
  });
}
