/**
 * A store that passes everything to another: the base of the wrappers that add one concern
 * to the store the rest of the server sees (observed.ts, held-writes.ts).
 */
import type { Coordination, Store, StoreInfo, Transition } from './types.js';

export class DelegatingStore implements Store {
  constructor(protected readonly inner: Store) {}

  get info(): StoreInfo {
    return this.inner.info;
  }

  get coordination(): Coordination | undefined {
    return this.inner.coordination;
  }

  commit(t: Transition): Promise<void> {
    return this.inner.commit(t);
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
