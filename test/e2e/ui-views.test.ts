/**
 * The UI's views beyond the basic pages, in a real browser against the real server with real
 * SDK services, on both stores (issue 27): the journal timeline with calls named and linked,
 * a request's whole tree, the JSON export, every attempt's failure, retry now, the path
 * following live, the invocations list's retries and durations, per-handler health, what is
 * waiting on what, keys, runs and state across keys, and the service settings editor. Each
 * test saves screenshots under test-output/.
 */
import { readFile } from 'node:fs/promises';
import anyTest, { type TestFn } from 'ava';
import { resolveAwakeable, sendTo as send } from '../support/context.js';
import { sqlRows, storeKinds, type Stack } from '../support/stack.js';
import { openPage, screenshot, uiWorld, type UiWorld } from '../support/ui-world.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<UiWorld>;
uiWorld(test);

const TIMEOUT = { timeout: 20_000 };

async function column(stack: Stack, id: string, name: string): Promise<unknown> {
  return (await sqlRows(stack.admin, `SELECT ${name} FROM sys_invocation WHERE id = '${id}'`))[0]?.[name];
}

async function childrenOf(stack: Stack, id: string): Promise<Map<string, string>> {
  const rows = await sqlRows(stack.admin, `SELECT id, target FROM sys_invocation WHERE invoked_by_id = '${id}'`);
  return new Map(rows.map((r) => [String(r.target), String(r.id)]));
}

interface Exported {
  target: string;
  status: string;
  input: string;
  headers: unknown[];
  journal: Array<{ type: string; callee?: { target: string; id?: string } }>;
  path: Array<{ to: string }>;
  failures: unknown[];
}

for (const store of storeKinds) {
  test.serial(
    `${store}: an order's journal on a timeline with its calls named and linked, its request tree, its export`,
    async (t) => {
      const { stack } = t.context.stores[store];
      const res = await stack.ingress.post('restate/call/Orders/place', { json: { item: 'lamp', quantity: 3 } });
      t.is(res.body, '"shipped lamp"');
      const order = String(res.headers['x-restate-id']);
      let children = new Map<string, string>();
      await waitFor(async () => (children = await childrenOf(stack, order)).size === 2, 10_000);
      const ship = children.get('Shipping/ship')!;
      const mail = children.get('Walker/hello')!;
      const label = (await childrenOf(stack, ship)).get('Walker/hello')!;

      const page = await openPage(t, store, `/ui/invocations/${order}`);
      const call = page.locator('#journal .jt-row[data-kind="Call"] .jt-label');
      await call.waitFor(TIMEOUT);
      // The callee is named and linked; the trace ids of the request are not shown as values.
      t.regex(await call.innerText(), /calls Shipping\/ship/);
      t.is(await call.locator(`a[href="/ui/invocations/${ship}"]`).count(), 1);
      const send = page.locator('#journal .jt-row[data-kind="OneWayCall"] .jt-label');
      t.regex(await send.innerText(), /sends to Walker\/hello/);
      t.is(await send.locator(`a[href="/ui/invocations/${mail}"]`).count(), 1);
      const journal = await page.locator('#journal').innerText();
      t.false(/[\u0000\ufffd]/.test(journal), 'no undecodable bytes shown');
      for (const value of ['"lamp"', 'reserved 3 lamp', 'shipped lamp', 'mail about lamp', 'charged'])
        t.true(journal.includes(value), value);
      // Each entry on the time axis: the sleep took its 300 ms, the lifecycle says how it went.
      // (The SDK fixes the wake-up time a moment before the server journals the command.)
      const slept = await page.locator('#journal .jt-row[data-kind="Sleep"] .jt-dur').innerText();
      t.true(/^\d+ ms$/.test(slept) ? parseInt(slept, 10) >= 250 : /^\d\.\d\d s$/.test(slept), slept);
      t.regex(
        await page.locator('#journal [aria-label="lifecycle summary"]').innerText(),
        /created [\d:.]+[\s\S]*running [\d.]+ (ms|s)[\s\S]*succeeded after/,
      );
      await screenshot(t, page, `ui-${store}-timeline`);

      await page.click('#journal [role=tab] >> text=Compact');
      await page.waitForURL(/journal=compact/, TIMEOUT);
      t.is(await page.locator('#journal .jt-values').count(), 0);
      t.is(await page.locator('#journal .jt-row[data-kind="Call"]').count(), 1);
      await screenshot(t, page, `ui-${store}-timeline-compact`);

      // The whole request: this order, the call it made and the call that one made, and its send.
      const tree = page.locator('#tree');
      await tree.locator(`li[data-id="${ship}"] li[data-id="${label}"]`).waitFor(TIMEOUT);
      t.is(await tree.locator('li').count(), 4);
      t.is(await tree.locator('li.current').getAttribute('data-id'), order);
      t.is(await tree.locator(`li[data-id="${mail}"] .badge`).innerText(), 'succeeded');

      const [download] = await Promise.all([
        page.waitForEvent('download', TIMEOUT),
        page.click('button >> text=Export JSON'),
      ]);
      t.is(download.suggestedFilename(), `${order}.json`);
      const exported = JSON.parse(await readFile((await download.path())!, 'utf8')) as Exported;
      t.like(exported, { target: 'Orders/place', status: 'succeeded', failures: [] });
      t.true(exported.input.includes('"lamp"'));
      t.is(exported.journal.length, Number(await column(stack, order, 'journal_size')));
      t.deepEqual(exported.journal.find((e) => e.type === 'Command: Call')?.callee, {
        target: 'Shipping/ship',
        id: ship,
        oneWay: false,
      });
      t.is(exported.path.at(-1)?.to, 'completed');

      // From the deepest call, the tree is the same request, with that one marked.
      await page.goto(`${stack.server.admin}/ui/invocations/${label}`);
      await page.locator(`#tree .tree > li[data-id="${order}"] li.current[data-id="${label}"]`).waitFor(TIMEOUT);
      await screenshot(t, page, `ui-${store}-request-tree`);

      // The whole machine, in words, one click away; and back.
      await page.click('#path a >> text=Whole machine');
      await page.waitForURL(/machine=full/, TIMEOUT);
      const diagram = page.locator('#machine svg.diagram');
      await diagram.waitFor(TIMEOUT);
      const labels = await diagram.locator('g.edge text').allTextContents();
      for (const word of ['attempt failed', 'returned', 'suspended', 'woken up'])
        t.true(
          labels.some((l) => l.includes(word)),
          word,
        );
      t.regex((await diagram.getAttribute('class')) ?? '', /tone-ok/, 'a success is drawn in the ok tone');
      await screenshot(t, page, `ui-${store}-machine-full`);
      await page.click('#path a >> text=Path only');
      await page.waitForSelector('#machine', { state: 'detached', ...TIMEOUT });
    },
  );

  test.serial(
    `${store}: retrying forever: every attempt's failure, retry now, and the path follows live to the kill`,
    async (t) => {
      const { stack } = t.context.stores[store];
      const tag = `${store}-forever`;
      const id = await send(stack, 'Orders/forever', tag);
      const backingOffAfter = async (failures: number) =>
        waitFor(
          async () =>
            (await column(stack, id, 'status')) === 'backing-off' &&
            (
              await sqlRows(
                stack.admin,
                `SELECT COUNT(*) AS n FROM sys_invocation_transitions WHERE id = '${id}' AND event = 'attemptFailed'`,
              )
            )[0]?.n === failures,
          15_000,
        );
      await backingOffAfter(1);

      const page = await openPage(t, store, `/ui/invocations/${id}?machine=full`);
      await page.waitForSelector(`#failure li[data-attempt="1"] >> text=attempt 1 of ${tag} failed`, TIMEOUT);
      t.regex(await page.locator('#journal [aria-label="lifecycle summary"]').innerText(), /next retry in \d+/);
      await screenshot(t, page, `ui-${store}-retrying`);

      await page.click('[aria-label=actions] button >> text=Retry now');
      await page.click('dialog[open] button.primary');
      // The second failure arrives with the live change, without a reload.
      await page.waitForSelector(`#failure li[data-attempt="2"] >> text=attempt 2 of ${tag} failed`, TIMEOUT);
      t.is(await page.locator('#failure ol.attempts > li').first().getAttribute('data-attempt'), '2', 'newest first');
      await screenshot(t, page, `ui-${store}-retried-now`);

      for (let failures = 2; failures < 8; failures++) {
        await backingOffAfter(failures);
        const r = await stack.admin.patch(`invocations/${id}/resume`);
        t.is(r.statusCode, 200, r.body);
      }
      await backingOffAfter(8);
      await page.waitForSelector('#failure li[data-attempt="8"]', TIMEOUT);
      t.regex(await page.locator('#path .path-strip').innerText(), /running ⇄ backing-off\s*×7/);
      // Each failed attempt is named by its own number.
      const failed = page.locator('#path ol.path-list > li', { hasText: 'attempt failed' });
      for (let k = 0; k < 8; k++) t.regex(await failed.nth(k).innerText(), new RegExp(`attempt ${k + 1} failed`));

      await page.click('[aria-label=actions] button >> text=Pause');
      await page.click('dialog[open] button.primary');
      await page.waitForSelector('#path[data-current="paused"]', TIMEOUT);
      await page.click('[aria-label=actions] button >> text=Kill');
      await page.click('dialog[open] button.primary');
      await page.waitForSelector('#path[data-current="completed"]', TIMEOUT);
      // With the slider at the end, the list keeps its newest step (the kill) in view.
      await waitFor(
        async () =>
          page.locator('#path ol.path-list').evaluate((list) => {
            const last = list.lastElementChild!.getBoundingClientRect();
            const box = list.getBoundingClientRect();
            return (
              list.scrollHeight > list.clientHeight &&
              last.top >= box.top - 1 &&
              last.bottom <= box.bottom + 1 &&
              /killed/.test(list.lastElementChild!.textContent ?? '')
            );
          }),
        5000,
      );
      await page.waitForSelector('.page-head .badge.s-killed', TIMEOUT);
      await page.waitForSelector('#failure h2 >> text=Killed', TIMEOUT);
      // The request tree follows live too.
      await page.waitForSelector('#tree li.current .badge.s-killed', TIMEOUT);
      await screenshot(t, page, `ui-${store}-path-follows-kill`);

      // The list counts its retries as the page does, and says how long it ran.
      await page.goto(`${stack.server.admin}/ui/invocations?service=Orders&handler=forever`);
      const row = page.locator(`tr[data-id="${id}"]`);
      await row.waitFor(TIMEOUT);
      t.is(await row.locator('td').last().innerText(), '8');
      t.regex(await row.locator('td').nth(-2).innerText(), /\d+(\.\d+)? (ms|s)|min/);
      await screenshot(t, page, `ui-${store}-invocations-retries`);
    },
  );

  test.serial(
    `${store}: the overview's health per handler and the killed apart; what is waiting on what`,
    async (t) => {
      const { stack } = t.context.stores[store];
      const nap = await send(stack, 'Walker/nap', 3_600_000);
      const waiting = await send(stack, 'Walker/wait', `${store}-waits`);
      const holder = await send(stack, `Tally/${store}-queue/hold`, `${store}-queue`);
      await waitFor(async () => (await column(stack, holder, 'status')) !== 'pending', 10_000);
      const queued = await send(stack, `Tally/${store}-queue/add`, 1);
      const run = await send(stack, `Approval/${store}-wf/run`, 'trip');
      const later = (
        JSON.parse((await stack.ingress.post('restate/send/Walker/hello?delay=1h', { json: 'later' })).body) as {
          invocationId: string;
        }
      ).invocationId;
      // A suspended invocation says which awakeable it waits for (Walker suspends after 4 s).
      await waitFor(async () => (await column(stack, waiting, 'status')) === 'suspended', 15_000);

      const overview = await openPage(t, store, '/ui/');
      await overview.waitForSelector('#health tr[data-handler="Orders/place"]', TIMEOUT);
      const place = await overview.locator('#health tr[data-handler="Orders/place"] td').allInnerTexts();
      t.is(place[1], '1', 'completed');
      t.is(place[3], '0 %', 'failure rate');
      t.regex(place[4]!, /^\d+(\.\d+)? (ms|s)$/, 'p50');
      t.is(
        await overview.locator('#health tr[data-handler="Orders/forever"] td').nth(3).innerText(),
        '0 %',
        'a kill is not a failure',
      );
      await overview.waitForSelector('a.stat[data-status="killed"] .n >> text=1', TIMEOUT);
      await screenshot(t, overview, `ui-${store}-overview-health`);

      const page = await openPage(t, store, '/ui/waiting');
      const wait = (id: string, kind: string) => page.locator(`#waits tr[data-id="${id}"][data-kind="${kind}"]`);
      await wait(nap, 'timer').waitFor(TIMEOUT);
      t.regex(await wait(nap, 'timer').locator('td').nth(3).innerText(), /in 59 min/);
      await wait(waiting, 'awakeable').waitFor(TIMEOUT);
      await wait(queued, 'lock').waitFor(TIMEOUT);
      t.is(await wait(queued, 'lock').locator(`a[href="/ui/invocations/${holder}"]`).count(), 1, 'links the holder');
      await wait(run, 'promise').waitFor(TIMEOUT);
      t.regex(await wait(run, 'promise').innerText(), /durable promise “decision”/);
      await wait(later, 'start').waitFor(TIMEOUT);
      await screenshot(t, page, `ui-${store}-waiting`);
      await page.click('[aria-label=kinds] a >> text=timers');
      await page.waitForURL(/kind=timer/, TIMEOUT);
      t.deepEqual(
        [
          ...new Set(
            await page.locator('#waits tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-kind'))),
          ),
        ],
        ['timer'],
      );
      await screenshot(t, page, `ui-${store}-waiting-timers`);
      // The awakeable is resolved: it leaves the list live.
      await page.goto(`${stack.server.admin}/ui/waiting?kind=awakeable`);
      await wait(waiting, 'awakeable').waitFor(TIMEOUT);
      await resolveAwakeable(stack, `${store}-waits`, 'ok');
      await wait(waiting, 'awakeable').waitFor({ state: 'detached', ...TIMEOUT });
      await resolveAwakeable(stack, `${store}-queue`, 'ok');
    },
  );

  test.serial(`${store}: the keys of an object, the runs of a workflow, and state across keys`, async (t) => {
    const { stack } = t.context.stores[store];
    for (const [key, n] of [
      [`${store}-s1`, 4],
      [`${store}-s2`, 7],
    ] as const)
      await stack.ingress.post(`restate/call/Tally/${key}/add`, { json: n });

    const page = await openPage(t, store, '/ui/services');
    await page.click('tr:has-text("Tally") a >> text=keys');
    await page.waitForURL(/\/ui\/services\/Tally\/keys$/, TIMEOUT);
    const s1 = page.locator(`#keys tr[data-key="${store}-s1"]`);
    await s1.waitFor(TIMEOUT);
    t.regex(await s1.innerText(), /free[\s\S]*\b0\b[\s\S]*\b1\b[\s\S]*\b1\b/);
    await page.waitForSelector(`#keys tr[data-key="${store}-queue"]`, TIMEOUT);
    await screenshot(t, page, `ui-${store}-object-keys`);
    await page.fill('#keys input[name=key]', `${store}-s`);
    await page.press('#keys input[name=key]', 'Enter');
    await page.waitForURL(new RegExp(`key=${store}-s`), TIMEOUT);
    t.deepEqual(
      await page.locator('#keys tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')).sort()),
      [`${store}-s1`, `${store}-s2`],
    );

    await page.click('.page-tabs a >> text=State');
    await page.waitForURL(/\/ui\/services\/Tally\/state/, TIMEOUT);
    await page.waitForSelector(`#state-across tr[data-key="${store}-s2"] >> text=7`, TIMEOUT);
    t.deepEqual(await page.locator('#state-across th').allInnerTexts(), ['Key', 'count']);
    await screenshot(t, page, `ui-${store}-state-across-keys`);
    await page.click(`#state-across a >> text=${store}-s1`);
    await page.waitForSelector('#state tr[data-key="count"] >> text=4', TIMEOUT);

    await page.goto(`${stack.server.admin}/ui/services/Approval/keys`);
    const run = page.locator(`#keys tr[data-key="${store}-wf"]`);
    await run.waitFor(TIMEOUT);
    t.regex(await run.innerText(), /running|suspended/);
    t.regex(await run.locator('td').last().innerText(), /0 \/ \d/);
    await screenshot(t, page, `ui-${store}-workflow-runs`);
  });

  test.serial(
    `${store}: a service's settings are edited, its playground starts from the schema, the server's version is shown`,
    async (t) => {
      const { stack } = t.context.stores[store];
      const page = await openPage(t, store, '/ui/services/Orders');
      t.is(await page.locator('.sidebar .version').innerText(), 'speaks Restate 1.7.12');
      const body = page.locator('form[aria-label="playground place"] textarea[name=body]');
      await body.waitFor(TIMEOUT);
      t.deepEqual(JSON.parse(await body.inputValue()), { item: 'book', quantity: 1 });
      await page.waitForSelector('#health tr[data-handler="Orders/place"]', TIMEOUT);

      const settings = page.locator('#settings');
      await settings.locator('button >> text=Edit').click();
      await settings.locator('input[name=journal_retention]').fill('2h');
      await settings.locator('input[name=initial_interval]').fill('3s');
      await settings.locator('input[name=max_attempts]').fill('5');
      await settings.locator('select[name=on_max_attempts]').selectOption('Kill');
      await screenshot(t, page, `ui-${store}-settings-editing`);
      await settings.locator('button >> text=Save settings').click();
      await settings.locator('button >> text=Edit').waitFor(TIMEOUT);
      t.regex(await settings.innerText(), /Journal retention\s*2h[\s\S]*3s[\s\S]*5[\s\S]*kill the invocation/);
      const saved = JSON.parse((await stack.admin.get('services/Orders')).body) as {
        journal_retention: string;
        retry_policy: Record<string, unknown>;
      };
      t.is(saved.journal_retention, '2h');
      t.like(saved.retry_policy, { initial_interval: '3s', max_attempts: 5, on_max_attempts: 'Kill' });
      await screenshot(t, page, `ui-${store}-settings-saved`);

      await settings.locator('button >> text=Edit').click();
      await settings.locator('input[name=inactivity_timeout]').fill('soon');
      await settings.locator('button >> text=Save settings').click();
      await settings.locator('.error').waitFor(TIMEOUT);
      t.regex(await settings.locator('.error').innerText(), /inactivity_timeout: failed to parse/);
      await screenshot(t, page, `ui-${store}-settings-refused`);
      await settings.locator('button >> text=Discard').click();
      await stack.admin.patch('services/Orders', {
        json: {
          journal_retention: '1d',
          retry_policy: { initial_interval: '500ms', max_attempts: 70, on_max_attempts: 'Pause' },
        },
      });
    },
  );
}
