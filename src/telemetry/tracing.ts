/**
 * OpenTelemetry traces, exported over OTLP/HTTP when `REDSTATE_TRACING_ENDPOINT` is set.
 * Without it the OpenTelemetry packages are never imported (`startTracing` imports them) and
 * every `start…Span` returns undefined, so call sites cost one `?.` each.
 *
 * Spans follow Restate's: `ingress Greeter/greet` per ingress request (a child of the client's
 * `traceparent` when it sends one), `attempt Greeter/greet` per invocation attempt (a child of
 * the ingress span that created the invocation), with `rpc.service`, `rpc.method`,
 * `restate.invocation.id`, `restate.invocation.target`, and journal events as span events.
 * Parents travel as W3C `traceparent` strings, which is what can be stored with an invocation
 * and sent to a service.
 */
import type { Attributes, Context, Span, Tracer, TextMapPropagator } from '@opentelemetry/api';
import { LogField, targetName, type TargetFields } from './log.js';

type OtelApi = typeof import('@opentelemetry/api');

interface ActiveTracing {
  api: OtelApi;
  tracer: Tracer;
  propagator: TextMapPropagator;
  shutdown(): Promise<void>;
}

let active: ActiveTracing | undefined;

/** Span event names and attributes for journal events, as Restate names them. */
export const JournalEvent = {
  newCommand: 'restate.invocation.lifecycle.new_command',
  runEnded: 'restate.invocation.lifecycle.run_ended',
  suspended: 'restate.invocation.lifecycle.suspended',
  yielded: 'restate.invocation.lifecycle.yielded',
  /** Attribute: the command's type (`Call`, `Sleep`, `SetState`…). */
  commandType: 'restate.journal.command.type',
  /** Attribute: the name the handler gave the command, if any. */
  commandName: 'restate.journal.command.name',
  /** Attribute: the completion id or signal a notification answers. */
  notificationId: 'restate.journal.notification.id',
} as const;

/** Where spans are POSTed: the OTLP/HTTP traces path under `endpoint`, unless it names one. */
export function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (!url.pathname.endsWith('/v1/traces')) url.pathname = `${url.pathname.replace(/\/$/, '')}/v1/traces`;
  return url.toString();
}

/** Loads OpenTelemetry and starts exporting spans to `endpoint` in batches. */
export async function startTracing(endpoint: string): Promise<void> {
  const [api, core, sdk, otlp, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': 'redstate' }),
    spanProcessors: [
      // Exports at most once a second: spans never wait for the collector.
      new sdk.BatchSpanProcessor({
        exporter: new otlp.OTLPTraceExporter({ url: tracesUrl(endpoint) }),
        scheduledDelayMillis: 1000,
      }),
    ],
  });
  active = {
    api,
    tracer: provider.getTracer('redstate'),
    propagator: new core.W3CTraceContextPropagator(),
    shutdown: () => provider.shutdown(),
  };
}

/** Exports what is still buffered and stops. */
export async function stopTracing(): Promise<void> {
  const tracing = active;
  active = undefined;
  await tracing?.shutdown();
}

/** One span; every method is cheap and safe to call after `end`. */
export class TraceSpan {
  constructor(
    private readonly span: Span,
    private readonly tracing: ActiveTracing,
    private readonly prefix: string,
  ) {}

  /** Names the span for its target (`ingress Greeter/greet`) and records the target's attributes. */
  setTarget(target: TargetFields): void {
    this.span.updateName(`${this.prefix} ${target.service}/${target.handler}`);
    this.span.setAttributes({
      [LogField.rpcService]: target.service,
      [LogField.rpcMethod]: target.handler,
      [LogField.invocationTarget]: targetName(target),
    });
  }

  setInvocationId(invocationId: string): void {
    this.span.setAttribute(LogField.invocationId, invocationId);
  }

  setAttributes(attributes: Attributes): void {
    this.span.setAttributes(attributes);
  }

  /** A journal event (see `JournalEvent`) or any other point in time worth seeing on the span. */
  event(name: string, attributes?: Attributes): void {
    this.span.addEvent(name, attributes);
  }

  /** Marks the span failed; `end` still has to be called. */
  fail(message: string): void {
    this.span.setStatus({ code: this.tracing.api.SpanStatusCode.ERROR, message });
  }

  /** This span as a W3C `traceparent`: the parent to store with an invocation or send to a service. */
  traceparent(): string {
    const carrier: Record<string, string> = {};
    const ctx = this.tracing.api.trace.setSpan(this.tracing.api.ROOT_CONTEXT, this.span);
    this.tracing.propagator.inject(ctx, carrier, this.tracing.api.defaultTextMapSetter);
    return carrier['traceparent'] ?? '';
  }

  end(): void {
    this.span.end();
  }
}

function parentContext(tracing: ActiveTracing, traceparent: string | undefined): Context {
  const root = tracing.api.ROOT_CONTEXT;
  if (!traceparent) return root;
  return tracing.propagator.extract(root, { traceparent }, tracing.api.defaultTextMapGetter);
}

export interface IngressSpanStart {
  method: string;
  path: string;
  /** The client's `traceparent` header, if any: the span's parent. */
  traceparent?: string | undefined;
  clientAddress?: string | undefined;
  clientPort?: number | undefined;
}

/**
 * The span of one ingress request, named `ingress-http-request` until the route knows its target
 * (`setTarget`). Undefined when tracing is off.
 */
export function startIngressSpan(req: IngressSpanStart): TraceSpan | undefined {
  const tracing = active;
  if (!tracing) return undefined;
  const attributes: Attributes = { 'http.request.method': req.method, 'url.path': req.path };
  if (req.clientAddress) attributes['client.socket.address'] = req.clientAddress;
  if (req.clientPort) attributes['client.socket.port'] = req.clientPort;
  const span = tracing.tracer.startSpan(
    'ingress-http-request',
    { kind: tracing.api.SpanKind.SERVER, attributes },
    parentContext(tracing, req.traceparent),
  );
  return new TraceSpan(span, tracing, 'ingress');
}

export interface AttemptSpanStart {
  invocationId: string;
  target: TargetFields;
  /** 1 for the first attempt. */
  attempt: number;
  deploymentId?: string;
  /** The `traceparent` stored with the invocation (the ingress span that created it), if any. */
  parent?: string | undefined;
}

/**
 * The span of one invocation attempt: `attempt Greeter/greet`, a child of `parent`. Its
 * `traceparent()` is what the service gets in the invocation's headers. Undefined when
 * tracing is off.
 */
export function startAttemptSpan(start: AttemptSpanStart): TraceSpan | undefined {
  const tracing = active;
  if (!tracing) return undefined;
  const attributes: Attributes = {
    [LogField.invocationId]: start.invocationId,
    'restate.invocation.attempt': start.attempt,
  };
  if (start.deploymentId) attributes[LogField.deploymentId] = start.deploymentId;
  const span = tracing.tracer.startSpan(
    'attempt',
    { kind: tracing.api.SpanKind.CLIENT, attributes },
    parentContext(tracing, start.parent),
  );
  const traced = new TraceSpan(span, tracing, 'attempt');
  traced.setTarget(start.target);
  return traced;
}
