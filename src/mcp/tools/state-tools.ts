/**
 * A virtual object's or workflow's state, key by key: read through `/query`'s `state` table,
 * written as the admin's POST /services/{name}/state writes it (the whole state at once,
 * between two exclusive invocations of the key).
 */
import * as z from 'zod';
import { serviceNamed } from '../../admin/routes/services.js';
import { modifyServiceState } from '../../admin/routes/service-state.js';
import { InvalidRequest } from '../../errors.js';
import type { McpDeps } from '../deps.js';
import { sqlRows, sqlString } from '../sql.js';
import { answer, DESTRUCTIVE, READ_ONLY, tool, type Tool } from '../tool.js';
import { bodyOf, shownValue } from '../values.js';

const service = z.string().describe('A virtual object or workflow');
const key = z.string().describe('The object key or workflow id');

export function stateTools(deps: McpDeps): Tool[] {
  return [
    tool('get_state', {
      title: "Read a key's state",
      description:
        'Every state entry of one virtual-object key or workflow id: each value shown as JSON when it is JSON, else as text or base64.',
      input: { service, key },
      annotations: READ_ONLY,
      async run(args) {
        const meta = serviceNamed(deps.registry, args.service);
        if (meta.ty === 'Service') throw new InvalidRequest(`'${meta.name}' is a plain service: it has no state`);
        const rows = await sqlRows(
          deps,
          `SELECT key, value FROM state WHERE service_name = ${sqlString(meta.name)} AND service_key = ${sqlString(args.key)} AND scope IS NULL ORDER BY key`,
        );
        const entries = rows.map((r) => ({
          name: String(r['key']),
          ...shownValue(Buffer.from(String(r['value'] ?? ''), 'hex')),
        }));
        const state = Object.fromEntries(entries.map((e) => [e.name, 'value' in e ? e.value : null]));
        const encodings = Object.fromEntries(entries.map((e) => [e.name, e.encoding]));
        const summary =
          entries.length === 0
            ? `${meta.name}/${args.key} has no state.`
            : `${meta.name}/${args.key}: ${entries.map((e) => e.name).join(', ')}`;
        return answer(summary, { service: meta.name, key: args.key, state, encodings });
      },
    }),
    tool('set_state', {
      title: "Replace a key's state",
      description:
        'Replaces the whole state of one virtual-object key or workflow id with `state` (entries left out are deleted; each value is stored as its JSON text, which the SDKs read by default). It lands between two exclusive invocations of the key; answers once it is stored.',
      input: { service, key, state: z.record(z.string(), z.unknown()).describe('Entry name → value (JSON)') },
      annotations: DESTRUCTIVE,
      async run(args) {
        const newState = new Map(
          Object.entries(args.state).map(([name, value]) => [name, bodyOf(value, undefined).body]),
        );
        await modifyServiceState(deps.runtime, deps.registry, args.service, { objectKey: args.key, newState });
        return answer(`Stored the new state of ${args.service}/${args.key} (${newState.size} entries).`, {
          service: args.service,
          key: args.key,
          entries: [...newState.keys()],
        });
      },
    }),
  ];
}
