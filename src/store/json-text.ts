/**
 * JSON values as text for jsonb parameters. pg would send a JS array as a PostgreSQL array literal and a JS string
 * as bare text, so every JSON value goes in as `JSON.stringify` output.
 */

// jsonb refuses \u0000 and unpaired surrogates, text refuses NUL, and tool outputs can hold any of them.
// Failing to record a step is worse than one replaced character, so they become U+FFFD.
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Makes a string storable in text and jsonb columns, replacing NUL and lone surrogates with U+FFFD. */
export function toStorableText(text: string): string {
  return text.replace(UNSTORABLE, '\ufffd');
}

/** Serializes a JSON value for a jsonb column; strings (and object keys) are made storable first. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'string') return toStorableText(v);
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).some(needsCleaning)) {
      return Object.fromEntries(Object.entries(v).map(([k, inner]) => [toStorableText(k), inner]));
    }
    return v;
  });
}

function needsCleaning(text: string): boolean {
  UNSTORABLE.lastIndex = 0;
  return UNSTORABLE.test(text);
}
