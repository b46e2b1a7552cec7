/**
 * What the invoker's unit tests share: the frames an SDK really sends, from the exchanges
 * recorded between restate-server 1.7.12 and @restatedev/restate-sdk 1.17.2
 * (test/fixtures/protocol-vectors/), and a command scope over a real embedded store and a
 * registry holding the recorded deployment (its manifest from the vectors' discovery.json).
 */
import anyTest, { type TestFn } from 'ava';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Target } from '../../machines/invocation.js';
import { partitionOfId } from '../../src/model/partitioning.js';
import type { DiscoveryResult } from '../../src/protocol/discovery.js';
import type { Frame } from '../../src/protocol/framing.js';
import { MessageType, type MessageName } from '../../src/protocol/messages.js';
import { Registry } from '../../src/registry/registry.js';
import { EmbeddedStore } from '../../src/store/embedded/embedded-store.js';
import type { JournalEntry } from '../../src/store/types.js';
import type { CommandScope, TargetOutcome } from '../../src/runtime/invoker/commands/index.js';
import { fixturePath } from './fixtures.js';

export const PARTITIONS = 24;

/** The parts of a vector file (test/fixtures/README.md) these tests read. */
interface VectorMessage {
  dir: 'server->sdk' | 'sdk->server';
  type: MessageName;
  flags: string;
  payload_hex: string;
  decoded: { debug_id?: string; key?: string };
}

interface VectorExchange {
  note: string;
  /** `/invoke/{service}/{handler}`. */
  http: { path: string };
  messages: VectorMessage[];
}

const readJson = (...parts: string[]): unknown =>
  JSON.parse(readFileSync(fixturePath('protocol-vectors', ...parts), 'utf8'));

const frameOf = (m: VectorMessage): Frame => ({
  type: MessageType[m.type],
  flags: Number(m.flags),
  payload: new Uint8Array(Buffer.from(m.payload_hex, 'hex')),
});

/**
 * One recorded exchange (one attempt), named `v6/greeter-run#1`: the first exchange of
 * protocol-vectors/v6/greeter-run.json. Its invocation id and key are those of its Start.
 */
export function recorded(name: string) {
  const [file, n] = name.split('#');
  const ex = (readJson(`${file}.json`) as { exchanges: VectorExchange[] }).exchanges[Number(n) - 1];
  if (!ex) throw new Error(`no exchange ${n} in protocol-vectors/${file}.json`);
  const start = ex.messages.find((m) => m.type === 'Start')!.decoded;
  const sdk = ex.messages.filter((m) => m.dir === 'sdk->server').map(frameOf);
  const server = ex.messages.filter((m) => m.dir === 'server->sdk').map(frameOf);
  return {
    invocationId: start.debug_id!,
    key: start.key ?? '',
    path: ex.http.path,
    /** What the SDK sent, in order. */
    sdk,
    /** The `nth` frame of this type the SDK sent. */
    sent(type: MessageName, nth = 0): Frame {
      const f = sdk.filter((x) => x.type === MessageType[type])[nth];
      if (!f) throw new Error(`${name}: the SDK sent no ${type} #${nth}`);
      return f;
    },
    /** The payload of the `nth` message of this type restate-server sent. */
    answered(type: MessageName, nth = 0): Uint8Array {
      const f = server.filter((x) => x.type === MessageType[type])[nth];
      if (!f) throw new Error(`${name}: restate-server sent no ${type} #${nth}`);
      return f.payload;
    },
  };
}

export type Recorded = ReturnType<typeof recorded>;

/** The capture's deployment as restate-server discovered it over h2c. */
const manifest = (readJson('discovery.json') as { exchanges: Array<{ manifest: DiscoveryResult['manifest'] }> })
  .exchanges[0]!.manifest;

/** A frame as the journal stores it. */
export const entryOf = (f: Frame): JournalEntry => ({ type: f.type, payload: f.payload });

/** A real embedded store in a temporary directory, and a registry holding the recorded deployment. */
export interface InvokerWorld {
  store: EmbeddedStore;
  registry: Registry;
  close(): Promise<void>;
}

export async function openWorld(): Promise<InvokerWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'redstate-invoker-'));
  const store = await EmbeddedStore.open(dir);
  const discover = () => Promise.resolve({ manifest, manifestVersion: 4, sdkVersion: 'restate-sdk-typescript/1.17.2' });
  const registry = await Registry.load(store, { discover });
  await registry.register({ uri: 'http://127.0.0.1:19081' });
  return {
    store,
    registry,
    async close() {
      await store.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** An ava `test` whose tests each get a world of their own, closed after them. */
export function invokerTest(): TestFn<InvokerWorld> {
  const test = anyTest as TestFn<InvokerWorld>;
  test.beforeEach(async (t) => {
    t.context = await openWorld();
  });
  test.afterEach.always(async (t) => {
    await t.context.close();
  });
  return test;
}

export const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
export const bytes = (s: string) => new Uint8Array(Buffer.from(s));
export const base64 = (s: string) => Buffer.from(s).toString('base64');

/** The target of a recorded exchange, typed as the registry says. */
export function targetOf(world: InvokerWorld, ex: Recorded): { target: Target; handlerTy: CommandScope['handlerTy'] } {
  const [, , service, handler] = ex.path.split('/');
  const resolved = world.registry.resolveHandler(service!, handler!);
  if (!resolved) throw new Error(`the recorded deployment has no ${service}/${handler}`);
  const serviceTy = resolved.service.ty;
  const target: Target = {
    service: service!,
    handler: handler!,
    serviceTy,
    ...(serviceTy !== 'Service' ? { key: ex.key } : {}),
  };
  return { target, handlerTy: resolved.handler.ty };
}

/**
 * The scope a command of this exchange is read in, as an attempt builds it (invoker/attempt.ts
 * `scope`): the exchange's invocation, its partition, its target. `outcomes` answers attach and
 * get-output for other invocations (in the runtime: services/attachments.ts).
 */
export function scopeOf(
  world: InvokerWorld,
  ex: Recorded,
  over: Partial<CommandScope> & { outcomes?: Record<string, TargetOutcome> } = {},
): CommandScope {
  const { outcomes = {}, ...rest } = over;
  let n = 0;
  return {
    invocationId: ex.invocationId,
    partition: partitionOfId(ex.invocationId, PARTITIONS),
    ...targetOf(world, ex),
    store: world.store,
    registry: world.registry,
    now: 1_000,
    pendingState: [],
    nextMessageId: () => `${ex.invocationId}:1:${n++}`,
    outcomeOf: (id) => Promise.resolve(outcomes[id] ?? { state: 'missing' }),
    ...rest,
  };
}
