/**
 * The UI's Schedules page and a key's state expiry (issue 26), in Chromium against the real
 * server with the UI's SDK services, on both stores: create a schedule with a live preview of
 * its fire times (a bad cron expression shows why), watch its runs arrive linked to their
 * invocations, pause, trigger now, edit, delete; and the key page's "State expires in …".
 * Screenshots go to test-output/.
 */
import anyTest, { type TestFn } from 'ava';
import { storeKinds } from '../support/stack.js';
import { openPage, screenshot, uiWorld, type UiWorld } from '../support/ui-world.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<UiWorld>;
uiWorld(test);

const TIMEOUT = { timeout: 20_000 };

for (const store of storeKinds) {
  test.serial(
    `${store}: the Schedules page creates with a preview, lists runs with links, pauses, triggers, edits and deletes`,
    async (t) => {
      const { stack } = t.context.stores[store];
      const id = `ui-${store}`;
      const page = await openPage(t, store, '/ui/schedules');
      await page.locator('text=No schedules yet').waitFor(TIMEOUT);
      const form = page.locator('#schedule-form');
      await form.locator('input[name=id]').fill(id);
      await form.locator('input[name=service]').fill('Tally');
      await form.locator('input[name=key]').fill(id);
      await form.locator('input[name=handler]').fill('add');
      await form.locator('input[name=input]').fill('1');
      await form.locator('input[name=timezone]').fill('UTC');
      await form.locator('input[name=cron]').fill('* * * *');
      await form.locator('#schedule-preview [role=alert]').waitFor(TIMEOUT);
      t.regex(await form.locator('#schedule-preview').innerText(), /has 5 fields .* or 6/);
      await form.locator('input[name=cron]').fill('*/2 * * * * *');
      await waitFor(async () => (await form.locator('#schedule-preview .preview-time').count()) === 5, 10_000);
      const shown = await form.locator('#schedule-preview .preview-time').allInnerTexts();
      const seconds = shown.map((s) => Number(/:(\d\d)\.\d{3}/.exec(s)![1]));
      t.true(
        seconds.every((s, i) => i === 0 || (s - seconds[i - 1]! + 60) % 60 === 2),
        shown.join(' | '),
      );
      await screenshot(t, page, `ui-${store}-schedule-form`);
      await form.locator('button[type=submit]').click();

      const row = page.locator(`#schedules tr[data-id="${id}"]`);
      await row.waitFor(TIMEOUT);
      const details = page.locator('#schedule-details');
      await waitFor(async () => (await details.locator('#next-fire-times li').count()) === 5, 10_000);
      // Runs arrive live (each fire is an invocation), each linked to it.
      await waitFor(
        async () => (await details.locator('#recent-runs a[href^="/ui/invocations/inv_"]').count()) >= 2,
        20_000,
      );
      await screenshot(t, page, `ui-${store}-schedules`);

      await details.locator('button >> text=Pause').click();
      await row.locator('text=paused').waitFor(TIMEOUT);
      t.is(await details.locator('#next-fire-times').innerText(), 'paused');
      await details.locator('button >> text=Trigger now').click();
      await details.locator('#recent-runs >> text=triggered').waitFor(TIMEOUT);
      const link = details.locator('#recent-runs tr', { hasText: 'triggered' }).locator('a');
      const invocation = (await link.getAttribute('href'))!.split('/').pop()!;
      t.is((await stack.ingress.get(`restate/attach/${invocation}`)).statusCode, 200);

      await details.locator('button >> text=Edit').click();
      await form.locator('input[name=cron]').fill('0 9 * * 1-5');
      await form.locator('input[name=timezone]').fill('Europe/Berlin');
      await form.locator('button >> text=Save').click();
      await details.locator('text=0 9 * * 1-5 (Europe/Berlin)').waitFor(TIMEOUT);
      const view = JSON.parse((await stack.admin.get(`schedules/${id}`)).body) as {
        cron: string;
        timezone: string;
        paused: boolean;
      };
      t.like(view, { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', paused: true });
      await details.locator('button >> text=Resume').click();
      await waitFor(async () => (await details.locator('#next-fire-times li').count()) === 5, 10_000);
      await screenshot(t, page, `ui-${store}-schedule-edited`);

      await details.locator('button.danger >> text=Delete').click();
      await page.locator('dialog[open] button.primary').click();
      await page.locator('text=No schedules yet').waitFor(TIMEOUT);
      t.is((await stack.admin.get(`schedules/${id}`)).statusCode, 404);
    },
  );

  test.serial(`${store}: a key page says when its state expires`, async (t) => {
    const { stack } = t.context.stores[store];
    t.is((await stack.admin.patch('services/Tally', { json: { state_ttl: '1h' } })).statusCode, 200);
    await stack.ingress.post('restate/call/Tally/expiring/add', { json: 5 });
    const page = await openPage(t, store, '/ui/objects/Tally/expiring');
    const expiry = page.locator('#state-expiry');
    await expiry.locator('text=state_ttl').waitFor(TIMEOUT);
    t.regex(await expiry.innerText(), /^in 59 min \d+ s \(state_ttl 1 h 0 min; a write starts it again/);
    await screenshot(t, page, `ui-${store}-key-expiry`);
    t.is((await stack.admin.patch('services/Tally', { json: { state_ttl: '0s' } })).statusCode, 200);
  });
}
