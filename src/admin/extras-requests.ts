/**
 * Decoding of the Kafka-cluster, subscription and limit-rule bodies and ids (reference-behavior.md
 * §3.7, §3.8) with serde's wording, as requests.ts does for deployments: 422
 * `Failed to deserialize the JSON body into the target type: [<path>: ]<message> at line L column C`.
 * Unknown fields are ignored, as serde does by default.
 */
import { AdminError, AdminTextError } from './errors.js';
import type { Precondition, RuleUpsert } from '../registry/extras.js';
import { checkSubscriptionId, checkVqueueId } from '../registry/resource-id.js';
import { describeUnexpected, type JsonDocument, type JsonNode } from '../http/serde-json.js';

type ObjectNode = Extract<JsonNode, { kind: 'object' }>;

const DESERIALIZE = 'Failed to deserialize the JSON body into the target type: ';

/** A serde error at `path` (empty for the root), positioned after `consumed` bytes. */
export class Decoder {
  constructor(private readonly doc: JsonDocument) {}

  fail(path: string, message: string, consumed: number): AdminTextError {
    const p = this.doc.position(consumed);
    return new AdminTextError(
      422,
      `${DESERIALIZE}${path ? `${path}: ` : ''}${message} at line ${p.line} column ${p.column}`,
    );
  }

  /** The struct's known fields (duplicates refused), or a type error naming the struct. */
  struct(
    node: JsonNode,
    path: string,
    name: string,
    fields: string[],
  ): { node: ObjectNode; get: (f: string) => JsonNode | undefined } {
    if (node.kind !== 'object')
      throw this.fail(path, `invalid type: ${describeUnexpected(node)}, expected struct ${name}`, node.at);
    const found = new Map<string, JsonNode>();
    for (const [k, v] of node.entries) {
      if (!fields.includes(k)) continue;
      if (found.has(k)) throw this.fail(path, `duplicate field \`${k}\``, v.at);
      found.set(k, v);
    }
    return { node, get: (f) => found.get(f) };
  }

  required(obj: { node: ObjectNode; get: (f: string) => JsonNode | undefined }, path: string, field: string): JsonNode {
    const v = obj.get(field);
    if (v === undefined) throw this.fail(path, `missing field \`${field}\``, obj.node.end);
    return v;
  }

  string(node: JsonNode, path: string): string {
    if (node.kind !== 'string')
      throw this.fail(path, `invalid type: ${describeUnexpected(node)}, expected a string`, node.at);
    return node.value;
  }

  bool(node: JsonNode, path: string): boolean {
    if (node.kind !== 'bool')
      throw this.fail(path, `invalid type: ${describeUnexpected(node)}, expected a boolean`, node.at);
    return node.value;
  }

  u32(node: JsonNode, path: string, nonzero: boolean): number {
    const expected = nonzero ? 'a nonzero u32' : 'u32';
    if (node.kind !== 'number' || !node.integer)
      throw this.fail(path, `invalid type: ${describeUnexpected(node)}, expected ${expected}`, node.at);
    if (node.value < (nonzero ? 1 : 0) || node.value > 0xffffffff) {
      throw this.fail(path, `invalid value: integer \`${node.text}\`, expected ${expected}`, node.at);
    }
    return node.value;
  }

  stringMap(node: JsonNode, path: string): Record<string, string> {
    if (node.kind !== 'object')
      throw this.fail(path, `invalid type: ${describeUnexpected(node)}, expected a map`, node.at);
    const out: Record<string, string> = {};
    for (const [k, v] of node.entries) out[k] = this.string(v, path ? `${path}.${k}` : k);
    return out;
  }
}

export const isNull = (n: JsonNode | undefined): n is undefined => n === undefined || n.kind === 'null';

export function decodeCreateCluster(doc: JsonDocument): { name: string; properties: Record<string, string> } {
  const d = new Decoder(doc);
  const obj = d.struct(doc.root, '', 'CreateKafkaClusterRequest', ['name', 'properties']);
  const name = d.string(d.required(obj, '', 'name'), 'name');
  const properties = d.stringMap(d.required(obj, '', 'properties'), 'properties');
  return { name, properties };
}

export function decodeUpdateCluster(doc: JsonDocument): Record<string, string> {
  const d = new Decoder(doc);
  const obj = d.struct(doc.root, '', 'UpdateKafkaClusterRequest', ['properties']);
  return d.stringMap(d.required(obj, '', 'properties'), 'properties');
}

export function decodeCreateSubscription(doc: JsonDocument): {
  source: string;
  sink: string;
  options?: Record<string, string>;
} {
  const d = new Decoder(doc);
  const obj = d.struct(doc.root, '', 'CreateSubscriptionRequest', ['source', 'sink', 'options']);
  const source = d.string(d.required(obj, '', 'source'), 'source');
  const sink = d.string(d.required(obj, '', 'sink'), 'sink');
  const options = obj.get('options');
  return isNull(options) ? { source, sink } : { source, sink, options: d.stringMap(options, 'options') };
}

/**
 * A rule pattern: up to three `/`-separated components (scope, then limit-key levels), each
 * `*` or 1–36 characters of [a-zA-Z0-9_.-] (§3.8, §5: components are at most 36 bytes).
 */
function patternProblem(pattern: string): string | undefined {
  const parts = pattern.split('/');
  if (parts.length > 3) return 'too many components: at most 3 are allowed';
  for (const part of parts) {
    if (part === '*') continue;
    if (part.length === 0) return 'invalid component: value is empty';
    if (!/^[a-zA-Z0-9_.-]+$/.test(part))
      return 'invalid component: value contains characters outside the allowed set [a-zA-Z0-9_.-]';
    if (part.length > 36) return 'invalid component: value is longer than 36 bytes';
  }
  return undefined;
}

function pattern(d: Decoder, node: JsonNode, path: string): string {
  const value = d.string(node, path);
  const problem = patternProblem(value);
  if (problem) throw d.fail(path, problem, node.at);
  return value;
}

function elements(d: Decoder, doc: JsonDocument): JsonNode[] {
  const root = doc.root;
  if (root.kind !== 'array')
    throw d.fail('', `invalid type: ${describeUnexpected(root)}, expected a sequence`, root.at);
  return root.items;
}

function precondition(d: Decoder, node: JsonNode, path: string): Precondition {
  const obj = d.struct(node, path, 'Precondition', ['type', 'version']);
  const tyNode = d.required(obj, path, 'type');
  const ty = d.string(tyNode, path);
  if (ty === 'none' || ty === 'does_not_exist') return { type: ty };
  if (ty === 'matches')
    return { type: 'matches', version: d.u32(d.required(obj, path, 'version'), `${path}.version`, false) };
  throw d.fail(path, `unknown variant \`${ty}\`, expected one of \`none\`, \`matches\`, \`does_not_exist\``, tyNode.at);
}

/** `PUT /limits/rules`: an array of `UpsertRuleRequest`. */
export function decodeUpsertRules(doc: JsonDocument): RuleUpsert[] {
  const d = new Decoder(doc);
  return elements(d, doc).map((item, i) => {
    const at = `[${i}]`;
    const obj = d.struct(item, at, 'UpsertRuleRequest', [
      'pattern',
      'limits',
      'description',
      'disabled',
      'precondition',
    ]);
    const rule: RuleUpsert = {
      pattern: pattern(d, d.required(obj, at, 'pattern'), `${at}.pattern`),
      disabled: false,
      precondition: { type: 'none' },
    };
    const limits = obj.get('limits');
    if (!isNull(limits)) {
      const l = d.struct(limits, `${at}.limits`, 'UserLimits', ['concurrency', 'rate', 'backlog']);
      const c = l.get('concurrency');
      if (!isNull(c)) rule.concurrency = d.u32(c, `${at}.limits.concurrency`, true);
      // Ours, beyond the reference: invocations started per second.
      const rate = l.get('rate');
      if (!isNull(rate)) rule.rate = d.u32(rate, `${at}.limits.rate`, true);
      // Ours too: how many may wait in a bucket before new requests are refused (0: none may).
      const backlog = l.get('backlog');
      if (!isNull(backlog)) rule.backlog = d.u32(backlog, `${at}.limits.backlog`, false);
    }
    const description = obj.get('description');
    if (!isNull(description)) rule.description = d.string(description, `${at}.description`);
    const disabled = obj.get('disabled');
    if (disabled !== undefined) rule.disabled = d.bool(disabled, `${at}.disabled`);
    const pre = obj.get('precondition');
    if (pre !== undefined) rule.precondition = precondition(d, pre, `${at}.precondition`);
    return rule;
  });
}

/** `POST /limits/rules/bulk-delete`: an array of `DeleteRuleRequest`. */
export function decodeDeleteRules(doc: JsonDocument): Array<{ pattern: string; expectedVersion?: number }> {
  const d = new Decoder(doc);
  return elements(d, doc).map((item, i) => {
    const at = `[${i}]`;
    const obj = d.struct(item, at, 'DeleteRuleRequest', ['pattern', 'expected_version']);
    const out: { pattern: string; expectedVersion?: number } = {
      pattern: pattern(d, d.required(obj, at, 'pattern'), `${at}.pattern`),
    };
    const expected = obj.get('expected_version');
    if (!isNull(expected)) out.expectedVersion = d.u32(expected, `${at}.expected_version`, false);
    return out;
  });
}

/** `{subscription}` path parameter: a 400 text, as `{deployment}` (§3.7). */
export function subscriptionParam(value: string): string {
  const check = checkSubscriptionId(value);
  if (!check.ok)
    throw new AdminTextError(
      400,
      `Invalid URL: Cannot parse \`subscription\` with value \`${value}\`: ${check.reason}`,
    );
  return value;
}

/** `{vqueue_id}`: parsed by the handler, so a JSON 400 (§3.8). */
export function vqueueParam(value: string): string {
  const check = checkVqueueId(value);
  if (!check.ok) throw new AdminError(400, `The request field 'vqueue_id' is invalid. Reason: ${check.reason}`);
  return value;
}
