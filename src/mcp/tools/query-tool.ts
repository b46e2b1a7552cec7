/** Read-only SQL over the sys_* tables: `/query`'s engine, so its allow-list (queries only) and its limits hold. */
import * as z from 'zod';
import type { McpDeps } from '../deps.js';
import { sqlRows } from '../sql.js';
import { answer, READ_ONLY, tool, type Tool } from '../tool.js';

export function queryTool(deps: McpDeps): Tool[] {
  return [
    tool('query', {
      title: 'Query with SQL',
      description:
        'One read-only SQL statement over the tables of POST /query: sys_invocation, sys_journal, sys_invocation_transitions, state, sys_service, sys_deployment, sys_inbox, sys_promise, sys_keyed_service_status and more (SHOW TABLES lists them). The same limits as /query apply (rows, bytes, time).',
      input: {
        sql: z
          .string()
          .describe("e.g. SELECT id, status FROM sys_invocation WHERE target_service_name = 'Cart' LIMIT 10"),
      },
      annotations: READ_ONLY,
      async run({ sql }) {
        const rows = await sqlRows(deps, sql);
        return answer(`${rows.length} rows.`, { rows });
      },
    }),
  ];
}
