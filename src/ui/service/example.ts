/**
 * An example value for a JSON schema, to start the playground's body with: the schema's own
 * `examples` / `default` / `const` / first `enum` value where it has one, else an empty value
 * of its type; objects get their required properties (all of them when none is required).
 * `$ref`s into the document's definitions are followed, not past a small depth.
 */
type Schema = Record<string, unknown>;

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

function resolve(schema: Schema, root: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let node: unknown = root;
  for (const part of ref.slice(2).split('/'))
    node = isSchema(node) ? node[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return isSchema(node) ? node : {};
}

export function exampleOf(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (!isSchema(schema) || depth > 6) return null;
  const s = resolve(schema, isSchema(root) ? root : {});
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const variants = s.oneOf ?? s.anyOf;
  if (Array.isArray(variants) && variants.length > 0) return exampleOf(variants[0], root, depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  switch (type) {
    case 'object': {
      const props = isSchema(s.properties) ? s.properties : {};
      const required = Array.isArray(s.required) ? (s.required as string[]) : Object.keys(props);
      return Object.fromEntries(
        required.filter((k) => k in props).map((k) => [k, exampleOf(props[k], root, depth + 1)]),
      );
    }
    case 'array':
      return [];
    case 'string':
      return '';
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : 0;
    case 'boolean':
      return false;
    default:
      return isSchema(s.properties) ? exampleOf({ ...s, type: 'object' }, root, depth + 1) : null;
  }
}
