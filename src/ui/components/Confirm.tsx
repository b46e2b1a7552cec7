/**
 * A button whose action runs only after the user confirmed it in a dialog (the native
 * <dialog>, so focus and Escape behave as the browser does).
 */
import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';

interface ConfirmProps {
  label: ComponentChildren;
  title: string;
  message: ComponentChildren;
  confirmLabel?: string;
  danger?: boolean;
  disabled?: boolean;
  onConfirm: () => Promise<unknown>;
}

export function ConfirmButton({
  label,
  title,
  message,
  confirmLabel = 'Confirm',
  danger,
  disabled,
  onConfirm,
}: ConfirmProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await onConfirm();
      dialog.current?.close();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button class={danger ? 'danger' : ''} disabled={disabled} onClick={() => dialog.current?.showModal()}>
        {label}
      </button>
      <dialog ref={dialog}>
        <h2>{title}</h2>
        <div>{message}</div>
        {error && <p class="error">{error}</p>}
        <div class="actions">
          <button onClick={() => dialog.current?.close()}>Back</button>
          <button class="primary" disabled={busy} onClick={confirm}>
            {busy ? 'Working…' : confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}
