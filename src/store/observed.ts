/**
 * A store that tells what each commit changed, once it is durable: the source of the admin
 * UI's live updates. Listeners hear of a change only after `commit` resolved, so nothing is
 * made visible before the transition that caused it is stored (design.md, "The invariant").
 * With nobody listening a commit costs one size check more.
 */
import { DelegatingStore } from './delegating.js';
import type { HistoryEntry, RecordWrite, Store, Transition } from './types.js';

export interface StoreChange {
  partition: number;
  /**
   * Invocations the commit wrote (snapshot, journal or history): the new snapshot if it was
   * written, and the history entries it appended. Applied after `deleted`.
   */
  invocations: Array<{ id: string; snapshot?: unknown; history: HistoryEntry[] }>;
  deleted: string[];
  /** Record writes of the kinds the store was asked to report (`value: null` = deleted). */
  records: RecordWrite[];
  /** Objects / workflows whose K/V state the commit wrote. */
  state: Array<{ service: string; key: string }>;
}

export type ChangeListener = (change: StoreChange) => void;

export class ObservedStore extends DelegatingStore {
  private readonly listeners = new Set<ChangeListener>();
  private readonly recordKinds: ReadonlySet<string>;

  constructor(inner: Store, opts: { recordKinds: string[] }) {
    super(inner);
    this.recordKinds = new Set(opts.recordKinds);
  }

  /** Calls `listener` after every commit that changed something it reports; returns the unsubscribe. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  override async commit(t: Transition): Promise<void> {
    await this.inner.commit(t);
    if (this.listeners.size === 0) return;
    const change = changeOf(t, this.recordKinds);
    if (!change) return;
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure is its own; the commit has succeeded.
      }
    }
  }
}

/** What `t` changed that listeners care about, or undefined when nothing. */
function changeOf(t: Transition, recordKinds: ReadonlySet<string>): StoreChange | undefined {
  const byId = new Map<string, StoreChange['invocations'][number]>();
  const entry = (id: string) => {
    let e = byId.get(id);
    if (!e) byId.set(id, (e = { id, history: [] }));
    return e;
  };
  for (const inv of t.invocations ?? []) entry(inv.id).snapshot = inv.snapshot;
  for (const append of t.journal ?? []) if (append.entries.length > 0) entry(append.id);
  for (const h of t.history ?? []) entry(h.id).history.push(...h.entries);
  const records = (t.records ?? []).filter((r) => recordKinds.has(r.kind));
  const state = (t.state ?? []).map(({ service, key }) => ({ service, key }));
  const deleted = t.deleteInvocations ?? [];
  if (byId.size === 0 && records.length === 0 && state.length === 0 && deleted.length === 0) return undefined;
  return { partition: t.partition, invocations: [...byId.values()], deleted: [...deleted], records, state };
}
