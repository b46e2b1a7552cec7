/** How a state of an invocation is coloured: after its status, and for the end after its outcome. */
import type { Shown } from '../api/outcome';
import type { Tone } from '../graph/MachineDiagram';

export function toneOf(state: string | undefined, shown: Shown | undefined): Tone {
  switch (state) {
    case 'completed':
      return shown === 'succeeded' ? 'ok' : shown === 'failed' ? 'bad' : 'neutral';
    case 'running':
      return 'info';
    case 'suspended':
    case 'backingOff':
      return 'warn';
    case 'paused':
      return 'violet';
    default:
      return 'neutral';
  }
}
