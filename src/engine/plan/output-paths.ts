/**
 * Whether a path into a tool's `structuredContent` can exist under the tool's `outputSchema` (pure). A path is
 * refused only where the schema rules it out: a key that is not among an object's declared `properties` (nor
 * matched by `patternProperties`, nor allowed by an `additionalProperties` that is a schema or `true`), an index
 * into something that is not an array, or a key into an array or a scalar. Where the schema says nothing (no
 * `type`, an unreadable `$ref`, `true`), anything may be there.
 */

type Schema = Record<string, unknown>;

// `$ref` chains and combinators nest; a schema deeper than this is taken as allowing anything rather than walked.
const MAX_DEPTH = 32;

/** Why `path` cannot exist under `schema` (naming the first segment that cannot), or null when it may. */
export function outputPathProblem(schema: Schema, path: readonly (string | number)[]): string | null {
  let options: Schema[] = [schema];
  for (const [i, seg] of path.entries()) {
    const next: Schema[] = [];
    let open = false;
    for (const s of options.flatMap((o) => alternatives(schema, o, 0))) {
      const found = step(s, seg);
      if (found === 'any') open = true;
      else next.push(...found);
    }
    if (open) return null;
    if (next.length === 0)
      return `structuredContent${describe(path.slice(0, i + 1))} cannot exist: ${why(options, seg)}`;
    options = next;
  }
  return null;
}

/** What one segment leads to in one schema: the schemas it may have there, none, or `any` (the schema is silent). */
function step(s: Schema, seg: string | number): Schema[] | 'any' {
  const types = typesOf(s);
  if (typeof seg === 'number') {
    if (types && !types.includes('array')) return [];
    const items = Array.isArray(s.prefixItems) ? (s.prefixItems as unknown[])[seg] : undefined;
    const item = items ?? s.items;
    if (item === undefined || item === true) return 'any';
    return isSchema(item) ? [item] : [];
  }
  if (types && !types.includes('object')) return [];
  const props = isSchema(s.properties) ? s.properties : undefined;
  const own = props && Object.prototype.hasOwnProperty.call(props, seg) ? props[seg] : undefined;
  if (own !== undefined) return isSchema(own) ? [own] : own === true ? 'any' : [];
  if (isSchema(s.patternProperties)) {
    for (const [pattern, sub] of Object.entries(s.patternProperties)) {
      if (safeTest(pattern, seg)) return isSchema(sub) ? [sub] : 'any';
    }
  }
  const extra = s.additionalProperties;
  if (isSchema(extra)) return [extra];
  if (extra === false) return [];
  // Nothing declared at all: an object the schema does not describe.
  if (!props && !isSchema(s.patternProperties)) return 'any';
  // Declared properties and no word on others: the schema is the server's contract, and the key is not in it.
  return extra === true ? 'any' : [];
}

/** A schema with local `$ref`s followed and `anyOf` / `oneOf` spread out (each may be the one that holds). */
function alternatives(root: Schema, s: Schema, depth: number): Schema[] {
  if (depth > MAX_DEPTH) return [{}];
  if (typeof s.$ref === 'string') {
    const target = resolvePointer(root, s.$ref);
    return target ? alternatives(root, target, depth + 1) : [{}];
  }
  const spread = [s.anyOf, s.oneOf].find(Array.isArray) as unknown[] | undefined;
  if (spread)
    return spread
      .filter(isSchema)
      .flatMap((x) => alternatives(root, { ...s, anyOf: undefined, oneOf: undefined, ...x }, depth + 1));
  if (Array.isArray(s.allOf)) {
    // Every branch holds at once: the properties any of them declares.
    const merged = s.allOf
      .filter(isSchema)
      .reduce<Schema>(
        (acc, x) => ({ ...acc, ...x, properties: { ...(acc.properties as Schema), ...(x.properties as Schema) } }),
        { ...s, allOf: undefined },
      );
    return alternatives(root, merged, depth + 1);
  }
  return [s];
}

function resolvePointer(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#')) return undefined;
  let cur: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isSchema(cur) || !Object.prototype.hasOwnProperty.call(cur, key)) return undefined;
    cur = cur[key];
  }
  return isSchema(cur) ? cur : undefined;
}

function typesOf(s: Schema): string[] | undefined {
  if (typeof s.type === 'string') return [s.type];
  if (Array.isArray(s.type)) return s.type.filter((t): t is string => typeof t === 'string');
  return undefined;
}

function why(options: Schema[], seg: string | number): string {
  const keys = new Set<string>();
  const types = new Set<string>();
  for (const s of options) {
    if (isSchema(s.properties)) for (const k of Object.keys(s.properties)) keys.add(k);
    for (const t of typesOf(s) ?? []) types.add(t);
  }
  if (typeof seg === 'number')
    return `the tool's output schema has no array there (${[...types].join(' or ') || 'no items'})`;
  if (keys.size > 0)
    return `the tool's output schema has no "${seg}" there; it has ${[...keys].map((k) => `"${k}"`).join(', ')}`;
  return `the tool's output schema has no object there (${[...types].join(' or ')})`;
}

function describe(path: readonly (string | number)[]): string {
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : /^[A-Za-z0-9_-]+$/.test(p) ? `.${p}` : `["${p}"]`))
    .join('');
}

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function safeTest(pattern: string, key: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(key);
  } catch {
    // A pattern this engine cannot read: assume it may match rather than refuse a path on a guess.
    return true;
  }
}
