/**
 * JSON with sorted keys, so key order (which jsonb and hashing do not keep) never counts as a change. Otherwise as
 * `JSON.stringify`: a key whose value is `undefined` is left out and `undefined` in an array is `null`, so a value
 * compares equal to itself stored and read back. (Tool fingerprints hash it too: their definitions come from JSON,
 * where no `undefined` can appear, so fingerprints stored before it also covered `undefined` are unchanged.)
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
