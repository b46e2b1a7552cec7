/**
 * Start-up recovery (design.md, "Supervisor and timers"): for every partition, rehydrate the
 * invocations whose committed state says they should be doing something (an attempt lost with
 * the previous process, a suspension whose awaited notification already arrived), re-drive the
 * outbox, and arm the earliest durable timer. Suspended and backing-off invocations stay
 * passive until their notification or timer comes.
 */
import type { Runtime } from './runtime.js';

export async function supervise(runtime: Runtime): Promise<{ resumed: number; redelivered: number }> {
  let resumed = 0;
  let redelivered = 0;
  for (let p = 0; p < runtime.config.partitions; p++) {
    for (const id of await runtime.store.activeInvocations(p)) {
      resumed++;
      await runtime.resume(id);
    }
    for (const message of await runtime.store.outbox(p)) {
      redelivered++;
      void runtime.deliverOne(p, message);
    }
    await runtime.timers.arm(p);
  }
  // Attach commands still waiting for their target wait again (they live only in journals).
  await runtime.recoverAttachments();
  return { resumed, redelivered };
}
