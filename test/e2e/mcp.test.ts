/**
 * Coding agents operate the server through the MCP endpoint on the admin port (/mcp): the
 * SDK's own client (Client + StreamableHTTPClientTransport) against the real server and real
 * SDK services, on both stores. Tools call the same code as the ingress and admin routes, so
 * these tests check that each tool reaches it and answers structured content, that bad
 * arguments are tool errors (not transport errors), and that the admin token guards /mcp.
 */
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { stacksPerStore, storeKinds, type Stack } from '../support/stack.js';
import { startRedstate } from '../support/server.js';
import { waitFor } from '../support/wait.js';

const test = anyTest as TestFn<Record<string, Stack>>;

stacksPerStore(test, { serviceFile: 'agents.mjs' });

async function connect(adminUrl: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'redstate-test', version: '1.0.0' });
  const headers = token ? { authorization: `Bearer ${token}` } : undefined;
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${adminUrl}/mcp`), headers ? { requestInit: { headers } } : undefined),
  );
  return client;
}

/** A client for one test, closed when it ends. */
async function agent(t: ExecutionContext, stack: Stack): Promise<Client> {
  const client = await connect(stack.server.admin);
  t.teardown(() => client.close());
  return client;
}

type Structured = Record<string, unknown>;

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The structured answer of a tool call that must succeed. */
async function ok(
  t: ExecutionContext,
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Structured> {
  const res = await call(client, name, args);
  t.falsy(res.isError, `${name}: ${JSON.stringify(res.content)}`);
  t.is(res.content[0]?.type, 'text');
  return res.structuredContent as Structured;
}

/** The text of a tool error. */
async function refused(
  t: ExecutionContext,
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const res = await call(client, name, args);
  t.true(res.isError, `${name} should fail: ${JSON.stringify(res.structuredContent)}`);
  const first = res.content[0];
  return first?.type === 'text' ? first.text : '';
}

/** An invocation's status (sys_invocation.status), by the query tool: one query where describe runs five. */
async function statusOf(t: ExecutionContext, client: Client, id: string): Promise<unknown> {
  const rows = (await ok(t, client, 'query', { sql: `SELECT status FROM sys_invocation WHERE id = '${id}'` }))
    .rows as Structured[];
  return rows[0]?.status;
}

/** Polls every 200 ms: each poll runs queries, which the shared machine pays for. */
const eventually = (cond: () => Promise<boolean>, ms = 15_000) => waitFor(cond, ms, 200);

const TOOLS = [
  'call',
  'cancel_invocation',
  'describe_invocation',
  'get_state',
  'health',
  'kill_invocation',
  'list_invocations',
  'list_services',
  'pause_invocation',
  'purge_invocation',
  'purge_invocation_journal',
  'query',
  'register_deployment',
  'reject_awakeable',
  'resolve_awakeable',
  'restart_invocation_as_new',
  'resume_invocation',
  'send',
  'set_state',
  'version',
];

for (const store of storeKinds) {
  test(`${store}: tools are listed with input schemas; destructive ones say so`, async (t) => {
    const client = await agent(t, t.context[store]!);
    const { tools } = await client.listTools();
    t.deepEqual(tools.map((x) => x.name).sort(), TOOLS);
    for (const tool of tools) t.is(tool.inputSchema.type, 'object', tool.name);
    const byName = new Map(tools.map((x) => [x.name, x]));
    for (const name of [
      'kill_invocation',
      'cancel_invocation',
      'purge_invocation',
      'purge_invocation_journal',
      'set_state',
    ]) {
      t.true(byName.get(name)?.annotations?.destructiveHint, name);
    }
    for (const name of ['query', 'list_invocations', 'describe_invocation', 'get_state', 'list_services'])
      t.true(byName.get(name)?.annotations?.readOnlyHint, name);
    t.deepEqual(byName.get('call')?.inputSchema.required, ['service', 'handler']);
    const services = (await ok(t, client, 'list_services')).services as Array<{
      name: string;
      handlers: Array<{ name: string; input_json_schema?: unknown }>;
    }>;
    t.deepEqual(services.map((s) => s.name).sort(), ['Cart', 'Greeter']);
    t.true(services.find((s) => s.name === 'Greeter')!.handlers.some((h) => h.name === 'greet'));
    const health = await ok(t, client, 'health');
    t.true(health.healthy);
    t.is((await ok(t, client, 'version')).version, '1.7.12');
  });

  test(`${store}: a call through the tool is found by list_invocations and described whole`, async (t) => {
    const client = await agent(t, t.context[store]!);
    const called = await ok(t, client, 'call', { service: 'Greeter', handler: 'greet', input: `mcp-${store}` });
    t.is(called.outcome, 'success');
    t.is(called.output, `hi mcp-${store}`);
    const id = called.invocation_id as string;
    t.regex(id, /^inv_/);

    const listed = (
      await ok(t, client, 'list_invocations', {
        service: 'Greeter',
        handler: 'greet',
        status: 'succeeded',
        created_within: '1h',
      })
    ).invocations as Structured[];
    t.true(listed.some((r) => r.id === id && r.status === 'completed'));
    t.deepEqual(
      (await ok(t, client, 'list_invocations', { target: 'Greeter/greet', older_than: '1h' })).invocations,
      [],
    );

    const described = await ok(t, client, 'describe_invocation', { invocation_id: id });
    const row = described.invocation as Structured;
    t.is(row.status, 'completed');
    t.is(row.target, 'Greeter/greet');
    t.is(described.output, `hi mcp-${store}`);
    const path = described.path as Array<{ event: string; to: string }>;
    t.is(path[0]?.event, 'xstate.init');
    t.is(path[path.length - 1]?.to, 'completed');
    const journal = described.journal as { entries: Array<{ entry_type: string }> };
    t.is(journal.entries[0]?.entry_type, 'Command: Input');
    t.deepEqual((described.caller as Structured).invoked_by, 'ingress');
  });

  test(`${store}: describe shows caller and callees; kill ends one, and list finds it failed`, async (t) => {
    const client = await agent(t, t.context[store]!);
    const sent = await ok(t, client, 'send', { service: 'Greeter', handler: 'parent', input: 60_000 });
    t.is(sent.status, 'Accepted');
    const parent = sent.invocation_id as string;
    let callees: Array<{ invocation_id: string; status: string }> = [];
    await eventually(async () => {
      callees = (await ok(t, client, 'describe_invocation', { invocation_id: parent })).callees as typeof callees;
      return callees.length === 1 && callees[0]!.status !== 'unknown (purged, or not created yet)';
    });
    const child = callees[0]!.invocation_id;
    const childView = await ok(t, client, 'describe_invocation', { invocation_id: child });
    t.like(childView.caller, { invoked_by: 'service', invocation_id: parent, target: 'Greeter/parent' });

    const killed = await ok(t, client, 'kill_invocation', { invocation_id: child });
    t.is(killed.outcome, 'done');
    // The parent gets the child's failure and fails with it.
    await eventually(async () => (await statusOf(t, client, parent)) === 'completed', 15_000);
    const failed = (await ok(t, client, 'list_invocations', { status: 'failed', service: 'Greeter' }))
      .invocations as Structured[];
    t.true(
      failed.some((r) => r.id === child),
      JSON.stringify(failed),
    );
    t.true(
      failed.some((r) => r.id === parent),
      JSON.stringify(failed),
    );
    const again = await refused(t, client, 'kill_invocation', { invocation_id: child });
    t.is(again, `The invocation '${child}' was already completed.`);
  });

  test(`${store}: a key's state written through the tool reads back, through get_state and through the handler`, async (t) => {
    const client = await agent(t, t.context[store]!);
    const key = `basket-${store}`;
    await ok(t, client, 'call', { service: 'Cart', key, handler: 'add', input: 'apple' });
    t.deepEqual((await ok(t, client, 'get_state', { service: 'Cart', key })).state, { items: ['apple'] });
    const written = await ok(t, client, 'set_state', {
      service: 'Cart',
      key,
      state: { items: ['pear', 'plum'], note: { by: 'agent' } },
    });
    t.deepEqual(written.entries, ['items', 'note']);
    await eventually(
      async () =>
        JSON.stringify((await ok(t, client, 'get_state', { service: 'Cart', key })).state) ===
        '{"items":["pear","plum"],"note":{"by":"agent"}}',
    );
    t.like(await ok(t, client, 'call', { service: 'Cart', key, handler: 'items' }), {
      outcome: 'success',
      output: ['pear', 'plum'],
    });
    t.is(
      await refused(t, client, 'get_state', { service: 'Greeter', key }),
      "'Greeter' is a plain service: it has no state",
    );
  });

  test(`${store}: an awakeable is resolved and rejected through the tools`, async (t) => {
    const stack = t.context[store]!;
    const client = await agent(t, stack);
    const awakeableOf = async (tag: string) => {
      let id = '';
      await waitFor(async () => {
        id = String((await stack.counts())[`awakeable:${tag}`] ?? '');
        return id !== '';
      }, 10_000);
      return id;
    };
    const yes = (await ok(t, client, 'send', { service: 'Greeter', handler: 'approval', input: `yes-${store}` }))
      .invocation_id as string;
    await ok(t, client, 'resolve_awakeable', {
      awakeable_id: await awakeableOf(`yes-${store}`),
      value: { approved: true },
    });
    await eventually(async () => (await statusOf(t, client, yes)) === 'completed', 10_000);
    t.deepEqual((await ok(t, client, 'describe_invocation', { invocation_id: yes })).output, { approved: true });

    const no = await call(client, 'call', {
      service: 'Greeter',
      handler: 'approval',
      input: `no-${store}`,
      wait_seconds: 0,
    });
    const noId = (no.structuredContent as Structured).invocation_id as string;
    t.is((no.structuredContent as Structured).outcome, 'running');
    await ok(t, client, 'reject_awakeable', { awakeable_id: await awakeableOf(`no-${store}`), reason: 'denied' });
    await eventually(async () => (await statusOf(t, client, noId)) === 'completed', 10_000);
    t.like((await ok(t, client, 'describe_invocation', { invocation_id: noId })).invocation, {
      completion_result: 'failure',
      completion_failure: '[500] denied',
    });
  });

  test(`${store}: a delayed send is scheduled, cancelled, restarted as new and purged`, async (t) => {
    const client = await agent(t, t.context[store]!);
    const sent = await ok(t, client, 'send', { service: 'Greeter', handler: 'greet', input: 'later', delay: '1h' });
    t.truthy(sent.execution_time);
    const at = await ok(t, client, 'send', {
      service: 'Greeter',
      handler: 'greet',
      input: 'at',
      at: '2036-01-01T00:00:00Z',
    });
    t.is(at.execution_time, '2036-01-01T00:00:00.000000000Z');
    t.is(await statusOf(t, client, at.invocation_id as string), 'scheduled');
    const id = sent.invocation_id as string;
    t.is(await statusOf(t, client, id), 'scheduled');
    t.is((await ok(t, client, 'cancel_invocation', { invocation_id: id })).outcome, 'done');
    t.regex(await refused(t, client, 'describe_invocation', { invocation_id: id }), /does not exist/);

    const done = (await ok(t, client, 'call', { service: 'Greeter', handler: 'greet', input: 'again' }))
      .invocation_id as string;
    const restarted = (await ok(t, client, 'restart_invocation_as_new', { invocation_id: done }))
      .new_invocation_id as string;
    await eventually(async () => (await statusOf(t, client, restarted)) === 'completed');
    t.is((await ok(t, client, 'describe_invocation', { invocation_id: restarted })).output, 'hi again');
    t.is(
      ((await ok(t, client, 'describe_invocation', { invocation_id: restarted })).invocation as Structured)
        .restarted_from,
      done,
    );
    t.is((await ok(t, client, 'purge_invocation', { invocation_id: done })).outcome, 'done');
    t.regex(await refused(t, client, 'describe_invocation', { invocation_id: done }), /does not exist/);
  });

  test(`${store}: read-only SQL through /query's engine; statements that are no query are refused`, async (t) => {
    const client = await agent(t, t.context[store]!);
    const rows = (await ok(t, client, 'query', { sql: 'SELECT name, ty FROM sys_service ORDER BY name' })).rows;
    t.deepEqual(rows, [
      { name: 'Cart', ty: 'virtual_object' },
      { name: 'Greeter', ty: 'service' },
    ]);
    t.is(
      await refused(t, client, 'query', { sql: 'DELETE FROM sys_invocation' }),
      'Datafusion error: Error during planning: DML not supported: Delete',
    );
    t.regex(
      await refused(t, client, 'query', { sql: 'SELECT * FROM nowhere' }),
      /table 'restate.public.nowhere' not found/,
    );
  });

  test(`${store}: bad arguments are tool errors with the HTTP APIs' texts, never transport errors`, async (t) => {
    const client = await agent(t, t.context[store]!);
    t.regex(await refused(t, client, 'call', { service: 'Greeter' }), /Invalid arguments for tool call/);
    t.regex(await refused(t, client, 'list_invocations', { limit: 'many' }), /expected number/);
    t.is(
      await refused(t, client, 'call', { service: 'Nope', handler: 'x' }),
      "service 'Nope' not found, make sure to register the service before calling it.",
    );
    t.is(
      await refused(t, client, 'call', { service: 'Cart', handler: 'add', input: 1 }),
      'a key is required for virtual objects and workflows, and not allowed for plain services',
    );
    t.regex(
      await refused(t, client, 'call', { service: 'Greeter', handler: 'greet', delay: '1s' }),
      /Unrecognized key: "delay"/,
    );
    t.regex(
      await refused(t, client, 'send', { service: 'Greeter', handler: 'greet', delay: 'soon' }),
      /^bad delay query parameter/,
    );
    t.regex(
      await refused(t, client, 'send', { service: 'Greeter', handler: 'greet', at: 'soon' }),
      /^bad at query parameter/,
    );
    t.is(
      await refused(t, client, 'send', { service: 'Greeter', handler: 'greet', priority: 1 }),
      'x-restate-priority requires a scope to be set',
    );
    t.is(
      await refused(t, client, 'kill_invocation', { invocation_id: 'garbage' }),
      "The request field 'invocation_id' is invalid. Reason: bad format",
    );
    t.is(
      await refused(t, client, 'kill_invocation', { invocation_id: 'inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi' }),
      "The requested invocation 'inv_1e5LzHaWLYBg7Mif5X5OikFkqq1YSVGOUi' does not exist",
    );
    t.regex(await refused(t, client, 'resolve_awakeable', { awakeable_id: 'nope' }), /^bad awakeable id 'nope'/);
    t.regex(await refused(t, client, 'list_invocations', { created_within: 'lately' }), /^created_within: /);
    t.regex(await refused(t, client, 'register_deployment', { uri: 'not a uri' }), /is not an http\(s\) URI/);
    // The client is still connected and served.
    t.true((await ok(t, client, 'health')).healthy);
  });

  test(`${store}: resources: each service's OpenAPI document and the machines`, async (t) => {
    const client = await agent(t, t.context[store]!);
    const read = async (uri: string): Promise<unknown> => {
      const content = (await client.readResource({ uri })).contents[0];
      return JSON.parse(content && 'text' in content ? content.text : '');
    };
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    for (const uri of [
      'redstate://machines/invocation',
      'redstate://machines/object-key',
      'redstate://services/Greeter/openapi',
      'redstate://services/Cart/openapi',
    ])
      t.true(uris.includes(uri), uri);
    const openapi = (await read('redstate://services/Greeter/openapi')) as { paths: Record<string, unknown> };
    t.truthy(openapi.paths['/restate/call/Greeter/greet']);
    const machine = (await read('redstate://machines/invocation')) as { id: string; states: Record<string, unknown> };
    t.is(machine.id, 'invocation');
    for (const state of ['scheduled', 'pending', 'running', 'suspended', 'paused', 'completed'])
      t.truthy(machine.states[state], state);
  });
}

test('/mcp is on the admin port only, answers POST only, and a body that is no JSON is a JSON-RPC parse error', async (t) => {
  const stack = t.context[storeKinds[0]!]!;
  const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const get = await stack.admin.get('mcp', { headers: { accept: 'text/event-stream' } });
  t.is(get.statusCode, 405);
  t.is(get.headers.allow, 'POST');
  const garbled = await stack.admin.post('mcp', { body: '{"jsonrpc":', headers: mcpHeaders });
  t.is(garbled.statusCode, 400);
  t.like(JSON.parse(garbled.body), { jsonrpc: '2.0', error: { code: -32700 }, id: null });
  const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
  t.deepEqual(JSON.parse((await stack.admin.post('mcp', { json: ping, headers: mcpHeaders })).body), {
    jsonrpc: '2.0',
    id: 1,
    result: {},
  });
  // On the ingress, /mcp is a (bad) invocation path like any other.
  const ingress = await stack.ingress.post('mcp', { json: ping, headers: mcpHeaders });
  t.is(ingress.statusCode, 400);
  t.false(ingress.body.includes('jsonrpc'));
});

test('a token-protected admin refuses an MCP client without the token and serves one with it', async (t) => {
  const server = await startRedstate({ env: { REDSTATE_ADMIN_TOKEN: 'agent-secret' } });
  t.teardown(() => server.stop());
  const refusedWith = async (token?: string) => {
    const err = await t.throwsAsync<StreamableHTTPError>(connect(server.admin, token));
    return { status: err?.code, message: String(err?.message) };
  };
  t.like(await refusedWith(), {
    status: 401,
    message:
      'Streamable HTTP error: Error POSTing to endpoint: {"message":"Authentication required: send the header `Authorization: Bearer <token>`.","restate_code":null}',
  });
  t.like(await refusedWith('wrong'), { status: 401 });
  const client = await connect(server.admin, 'agent-secret');
  t.teardown(() => client.close());
  t.true((await client.listTools()).tools.length > 0);
  t.deepEqual((await client.callTool({ name: 'list_services', arguments: {} })).structuredContent, { services: [] });
});
