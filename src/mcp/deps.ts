/** What the MCP endpoint's tools are given: the ingress's dependencies, and `/query`'s engine with its rows. */
import type { IngressDeps } from '../ingress/deps.js';
import type { QueryEngine } from '../query/engine.js';
import type { QuerySources } from '../query/rows.js';
import type { Logger } from '../telemetry/log.js';

export interface McpDeps extends IngressDeps {
  /** The one engine `/query` uses too: its allow-list, its limits, its turns. */
  engine: QueryEngine;
  sources: QuerySources;
  /** Tool failures that are bugs, not answers. */
  log: Logger;
}
