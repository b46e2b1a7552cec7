/**
 * Pure steps of a machine: the same snapshot and actions as XState's `initialTransition` and
 * `transition`, at a fraction of the cost.
 *
 * Those two functions build a throwaway actor per call, and its constructor evaluates the
 * machine's initial state once more, without input; our context factories throw on that and
 * XState catches and discards the error. That was most of a no-op call's CPU time on the
 * server. A Stepper builds one inert scope per machine and reuses it: our machines spawn
 * nothing, schedule nothing and send nothing, so a scope holds no state between steps, and
 * steps run synchronously, one at a time.
 */
import {
  createActor,
  type AnyActorScope,
  type AnyStateMachine,
  type EventFromLogic,
  type ExecutableActionsFrom,
  type InputFrom,
  type SnapshotFrom,
} from 'xstate';

export type Step<M extends AnyStateMachine> = [SnapshotFrom<M>, Array<ExecutableActionsFrom<M>>];

/** How the runtime steps a machine: XState's `initialTransition` and `transition`, pure. */
export interface Steps<M extends AnyStateMachine> {
  initial(input: InputFrom<M>): Step<M>;
  next(snapshot: SnapshotFrom<M>, event: EventFromLogic<M>): Step<M>;
}

export class Stepper<M extends AnyStateMachine> implements Steps<M> {
  private collected: Array<ExecutableActionsFrom<M>> = [];
  private readonly scope: AnyActorScope;

  /** `sampleInput` only has to be valid: it builds the scope's (never started) actor. */
  constructor(
    readonly machine: M,
    sampleInput: InputFrom<M>,
  ) {
    const self = createActor(machine, { input: sampleInput });
    this.scope = {
      self,
      id: '',
      sessionId: '',
      system: self.system,
      logger: () => {},
      defer: () => {},
      emit: () => {},
      stopChild: () => {},
      actionExecutor: (action) => void this.collected.push(action as ExecutableActionsFrom<M>),
    };
  }

  initial(input: InputFrom<M>): Step<M> {
    return this.collect(() => this.machine.getInitialSnapshot(this.scope, input) as SnapshotFrom<M>);
  }

  next(snapshot: SnapshotFrom<M>, event: EventFromLogic<M>): Step<M> {
    return this.collect(() => this.machine.transition(snapshot, event, this.scope) as SnapshotFrom<M>);
  }

  private collect(step: () => SnapshotFrom<M>): Step<M> {
    this.collected = [];
    const snapshot = step();
    return [snapshot, this.collected];
  }
}

/**
 * A Stepper that remembers its steps, for a machine whose initial step depends only on a key
 * of the input and whose next step only on a key of the snapshot and event (`keys`; undefined:
 * not remembered). The attempt machine is one: its context is its input and never changes,
 * and most of its events carry nothing. An attempt steps on every chunk of frames, and
 * XState's transition costs ~15 µs; a hit is a map lookup (the profile of S1b put attempt
 * steps at 66 µs of CPU per call before this, and the initial step of each attempt at ~50 µs
 * more, before that was remembered too).
 */
export class MemoStepper<M extends AnyStateMachine> implements Steps<M> {
  private readonly memo = new Map<string, Step<M>>();
  private readonly initialMemo = new Map<string, Step<M>>();

  constructor(
    private readonly stepper: Steps<M>,
    private readonly keys: {
      initial: (input: InputFrom<M>) => string | undefined;
      next: (snapshot: SnapshotFrom<M>, event: EventFromLogic<M>) => string | undefined;
    },
    private readonly limit = 4096,
  ) {}

  initial(input: InputFrom<M>): Step<M> {
    return this.remember(this.initialMemo, this.keys.initial(input), () => this.stepper.initial(input));
  }

  next(snapshot: SnapshotFrom<M>, event: EventFromLogic<M>): Step<M> {
    return this.remember(this.memo, this.keys.next(snapshot, event), () => this.stepper.next(snapshot, event));
  }

  private remember(memo: Map<string, Step<M>>, key: string | undefined, step: () => Step<M>): Step<M> {
    if (key === undefined) return step();
    let known = memo.get(key);
    if (known === undefined) {
      known = step();
      if (memo.size >= this.limit) memo.clear();
      memo.set(key, known);
    }
    return known;
  }
}

/** What a FlatStepper reads of a state node (XState's `StateNode`, normalized by `setup().createMachine`). */
interface FlatNode {
  readonly key: string;
  readonly type: string;
  readonly parent?: FlatNode;
  readonly tags: readonly string[];
  readonly entry: readonly unknown[];
  readonly exit: readonly unknown[];
  readonly transitions: ReadonlyMap<string, readonly FlatTransition[]>;
  readonly always?: readonly FlatTransition[];
  readonly states: Readonly<Record<string, FlatNode>>;
  readonly initial?: { readonly target: readonly FlatNode[] };
  readonly config: {
    readonly invoke?: unknown;
    readonly after?: unknown;
    readonly onDone?: unknown;
    readonly output?: unknown;
  };
}

interface FlatTransition {
  readonly source: FlatNode;
  readonly target?: readonly FlatNode[];
  readonly reenter: boolean;
  readonly guard?: unknown;
  readonly actions: readonly unknown[];
}

type Implementation = ((...args: unknown[]) => unknown) & {
  resolve?: unknown;
  check?: unknown;
  type?: string;
  assignment?: unknown;
};
type Context = Record<string, unknown>;
type Event = { type: string };

const ASSIGN = 'xstate.assign';

/**
 * The steps of a `Stepper` for a flat machine, a tenth of their cost: the invocation machine's
 * XState step took 20 µs in a warm loop and ~60 µs inside the server (its initial step alone
 * was 11% of the server's CPU per admitted send), most of it XState's general algorithm
 * (transition domains, state-node sets, a snapshot per `assign`).
 *
 * A flat machine is what ours are: every state a child of the root, atomic or final; guards and
 * actions named or inline; `assign` the only built-in action; no exit actions, delays, invokes
 * or `onDone`. For such a machine, XState's microstep reduces to: the first transition whose
 * guard passes, the leaf's before the root's; a transition with a target leaves the leaf and
 * enters the target (unless it targets its own source without `reenter`); its actions, then
 * the target's entry actions, run in order, each `assign` on the context left by the one before
 * and each other action collected with its params; then eventless transitions until none is
 * enabled; entering a final state ends the machine. The constructor refuses any machine with
 * more than that. Snapshots are XState's (the same fields and methods, from a template per
 * state), and test/unit/stepper.test.ts checks every step against XState's on random walks.
 */
export class FlatStepper<M extends AnyStateMachine> implements Steps<M> {
  private readonly root: FlatNode;
  private readonly actions: Record<string, Implementation>;
  private readonly guards: Record<string, Implementation>;
  private readonly templates = new Map<string, object>();
  private readonly self: unknown;
  private readonly system: unknown;

  constructor(
    readonly machine: M,
    sampleInput: InputFrom<M>,
  ) {
    this.root = machine.root as unknown as FlatNode;
    const implementations = machine.implementations as unknown as {
      actions: Record<string, Implementation>;
      guards: Record<string, Implementation>;
    };
    this.actions = implementations.actions;
    this.guards = implementations.guards;
    const self = createActor(machine, { input: sampleInput });
    this.self = self;
    this.system = self.system;
    this.check();
    for (const key of Object.keys(this.root.states))
      this.templates.set(key, machine.resolveState({ value: key, context: {} }) as object);
  }

  initial(input: InputFrom<M>): Step<M> {
    const event = { type: 'xstate.init', input };
    const contextOf = (this.machine.config as { context?: unknown }).context;
    const made =
      typeof contextOf === 'function'
        ? (contextOf as (args: unknown) => Context)({ spawn: noSpawn, input, self: this.self })
        : (contextOf as Context | undefined);
    const collected: unknown[] = [];
    const first = this.root.initial!.target[0]!;
    const entered = this.run(first.entry, Object.assign({}, made), event, collected);
    const [leaf, context] = this.settle(first, entered, event, collected);
    return [this.snapshotOf(leaf, context), collected as Step<M>[1]];
  }

  next(snapshot: SnapshotFrom<M>, event: EventFromLogic<M>): Step<M> {
    const current = snapshot as unknown as { value: string; context: Context };
    const from = this.root.states[current.value]!;
    const taken = this.select(from, event, current.context) ?? this.select(this.root, event, current.context);
    if (taken === undefined) return [snapshot, []];
    const collected: unknown[] = [];
    const [leaf, context] = this.settle(...this.take(taken, from, current.context, event, collected), event, collected);
    if (leaf === from && context === current.context) return [snapshot, collected as Step<M>[1]];
    return [this.snapshotOf(leaf, context), collected as Step<M>[1]];
  }

  /**
   * Eventless transitions, while one is enabled and changes something (XState's macrostep).
   * Only the leaf's: the root has none (`check`).
   */
  private settle(leaf: FlatNode, context: Context, event: Event, collected: unknown[]): [FlatNode, Context] {
    while (leaf.type !== 'final') {
      const enabled = this.firstEnabled(leaf.always, event, context);
      if (enabled === undefined) break;
      const [next, nextContext] = this.take(enabled, leaf, context, event, collected);
      if (next === leaf && nextContext === context) break;
      [leaf, context] = [next, nextContext];
    }
    return [leaf, context];
  }

  private select(node: FlatNode, event: Event, context: Context): FlatTransition | undefined {
    return this.firstEnabled(node.transitions.get(event.type), event, context);
  }

  private firstEnabled(
    candidates: readonly FlatTransition[] | undefined,
    event: Event,
    context: Context,
  ): FlatTransition | undefined {
    if (candidates === undefined) return undefined;
    for (const candidate of candidates) if (this.passes(candidate.guard, event, context)) return candidate;
    return undefined;
  }

  private passes(guard: unknown, event: Event, context: Context): boolean {
    if (guard === undefined) return true;
    return Boolean(implementationOf(this.guards, guard)!({ context, event }, paramsOf(guard, context, event)));
  }

  /** One microstep: the leaf it ends in and the context its actions leave. */
  private take(
    t: FlatTransition,
    leaf: FlatNode,
    context: Context,
    event: Event,
    collected: unknown[],
  ): [FlatNode, Context] {
    const target = t.target?.[0];
    const afterActions = this.run(t.actions, context, event, collected);
    // XState's transition domain: a transition that targets its own source without `reenter`
    // leaves and enters nothing; a targetless one neither.
    if (target === undefined || (target === t.source && !t.reenter)) return [leaf, afterActions];
    return [target, this.run(target.entry, afterActions, event, collected)];
  }

  /** The actions in order: `assign` changes the context the next ones see; the others are collected. */
  private run(actions: readonly unknown[], context: Context, event: Event, collected: unknown[]): Context {
    for (const action of actions) {
      const resolved = implementationOf(this.actions, action);
      const info = { context, event, self: this.self, system: this.system };
      const params = paramsOf(action, context, event);
      if (resolved === undefined || !('resolve' in resolved)) {
        const type = typeof action === 'function' ? resolved!.name || '(anonymous)' : nameOf(action);
        collected.push({ type, info, params, exec: resolved });
        continue;
      }
      const assignment = resolved.assignment as ((args: unknown, params: unknown) => Context) | Record<string, unknown>;
      const args = { context, event, spawn: noSpawn, self: this.self, system: this.system };
      let update: Context;
      if (typeof assignment === 'function') update = assignment(args, params);
      else {
        update = {};
        for (const key of Object.keys(assignment)) {
          const value = assignment[key];
          update[key] =
            typeof value === 'function' ? (value as (a: unknown, p: unknown) => unknown)(args, params) : value;
        }
      }
      context = Object.assign({}, context, update);
    }
    return context;
  }

  private snapshotOf(leaf: FlatNode, context: Context): SnapshotFrom<M> {
    const done = leaf.type === 'final';
    return {
      ...this.templates.get(leaf.key),
      context,
      status: done ? 'done' : 'active',
      output: undefined,
      error: undefined,
    } as unknown as SnapshotFrom<M>;
  }

  /** Refuses a machine with more than this class steps as XState would. */
  private check(): void {
    const refuse = (what: string) => {
      throw new Error(`FlatStepper: machine '${this.machine.id}' ${what}`);
    };
    const root = this.root;
    if (root.entry.length || root.exit.length || root.always?.length)
      refuse('has root entry, exit or eventless actions');
    if (root.config.output !== undefined) refuse('has an output');
    if (!root.initial || root.initial.target.length !== 1) refuse('has no single initial state');
    const checkTransitions = (node: FlatNode) => {
      const all = [...node.transitions.entries()].flatMap(([descriptor, ts]) => {
        if (descriptor.includes('*')) refuse(`has a wildcard transition (${descriptor})`);
        return ts;
      });
      for (const t of [...all, ...(node.always ?? [])]) {
        if ((t.target?.length ?? 0) > 1) refuse('has a transition with several targets');
        const target = t.target?.[0];
        if (target !== undefined && target.parent !== root) refuse('has a nested target');
        this.checkGuard(t.guard, refuse);
        this.checkActions(t.actions, refuse);
      }
    };
    checkTransitions(root);
    for (const node of Object.values(root.states)) {
      if (node.type !== 'atomic' && node.type !== 'final') refuse(`has a ${node.type} state (${node.key})`);
      if (node.config.invoke !== undefined || node.config.after !== undefined || node.config.onDone !== undefined)
        refuse(`has invoke, after or onDone (${node.key})`);
      if (node.exit.length) refuse(`has exit actions (${node.key})`);
      this.checkActions(node.entry, refuse);
      checkTransitions(node);
    }
  }

  private checkGuard(guard: unknown, refuse: (what: string) => never): void {
    if (guard === undefined) return;
    const resolved = implementationOf(this.guards, guard);
    if (typeof resolved !== 'function' || 'check' in resolved) refuse('has a built-in or unknown guard');
  }

  private checkActions(actions: readonly unknown[], refuse: (what: string) => never): void {
    for (const action of actions) {
      const resolved = implementationOf(this.actions, action);
      if (resolved !== undefined && 'resolve' in resolved && resolved.type !== ASSIGN)
        refuse(`has a built-in action other than assign (${resolved.type})`);
    }
  }
}

/** A guard or action as a machine names it: inline, by name, or `{ type, params }`. */
type Reference = Implementation | string | { type: string; params?: unknown };

const nameOf = (ref: unknown): string => (typeof ref === 'string' ? ref : (ref as { type: string }).type);

/** What `ref` runs: itself when inline, else the machine's implementation of its name. */
function implementationOf(table: Record<string, Implementation>, ref: unknown): Implementation | undefined {
  return typeof ref === 'function' ? (ref as Implementation) : table[nameOf(ref)];
}

/** Its params, as XState resolves them: only a `{ type, params }` reference has any. */
function paramsOf(ref: unknown, context: Context, event: Event): unknown {
  const named = ref as Reference;
  if (typeof named !== 'object' || !('params' in named)) return undefined;
  return typeof named.params === 'function'
    ? (named.params as (a: unknown) => unknown)({ context, event })
    : named.params;
}

function noSpawn(): never {
  throw new Error('FlatStepper: machines stepped here spawn nothing');
}
