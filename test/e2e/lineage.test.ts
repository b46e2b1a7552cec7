/**
 * Lineage of the invocations a handler makes (issue 15, point 4): the children of a call, a
 * one-way send, a delayed send, a send to a virtual object and a workflow run all name their
 * parent in `sys_invocation.invoked_by_*`. The expected rows are what Restate 1.7.12 returned
 * for `SELECT *` over the same children (Parent/spawn of test/support/services/programs.mjs, run
 * on the reference server from npm): which columns are set, and their values; a child that is
 * still scheduled has no journal size and no pinned deployment yet. Both stores, and the
 * columns survive a SIGKILL of the server.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { sqlRows, stacksPerStore, nodeKinds, type Rows, type Stack } from '../support/stack.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;
stacksPerStore(test, { serviceFile: 'programs.mjs' }, nodeKinds);

type Kind = 'call' | 'send' | 'delayed' | 'objectSend' | 'workflow';

const COMPLETED = ['created_at', 'modified_at', 'running_at', 'completed_at', 'pinned_deployment_id'];
const SCHEDULED = ['created_at', 'modified_at', 'scheduled_at', 'scheduled_start_at'];

/** The reference's row of each child, without the ids and timestamps (checked for presence only). */
function expected(kind: Kind, parentKey: string): { values: Record<string, unknown>; present: string[] } {
  const common = {
    invoked_by: 'service',
    invoked_by_service_name: 'Parent',
    invoked_by_target: `Parent/${parentKey}/spawn`,
    created_using_restate_version: '1.7.12',
    completion_retention: 'PT86400S',
    journal_retention: 'PT86400S',
  };
  const done = {
    ...common,
    pinned_service_protocol_version: 6,
    journal_size: 2,
    journal_commands_size: 2,
    status: 'completed',
    completion_result: 'success',
  };
  const child = {
    target_service_name: 'Child',
    target_handler_name: 'hello',
    target: 'Child/hello',
    target_service_ty: 'service',
  };
  switch (kind) {
    case 'call':
    case 'send':
      return { values: { ...child, ...done }, present: COMPLETED };
    case 'delayed':
      return { values: { ...child, ...common, status: 'scheduled' }, present: SCHEDULED };
    case 'objectSend':
      return {
        values: {
          ...done,
          target: 'ChildObject/k/hello',
          target_service_name: 'ChildObject',
          target_service_key: 'k',
          target_handler_name: 'hello',
          target_service_ty: 'virtual_object',
        },
        present: COMPLETED,
      };
    case 'workflow':
      return {
        values: {
          ...done,
          target: `ChildWorkflow/${parentKey}/run`,
          target_service_name: 'ChildWorkflow',
          target_service_key: parentKey,
          target_handler_name: 'run',
          target_service_ty: 'workflow',
        },
        present: COMPLETED,
      };
  }
}

function checkRows(
  t: ExecutionContext<Record<string, Stack>>,
  rows: Rows,
  ids: Record<Kind, string>,
  parentId: string,
  parentKey: string,
): void {
  for (const [kind, id] of Object.entries(ids) as Array<[Kind, string]>) {
    const row = rows.find((r) => r['id'] === id);
    if (!row) {
      t.fail(`no row for the ${kind} child ${id}`);
      continue;
    }
    const { values, present } = expected(kind, parentKey);
    const { id: _id, invoked_by_id, ...rest } = row;
    t.is(invoked_by_id, parentId, kind);
    const fixed = Object.fromEntries(Object.entries(rest).filter(([k]) => !present.includes(k)));
    t.deepEqual(fixed, values, kind);
    for (const col of present) t.not(row[col], undefined, `${kind}: ${col}`);
  }
}

for (const store of nodeKinds) {
  test.serial(
    `${store}: every child names its parent, as Restate fills sys_invocation, also after a SIGKILL`,
    async (t) => {
      const stack = t.context[store]!;
      const parentKey = `${store}-p`;
      const res = await stack.ingress.post(`restate/call/Parent/${parentKey}/spawn`, { json: { delayMs: 600_000 } });
      t.is(res.statusCode, 200, res.body);
      const ids = JSON.parse(res.body) as Record<Kind, string>;
      const parentId = res.headers['x-restate-id'] as string;
      const query = `SELECT * FROM sys_invocation WHERE invoked_by_id = '${parentId}'`;
      // One-way sends may still run when the parent answers (on a busy cluster, they do).
      const ending = (Object.keys(ids) as Kind[]).filter(
        (k) => expected(k, parentKey).values['status'] === 'completed',
      );
      await waitFor(async () => {
        const rows = await sqlRows(stack.admin, query);
        return ending.every((k) => rows.find((r) => r['id'] === ids[k])?.['status'] === 'completed');
      }, 15_000);
      const before = await sqlRows(stack.admin, query);
      t.is(before.length, 5);
      checkRows(t, before, ids, parentId, parentKey);

      await stack.server.kill();
      await stack.server.restart();
      checkRows(t, await sqlRows(stack.admin, query), ids, parentId, parentKey);

      // The CLI's own columns for the children (reference-behavior.md §4).
      const cli = await sqlRows(
        stack.admin,
        `SELECT inv.id, inv.invoked_by_id, inv.invoked_by_target FROM sys_invocation inv WHERE inv.id = '${ids.delayed}'`,
      );
      t.deepEqual(cli, [{ id: ids.delayed, invoked_by_id: parentId, invoked_by_target: `Parent/${parentKey}/spawn` }]);
    },
  );
}
