/** What the ingress routes are given: the runtime they drive, the registry they check targets against, the config. */
import type { Config } from '../config.js';
import type { Registry } from '../registry/registry.js';
import type { Runtime } from '../runtime/runtime.js';

export interface IngressDeps {
  runtime: Runtime;
  registry: Registry;
  config: Config;
}
