/**
 * A handler's declared input and output as Restate reads them: the rules an ingress request's
 * body and content-type must meet, and the `input_description` / `output_description` the
 * admin API shows. Observed on restate-server 1.7.12 with zod-typed handlers: a JSON schema
 * with a `title` reads `JSON 'Person'`, else its `type` reads `JSON object`, `JSON string`, ….
 */
import type { HandlerMeta } from './types.js';

/**
 * One way a request may pass; it passes when one of its handler's rules accepts it.
 * `none`: no body and no content-type. `contentType`: a content-type matching the pattern
 * (`*\/*`, `text/*`, `application/json`). `json`: that, and a body (an empty one is no JSON).
 */
export type InputRule =
  { kind: 'none' } | { kind: 'contentType'; pattern: string } | { kind: 'json'; pattern: string; schema: unknown };

/** The rules of a handler's input, in the order they are tried. */
export function inputRules(input: HandlerMeta['input']): InputRule[] {
  const rules: InputRule[] = input.required ? [] : [{ kind: 'none' }];
  if (input.contentType !== undefined) {
    rules.push(
      input.jsonSchema === undefined
        ? { kind: 'contentType', pattern: input.contentType }
        : { kind: 'json', pattern: input.contentType, schema: input.jsonSchema },
    );
  }
  return rules;
}

/** Why the request fails `rule`, in the reference's words; undefined when it passes. */
function failure(rule: InputRule, contentType: string | undefined, body: Uint8Array): string | undefined {
  if (rule.kind === 'none') {
    if (body.length === 0 && contentType === undefined) return undefined;
    // The reference prints the header as Rust's Option debug form.
    return `Expected body and content-type to be empty, but wasn't with content-type '${contentType === undefined ? 'None' : `Some(${JSON.stringify(contentType)})`}'`;
  }
  if (contentType === undefined) return 'Empty content-type';
  if (!mediaTypeMatches(rule.pattern, contentType))
    return `Content-type '${contentType}' does not match '${rule.pattern}'`;
  if (rule.kind === 'json' && body.length === 0) return 'Empty body not allowed';
  return undefined;
}

/**
 * Why a request with this content-type and body may not invoke the handler (the failure of the
 * last rule tried, as the reference reports it), or undefined when one rule accepts it.
 */
export function inputFailure(
  input: HandlerMeta['input'],
  contentType: string | undefined,
  body: Uint8Array,
): string | undefined {
  let last = 'Bad configuration of the input validation rules';
  for (const rule of inputRules(input)) {
    const why = failure(rule, contentType, body);
    if (why === undefined) return undefined;
    last = why;
  }
  return last;
}

/** Whether a content-type matches a pattern: `*\/*`, `type/*` or `type/subtype`, parameters aside. */
function mediaTypeMatches(pattern: string, actual: string): boolean {
  const [pType, pSub] = pattern.trim().toLowerCase().split('/');
  const [aType, aSub] = actual.split(';')[0]!.trim().toLowerCase().split('/');
  if (aSub === undefined) return false;
  return (pType === '*' || pType === aType) && (pSub === '*' || pSub === aSub);
}

/** `JSON 'title'` or `JSON type` for a schema that says either, else undefined. */
function schemaDescription(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const { title, type } = schema as { title?: unknown; type?: unknown };
  if (typeof title === 'string') return `JSON '${title}'`;
  if (typeof type === 'string') return `JSON ${type}`;
  return undefined;
}

function ruleDescription(rule: InputRule): string {
  if (rule.kind === 'none') return 'none';
  return (rule.kind === 'json' ? schemaDescription(rule.schema) : undefined) ?? rule.pattern;
}

/** `input_description`: the rule beside `none`, or `none` alone. */
export function describeInput(input: HandlerMeta['input']): string {
  const rules = inputRules(input);
  const shown = rules.find((r) => r.kind !== 'none') ?? rules[0];
  return shown === undefined ? '<invalid rules>' : ruleDescription(shown);
}

/** `output_description`: the schema's, else the content-type (`optional …` when set on empty output), else `none`. */
export function describeOutput(output: HandlerMeta['output']): string {
  if (output.contentType === undefined) return 'none';
  return (
    schemaDescription(output.jsonSchema) ?? `${output.setContentTypeIfEmpty ? 'optional ' : ''}${output.contentType}`
  );
}
