/** What the ingress routes are given: the runtime they drive, the registry they check targets against, the config. */
import type { TokenSet } from '../http/bearer-auth.js';
import type { Config } from '../config.js';
import type { Registry } from '../registry/registry.js';
import type { Runtime } from '../runtime/runtime.js';

export interface IngressDeps {
  runtime: Runtime;
  registry: Registry;
  config: Config;
  /** Readiness for `/restate/health`: rejects with `StoreUnavailable` while the store is unreachable. */
  ready(): Promise<void>;
  /** Bearer tokens the ingress requires (src/bearer-auth.ts). Default: none, the ingress is open. */
  tokens?: TokenSet;
}
