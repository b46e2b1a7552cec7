/** An invocation status as a coloured pill; completed ones say how they ended. */
export function StatusBadge({ status, result }: { status: string; result?: string | undefined }) {
  const shown = status === 'completed' && result ? (result === 'success' ? 'succeeded' : 'failed') : status;
  return <span class={`badge s-${shown}`}>{shown}</span>;
}
