/** The operator's actions on one invocation, each confirmed; which are offered follows its status. */
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { invocationAction, type InvocationAction } from '../api/admin';
import { ConfirmButton } from '../components/Confirm';

const ACTIONS: Array<{
  action: InvocationAction;
  label: string;
  danger: boolean;
  when: (status: string) => boolean;
  explain: string;
}> = [
  {
    action: 'cancel',
    label: 'Cancel',
    danger: true,
    when: (s) => s !== 'completed',
    explain: 'The handler gets a cancellation and may run its compensations; then the invocation ends as cancelled.',
  },
  {
    action: 'kill',
    label: 'Kill',
    danger: true,
    when: (s) => s !== 'completed',
    explain: 'The invocation ends at once, without running anything more; calls it waits for are killed too.',
  },
  {
    action: 'pause',
    label: 'Pause',
    danger: false,
    when: (s) => ['running', 'suspended', 'backing-off'].includes(s),
    explain: 'No new attempt starts until it is resumed.',
  },
  // Resuming a backing-off invocation retries it at once (the admin API's resume).
  {
    action: 'resume',
    label: 'Retry now',
    danger: false,
    when: (s) => s === 'backing-off',
    explain: 'The next attempt starts now instead of when its backoff ends.',
  },
  {
    action: 'resume',
    label: 'Resume',
    danger: false,
    when: (s) => s === 'paused' || s === 'suspended',
    explain: 'A new attempt starts now.',
  },
  {
    action: 'restart-as-new',
    label: 'Restart as new',
    danger: false,
    when: (s) => s === 'completed',
    explain: 'A new invocation starts with the same input; this one stays as it is.',
  },
  {
    action: 'purge',
    label: 'Purge',
    danger: true,
    when: (s) => s === 'completed',
    explain: 'Its result, journal and history are deleted now.',
  },
];

/** `children` go first in the row (actions that need no confirmation, such as the export). */
export function Actions({
  id,
  status,
  onDone,
  children,
}: {
  id: string;
  status: string;
  onDone: () => void;
  children?: ComponentChildren;
}) {
  const { route } = useLocation();
  const [done, setDone] = useState<string>();
  return (
    <div class="row" aria-label="actions">
      {children}
      {ACTIONS.filter((a) => a.when(status)).map((a) => (
        <ConfirmButton
          key={a.label}
          label={a.label}
          danger={a.danger}
          title={`${a.label} this invocation?`}
          message={
            <>
              <p class="mono small">{id}</p>
              <p>{a.explain}</p>
            </>
          }
          confirmLabel={a.label}
          onConfirm={async () => {
            const answer = await invocationAction(id, a.action);
            setDone(`${a.label}: done`);
            if (answer?.new_invocation_id) route(`/ui/invocations/${answer.new_invocation_id}`);
            else onDone();
          }}
        />
      ))}
      {done && <span class="muted small">{done}</span>}
    </div>
  );
}
