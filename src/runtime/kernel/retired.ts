/**
 * Actors leave memory when they have nothing to do (a suspended invocation, a free key): the
 * store holds everything about them. A job that reaches an actor after it left is refused with
 * `ActorRetired`, and the cache runs it on the actor loaded in its place (`ActorCache.with`,
 * `ObjectLocks.with`), so two actors of one id never both work.
 */
export class ActorRetired extends Error {
  constructor(id: string) {
    super(`actor ${id} left memory; run the job on the one loaded in its place`);
    this.name = 'ActorRetired';
  }
}
