/**
 * Loads what a page shows, and loads it again when the server reports a change it cares
 * about (live updates, not polling). Reloads triggered by a burst of commits are coalesced.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { onLive, type LiveChange } from '../api/live';

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
}

export interface LoadOptions {
  /** Which live changes make the data stale; none: load once (and on `deps` changes). */
  staleOn?: (change: LiveChange) => boolean;
  /** Live reloading can be paused by the page (e.g. the invocations table's "live" switch). */
  live?: boolean;
}

const COALESCE_MS = 250;

export function useLoad<T>(load: () => Promise<T>, deps: unknown[], opts: LoadOptions = {}): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: Error | undefined; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const staleOn = useRef(opts.staleOn);
  staleOn.current = opts.staleOn;

  const run = () => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    loadRef.current().then(
      (data) => mine === generation.current && setState({ data, error: undefined, loading: false }),
      (error: unknown) =>
        mine === generation.current &&
        setState((s) => ({
          data: s.data,
          error: error instanceof Error ? error : new Error(String(error)),
          loading: false,
        })),
    );
  };

  useEffect(() => {
    setState({ data: undefined, error: undefined, loading: true });
    run();
  }, deps);

  const live = opts.live ?? true;
  useEffect(() => {
    if (!staleOn.current || !live) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unsubscribe = onLive((change) => {
      if (change !== 'reconnected' && !staleOn.current?.(change)) return;
      timer ??= setTimeout(() => {
        timer = undefined;
        run();
      }, COALESCE_MS);
    });
    return () => {
      unsubscribe();
      clearTimeout(timer);
    };
  }, [...deps, live]);

  return { ...state, reload: run };
}
