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
  const current = document.querySelector('#path')?.getAttribute('data-current');
  if (current && window.seenStates.at(-1) !== current) window.seenStates.push(current);
}).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-current'] });
`;
for (const store of storeKinds) {
  test.serial(`${store}: every page opens, with what it is about`, async (t) => {
    const { stack } = t.context.stores[store];
    const done = await send(stack, 'Walker/hello', 'Ada');
    await stack.ingress.post('restate/call/Tally/pages/add', { json: 2 });
    await send(stack, 'Approval/wf-pages/run', 'holiday');
    await waitFor(
      async () =>
        (await sqlRows(stack.admin, `SELECT status FROM sys_invocation WHERE id = '${done}'`))[0]?.status ===
        'completed',
      15_000,
    );

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
    // A first row with a NULL in the middle: the columns still come in the SELECT's order.
    await page.fill(
      'textarea[name=sql]',
      "SELECT target, CAST(NULL AS VARCHAR) AS nothing, status FROM sys_invocation WHERE target LIKE 'Walker/%'",
    );
    await page.click('button >> text=Run');
    await page.waitForSelector('td >> text=Walker/hello', TIMEOUT);
    t.deepEqual(await page.locator('th').allInnerTexts(), ['target', 'nothing', 'status']);
    await noErrorShown(t, page);
    await screenshot(t, page, `ui-${store}-sql`);

    // A failed attempt: the last failure with its stack trace, and the retries on the path.
    const stumbled = await send(stack, 'Walker/stumble', `${store}-pages`);
    await page.goto(`${stack.server.admin}/ui/invocations/${stumbled}`);
    await page.waitForSelector('#path[data-current="completed"]', TIMEOUT);
    // Every attempt's failure, newest first, each with its stack trace.
    await page.waitForSelector('#failure li[data-attempt="1"] >> text=stumbled on attempt 1', TIMEOUT);
    t.regex(await page.locator('#failure li[data-attempt="2"]').innerText(), /stumbled on attempt 2[\s\S]*Stack trace/);
    // The path in words: two rounds of failing and retrying, folded into one step.
    t.regex(
      await page.locator('#path .path-strip').innerText(),
      /attempt failed[\s\S]*running ⇄ backing-off\s*×2[\s\S]*returned[\s\S]*completed/,
    );
    // The invocations list counts the same retries as the page (sys_invocation has none once completed).
    t.is(await page.locator('#details dd').nth(4).innerText(), '2');
    await screenshot(t, page, `ui-${store}-invocation-retried`);
    await page.goto(`${stack.server.admin}/ui/invocations?id=${stumbled}`);
    await page.waitForSelector(`tr[data-id="${stumbled}"]`, TIMEOUT);
    t.is(await page.locator(`tr[data-id="${stumbled}"] td`).last().innerText(), '2');

    // A deep link opens its page directly, here in the dark theme.
    const dark = await openPage(t, store, `/ui/invocations/${done}`, { colorScheme: 'dark' });
    await dark.waitForSelector('#journal >> text=Output', TIMEOUT);
    await dark.waitForSelector('#path[data-current="completed"]', TIMEOUT);
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
    await page.waitForSelector('#path[data-current="completed"]', TIMEOUT);
  });

  test.serial(
    `${store}: an invocation moves running → suspended → running → completed on the diagram, without a reload`,
    async (t) => {
      const { stack } = t.context.stores[store];
      const tag = `${store}-walk`;
      const id = await send(stack, 'Walker/walk', tag);
      const page = await openPage(t, store, `/ui/invocations/${id}?machine=full`, { initScript: RECORD_STATES });
      await page.waitForSelector('#path[data-current="suspended"]', TIMEOUT);
      t.is(await page.locator('#machine svg.diagram').getAttribute('data-current'), 'suspended');
      await screenshot(t, page, `ui-${store}-invocation-suspended`);
      await resolveAwakeable(stack, tag, 'go');
      await page.waitForSelector('#path[data-current="completed"]', TIMEOUT);

      const seen = (await page.evaluate('window.seenStates')) as string[] | undefined;
      t.deepEqual(seen, ['running', 'suspended', 'running', 'completed'], 'seen live, in one page load');

      // The path in words a Restate user knows, compact and in the full list.
      const steps = page.locator('#path .path-strip > li');
      await waitFor(async () => (await steps.count()) === 4, 10_000);
      t.deepEqual(await steps.evaluateAll((els) => els.map((e) => e.getAttribute('data-event'))), [
        'xstate.init',
        'suspend',
        'wake',
        'complete',
      ]);
      t.regex(await steps.nth(2).innerText(), /woken up[\s\S]*running/);
      const path = page.locator('#path ol.path-list > li');
      t.regex(await path.nth(1).innerText(), /running\s*—suspended→\s*suspended/);
      t.regex(await path.nth(2).innerText(), /suspended\s*—woken up→\s*running/);
      t.regex(await path.nth(3).innerText(), /running\s*—returned→\s*completed/);
      // The machine's own names stay on the diagram's tooltips.
      t.true((await page.locator('#machine svg.diagram g.edge title').allTextContents()).includes('suspend'));
      await page.waitForSelector('#journal >> text=Output', TIMEOUT);
      const journal = await page.locator('#journal').innerText();
      // The awakeable's completion is a signal notification (protocol v4+).
      for (const entry of ['Input', 'Signal', 'an awakeable', 'Sleep', 'Output', `walked ${tag} with go`])
        t.true(journal.includes(entry), entry);
      await screenshot(t, page, `ui-${store}-invocation-completed`);

      // Stepping back along the path shows where it was then.
      await page.locator('#path input[type=range]').fill('2');
      await page.waitForSelector('#path[data-current="suspended"]', TIMEOUT);
      t.is(await page.locator('#machine svg.diagram').getAttribute('data-current'), 'suspended');
      t.regex(await page.locator('#path').innerText(), /step 2 of 4/);
      await screenshot(t, page, `ui-${store}-invocation-step-back`);
    },
  );

  test.serial(`${store}: cancel from the invocation page, kill from the table`, async (t) => {
    const { stack } = t.context.stores[store];
    const [cancelled, killed] = await Promise.all([
      send(stack, 'Walker/wait', `${store}-cancel`),
      send(stack, 'Walker/wait', `${store}-kill`),
    ]);

    const page = await openPage(t, store, `/ui/invocations/${cancelled}`);
    await page.waitForSelector('#path[data-current="suspended"]', TIMEOUT);
    await page.click('[aria-label=actions] button >> text=Cancel');
    await screenshot(t, page, `ui-${store}-cancel-confirm`);
    await page.click('dialog[open] button.primary');
    await page.waitForSelector('#path[data-current="completed"]', TIMEOUT);
    // An operator's cancel is not the handler failing: shown apart, in a neutral colour.
    await page.waitForSelector('.page-head .badge.s-cancelled >> text=cancelled', TIMEOUT);
    await page.waitForSelector('#failure h2 >> text=Cancelled', TIMEOUT);
    await screenshot(t, page, `ui-${store}-cancelled`);

    await page.goto(`${stack.server.admin}/ui/invocations?service=Walker&handler=wait&status=suspended`);
    const row = page.locator(`tr[data-id="${killed}"]`);
    await row.waitFor(TIMEOUT);
    await row.locator('input[type=checkbox]').check();
    await page.click('.card button >> text=Kill');
    await page.click('dialog[open] button.primary');
    await row.waitFor({ state: 'detached', ...TIMEOUT });
    const [status] = await sqlRows(
      stack.admin,
      `SELECT status, completion_failure FROM sys_invocation WHERE id = '${killed}'`,
    );
    t.is(status?.status, 'completed');
    t.regex(String(status?.completion_failure), /killed/);
    await page.goto(`${stack.server.admin}/ui/invocations/${killed}`);
    await page.waitForSelector('#path .path-strip >> text=killed', TIMEOUT);
    await page.waitForSelector('.page-head .badge.s-killed', TIMEOUT);
    await page.goto(`${stack.server.admin}/ui/invocations?service=Walker&handler=wait&status=killed`);
    await page.waitForSelector(`tr[data-id="${killed}"] .badge >> text=killed`, TIMEOUT);
    t.is(await page.locator(`tr[data-id="${cancelled}"]`).count(), 0, 'the cancelled one is not listed as killed');
    await screenshot(t, page, `ui-${store}-killed`);
  });

  test.serial(`${store}: object state is edited through the admin state API`, async (t) => {
    const { stack } = t.context.stores[store];
    await stack.ingress.post('restate/call/Tally/edit-me/add', { json: 3 });
    const page = await openPage(t, store, '/ui/objects/Tally/edit-me');
    await page.waitForSelector('#lock svg.diagram[data-current="free"]', TIMEOUT);
    await page.waitForSelector('#state tr[data-key="count"] >> text=3', TIMEOUT);
    const lock = page.locator('#lock svg.diagram');
    t.is(await lock.getAttribute('data-current'), 'free');
    // A free key is not an alarm: the current state takes the "ok" tone; two states take little room.
    t.regex((await lock.getAttribute('class')) ?? '', /tone-ok/);
    t.true(((await lock.boundingBox())?.height ?? 1000) < 300, 'the lock diagram is small');
    await page.click('#state button >> text=Edit');
    const box = page.locator('#state textarea[aria-label="value of count"]');
    t.true(((await box.boundingBox())?.width ?? 0) > 300, 'the value box is wide enough for JSON');
    await page.fill('#state textarea[aria-label="value of count"]', '42');
    await screenshot(t, page, `ui-${store}-state-editing`);
    await page.click('#state button >> text=Save state');
    await page.waitForSelector('#state tr[data-key="count"] >> text=42', TIMEOUT);
    const got = await stack.ingress.post('restate/call/Tally/edit-me/get', { json: null });
    t.is(got.body, '42');
    await screenshot(t, page, `ui-${store}-state-saved`);
  });
}

for (const store of storeKinds) {
  test.serial(
    `${store}: relative times keep counting, a unit at a time ("2 min 59 s", then "3 min 0 s")`,
    async (t) => {
      const { stack } = t.context.stores[store];
      const id = await send(stack, 'Walker/hello', 'clock');
      await waitFor(
        async () =>
          (await sqlRows(stack.admin, `SELECT status FROM sys_invocation WHERE id = '${id}'`))[0]?.status ===
          'completed',
        15_000,
      );
      const [row] = await sqlRows(stack.admin, `SELECT created_at FROM sys_invocation WHERE id = '${id}'`);
      const createdAt = Date.parse(String(row?.created_at));
      const page = await openPage(t, store, `/ui/invocations/${id}`, { clockAt: createdAt + 170_000 });
      const created = page.locator('#details dd').nth(2);
      await page.waitForSelector('#details', TIMEOUT);
      await page.clock.pauseAt(createdAt + 179_600);
      t.regex(await created.innerText(), /\(2 min 59 s ago\)/);
      await page.clock.runFor(1000);
      t.regex(await created.innerText(), /\(3 min 0 s ago\)/);
      await screenshot(t, page, `ui-${store}-relative-time`);
    },
  );

  test.serial(`${store}: closing tabs leaves the server's log one JSON object a line`, async (t) => {
    const { stack } = t.context.stores[store];
    const before = stack.server.output().length;
    for (const path of ['/ui/', '/ui/invocations', '/ui/waiting']) {
      const page = await t.context.browser.page();
      await page.goto(`${stack.server.admin}${path}`);
      await page.waitForSelector('.live-dot.on', TIMEOUT);
      await page.close();
    }
    await new Promise((r) => setTimeout(r, 500));
    const written = stack.server.output().slice(before);
    t.false(written.includes('ERR_STREAM_PREMATURE_CLOSE'), written);
    for (const line of written.split('\n').filter((l) => l.trim() !== '')) t.notThrows(() => JSON.parse(line), line);
  });
}
