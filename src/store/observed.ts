/**
 * A store that tells what each commit changed, once it is durable: the source of the admin
 * UI's live updates. Listeners hear of a change only after `commit` resolved, so nothing is
 * made visible before the transition that caused it is stored (design.md, "The invariant").
 * With nobody listening a commit costs one size check more.
 */
import type { Coordination, HistoryEntry, RecordWrite, Store, StoreInfo, Transition } from './types.js';

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

export class ObservedStore implements Store {
  private readonly listeners = new Set<ChangeListener>();
  private readonly recordKinds: ReadonlySet<string>;

  constructor(
    private readonly inner: Store,
    opts: { recordKinds: string[] },
  ) {
    this.recordKinds = new Set(opts.recordKinds);
  }

  /** Calls `listener` after every commit that changed something it reports; returns the unsubscribe. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get info(): StoreInfo {
    return this.inner.info;
  }

  get coordination(): Coordination | undefined {
    return this.inner.coordination;
  }

  async commit(t: Transition): Promise<void> {
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

  ping: Store['ping'] = () => this.inner.ping();
  loadInvocation: Store['loadInvocation'] = (...a) => this.inner.loadInvocation(...a);
  listInvocations: Store['listInvocations'] = (...a) => this.inner.listInvocations(...a);
  activeInvocations: Store['activeInvocations'] = (...a) => this.inner.activeInvocations(...a);
  readJournal: Store['readJournal'] = (...a) => this.inner.readJournal(...a);
  journalLength: Store['journalLength'] = (...a) => this.inner.journalLength(...a);
  readHistory: Store['readHistory'] = (...a) => this.inner.readHistory(...a);
  readState: Store['readState'] = (...a) => this.inner.readState(...a);
  readStateKey: Store['readStateKey'] = (...a) => this.inner.readStateKey(...a);
  dueTimers: Store['dueTimers'] = (...a) => this.inner.dueTimers(...a);
  nextTimer: Store['nextTimer'] = (...a) => this.inner.nextTimer(...a);
  outbox: Store['outbox'] = (...a) => this.inner.outbox(...a);
  getRecord: Store['getRecord'] = (...a) => this.inner.getRecord(...a);
  listRecords: Store['listRecords'] = (...a) => this.inner.listRecords(...a);
  loadRegistry: Store['loadRegistry'] = (...a) => this.inner.loadRegistry(...a);
  saveRegistry: Store['saveRegistry'] = (...a) => this.inner.saveRegistry(...a);
  close: Store['close'] = () => this.inner.close();
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
