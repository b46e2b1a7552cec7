/**
 * What each ingress request records: Restate's ingress metrics (`restate_ingress_requests_total`,
 * `restate_ingress_request_duration_seconds`) and, when tracing is on, the request's span. The
 * middleware sits inside the error funnel, so it sees a route's error before it becomes a
 * response; routes add what they learn (the service, the target, the invocation id) through
 * `requestTelemetry(ctx)`.
 */
import type { Context, Next } from 'koa';
import { IngressError } from './errors.js';
import type { TargetFields } from '../telemetry/log.js';
import {
  ingressRequestDuration,
  recordIngressAdmitted,
  recordIngressOutcome,
  type IngressRequestStatus,
  type IngressRpc,
} from '../telemetry/metrics.js';
import { startIngressSpan, type TraceSpan } from '../telemetry/tracing.js';

export class RequestTelemetry {
  private readonly startedAt = performance.now();
  private rpc: IngressRpc | undefined;

  constructor(readonly span: TraceSpan | undefined) {}

  /**
   * The request calls or sends to a registered service: its outcome and duration are counted
   * under the service's name. Names the registry does not know never become label values, so
   * requests to made-up paths cannot grow the number of series.
   */
  service(name: string, type: 'call' | 'send'): void {
    this.rpc = { rpc_service: name, rpc_type: type };
  }

  /** The handler the request invokes: names the span. */
  target(target: TargetFields): void {
    this.span?.setTarget(target);
  }

  invocation(invocationId: string): void {
    this.span?.setInvocationId(invocationId);
  }

  finish(status: IngressRequestStatus, httpStatus: number, error: string | undefined): void {
    if (this.rpc) {
      recordIngressOutcome(status, this.rpc);
      ingressRequestDuration.observe(this.rpc, (performance.now() - this.startedAt) / 1000);
    }
    if (this.span) {
      this.span.setAttributes({ 'http.response.status_code': httpStatus });
      if (error !== undefined) this.span.fail(error);
      this.span.end();
    }
  }
}

/** The telemetry of the request `ctx` belongs to (absent outside the ingress app). */
export function requestTelemetry(ctx: Context): RequestTelemetry | undefined {
  return (ctx.state as { telemetry?: RequestTelemetry }).telemetry;
}

/** Restate's `status` label for a failed request (its ingress `request_metric_status`). */
function failureStatus(err: unknown): IngressRequestStatus {
  if (err instanceof IngressError) {
    if (err.source === 'invocation') return 'invocation_error';
    if (err.status < 500) return 'request_error';
  }
  return 'ingress_error';
}

export async function ingressTelemetry(ctx: Context, next: Next): Promise<void> {
  recordIngressAdmitted();
  const socket = ctx.req.socket;
  const telemetry = new RequestTelemetry(
    startIngressSpan({
      method: ctx.method,
      path: ctx.path,
      traceparent: ctx.get('traceparent') || undefined,
      clientAddress: socket.remoteAddress,
      clientPort: socket.remotePort,
    }),
  );
  (ctx.state as { telemetry?: RequestTelemetry }).telemetry = telemetry;
  try {
    await next();
  } catch (err) {
    telemetry.finish(
      failureStatus(err),
      err instanceof IngressError ? err.status : 500,
      err instanceof Error ? err.message : String(err),
    );
    throw err;
  }
  telemetry.finish(ctx.status >= 400 ? 'invocation_error' : 'completed', ctx.status, undefined);
}
