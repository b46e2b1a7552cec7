/**
 * The layering of design.md, checked on every `npm test`:
 *   main/server → mcp → ingress | admin | subscriptions → runtime | registry | query → model → store | protocol → telemetry,
 *   runtime.ts → runtime/operations.ts → runtime/services → runtime/invoker → runtime/kernel,
 *   machines/ pure (xstate only), no cycles anywhere.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'machines-are-pure',
      comment: 'machines/ holds XState definitions only: no I/O, nothing from src/ (design.md, "Layout").',
      severity: 'error',
      from: { path: '^machines/' },
      to: { path: '^src/' },
    },
    {
      name: 'nothing-imports-the-http-layers',
      comment:
        'ingress and admin translate HTTP into runtime calls; only the server wires them. The web UI (src/ui/, a browser bundle) takes the wire types of the admin routes it calls. The MCP endpoint (src/mcp/) is the same operations in another protocol: it calls what the routes call.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/(ingress|admin|ui|mcp)/', '^src/server\\.ts$'] },
      to: { path: '^src/(ingress|admin|mcp)/' },
    },
    {
      name: 'the-routes-do-not-know-mcp',
      comment: 'src/mcp/ calls what the ingress and admin routes call; only the server mounts it on the admin port.',
      severity: 'error',
      from: { path: '^src/(ingress|admin|ui)/' },
      to: { path: '^src/mcp/' },
    },
    {
      name: 'http-is-the-floor-of-the-ports',
      comment:
        'src/http/ (listener, bearer auth, the serde_json reader) serves the ingress and the admin API; it knows neither, and nothing below them uses it.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(ingress|admin|mcp|runtime|registry|query|subscriptions|cluster)/' },
    },
    {
      name: 'only-the-ports-use-the-http-floor',
      severity: 'error',
      from: { path: '^src/(runtime|registry|query|store|protocol|model|cluster|subscriptions|telemetry)/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'ingress-and-admin-stay-apart',
      severity: 'error',
      from: { path: '^src/ingress/' },
      to: { path: '^src/admin/' },
    },
    {
      name: 'runtime-does-not-query',
      severity: 'error',
      from: { path: '^src/(runtime|registry|store|protocol)/' },
      to: { path: '^src/query/' },
    },
    {
      name: 'lower-layers-stay-low',
      comment: 'store and protocol are the bottom: they know nothing of the runtime, the registry or the query engine.',
      severity: 'error',
      from: { path: '^src/(store|protocol)/' },
      to: { path: '^src/(runtime|registry|query)/' },
    },
    {
      name: 'telemetry-is-a-leaf',
      comment: 'logs, metrics and traces are used by every layer, so they use none of them (config types aside).',
      severity: 'error',
      from: { path: '^src/telemetry/' },
      to: { path: '^src/', pathNot: ['^src/telemetry/', '^src/config\\.ts$'] },
    },
    {
      name: 'model-is-the-floor-of-what-is-stored',
      comment:
        'src/model/ says what the runtime stores (persisted forms, ids, partitioning, state owners, timers) for every reader; it knows nothing of those who read or write it.',
      severity: 'error',
      from: { path: '^src/model/' },
      to: { path: '^src/(runtime|registry|query|ingress|admin|subscriptions|cluster)/' },
    },
    {
      name: 'store-below-the-model',
      severity: 'error',
      from: { path: '^src/(store|protocol)/' },
      to: { path: '^src/model/' },
    },
    {
      name: 'readers-do-not-reach-into-the-runtime',
      comment:
        'outside src/runtime/, the runtime is runtime.ts and types.ts; what it stores is read through src/model/.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/runtime/' },
      to: { path: '^src/runtime/(kernel|invoker|services)/' },
    },
    {
      name: 'registry-below-runtime',
      severity: 'error',
      from: { path: '^src/registry/' },
      to: { path: '^src/runtime/' },
    },
    {
      name: 'kernel-is-the-bottom-of-the-runtime',
      severity: 'error',
      from: { path: '^src/runtime/kernel/' },
      to: { path: '^src/runtime/(invoker|services)/|^src/runtime/(runtime|operations)\\.ts$' },
    },
    {
      name: 'invoker-below-services',
      severity: 'error',
      from: { path: '^src/runtime/invoker/' },
      to: { path: '^src/runtime/services/|^src/runtime/(runtime|operations)\\.ts$' },
    },
    {
      name: 'services-below-the-composition-root',
      severity: 'error',
      from: { path: '^src/runtime/services/' },
      to: { path: '^src/runtime/(runtime|operations)\\.ts$' },
    },
    {
      name: 'only-the-server-starts-subscriptions',
      comment:
        'src/subscriptions/ consumes brokers into invocations; the server wires it, the query engine gets its progress as a function.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/subscriptions/', '^src/server\\.ts$'] },
      to: { path: '^src/subscriptions/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
