/**
 * The machines in words a Restate user knows: states by their `sys_invocation.status` names,
 * events and guards as what happened. The diagrams are labelled with them when the UI is built
 * (build/machine-layout.ts), and the invocation page's path reads the same way; the names in
 * machines/ stay on each label's tooltip.
 */

const STATES: Record<string, string> = {
  created: 'created',
  scheduled: 'scheduled',
  pending: 'pending',
  running: 'running',
  suspended: 'suspended',
  backingOff: 'backing-off',
  paused: 'paused',
  completed: 'completed',
  free: 'free',
  locked: 'locked',
};

const EVENTS: Record<string, string> = {
  'xstate.init': 'created',
  timerDue: 'timer fired',
  lockGranted: 'got the key',
  slotGranted: 'got a slot',
  suspend: 'suspended',
  wake: 'woken up',
  attemptFailed: 'attempt failed',
  complete: 'returned',
  pinDeployment: 'deployment pinned',
  kill: 'killed',
  pause: 'paused',
  resume: 'resumed',
  acquire: 'exclusive call arrives',
  release: 'holder completes',
};

const GUARDS: Record<string, string> = {
  delayed: 'has a start time',
  waitsForLock: 'exclusive',
  lockNotYetHeld: 'key is taken',
  slotNotYetHeld: 'needs a slot',
  shouldRetry: 'retries left',
  shouldPause: 'retries used up: pause',
  holderReleases: 'others wait',
  lastHolderReleases: 'nobody waits',
};

export function stateWord(state: string): string {
  return STATES[state] ?? state;
}

/**
 * What an event meant, where the machine's name alone is too general: the timer that fired a
 * scheduled start is not the one that ended a backoff, a `kill` may have been a cancel.
 */
export function eventWord(event: string, from?: string | null, outcome?: string): string {
  if (event === 'timerDue')
    return from === 'scheduled' ? 'start time reached' : from === 'backingOff' ? 'retried' : EVENTS.timerDue!;
  if (event === 'kill' && outcome === 'cancelled') return 'cancelled';
  if (event === 'wake' && from === 'running') return 'woken at once';
  return EVENTS[event] ?? event;
}

/** Transitions that read better as one phrase than as event and guard (`source|event|guard`). */
const EDGES: Record<string, string> = {
  'running|attemptFailed|': 'attempt failed\n[no retry: fails]',
  '#any|kill|': 'killed or cancelled',
  'free|acquire|': 'exclusive call\ntakes the key',
  'locked|acquire|': 'exclusive call\njoins the inbox',
  'locked|release|lastHolderReleases': 'holder completes\n[inbox empty]',
  'locked|release|holderReleases': 'holder completes\n[next in inbox takes it]',
  'locked|release|': 'a waiter\ngoes away',
};

/** A diagram edge's label: `always` edges (no event) read as their guard, or "at once". */
export function edgeWords(source: string, event: string, guard: string | undefined): string {
  const special = EDGES[`${source}|${event}|${guard ?? ''}`];
  if (special) return special;
  const what = event === '' ? (guard ? '' : 'at once') : eventWord(event, source);
  if (!guard) return what;
  return what ? `${what}\n[${GUARDS[guard] ?? guard}]` : `[${GUARDS[guard] ?? guard}]`;
}
