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

export class Stepper<M extends AnyStateMachine> {
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
export class MemoStepper<M extends AnyStateMachine> {
  private readonly memo = new Map<string, Step<M>>();
  private readonly initialMemo = new Map<string, Step<M>>();

  constructor(
    private readonly stepper: Stepper<M>,
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
