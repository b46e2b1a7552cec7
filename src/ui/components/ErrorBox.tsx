/** A failed load or action, with the server's message. */
export function ErrorBox({ error }: { error: Error | string | undefined }) {
  if (!error) return null;
  return <div class="error">{typeof error === 'string' ? error : error.message}</div>;
}
