/**
 * The words a tool is found by, and the words of a request (pure): identifiers split at camelCase, `_`, `-` and
 * `.`, lower-cased, common words dropped, and plurals and verb endings trimmed so that "files", "listing" and
 * "listed" meet "file" and "list". Crude on purpose: both sides go through the same steps, so they only need to
 * agree with each other.
 */
import type { ToolInfo } from '../types.ts';

// Words that say nothing about which tool fits; tool vocabulary such as "get", "list" or "new" stays.
const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could do does for from had has have he her him his how i if in into is it ' +
    'its let me my no not of on or our please she should so some such than that the their them then there these ' +
    'they this those to too us was we were what when where which while who why will with would you your all each ' +
    'any also just only tell show give want need about after before over very may might must one two'
  ).split(' '),
);

// A name counts three times and a title twice: a word in either says more than one deep in a description.
const NAME_WEIGHT = 3;
const TITLE_WEIGHT = 2;
/** How deep argument names are collected from an input schema. */
const SCHEMA_DEPTH = 3;

/**
 * The terms of a tool's name, title, description, input schema (argument names, their descriptions, enum values) and
 * output field names, weighted by where they appear.
 */
export function toolTerms(tool: ToolInfo): string[] {
  const name = queryTerms(`${tool.server} ${tool.tool}`);
  const title = queryTerms(titleOf(tool));
  return [
    ...repeat(name, NAME_WEIGHT),
    ...repeat(title, TITLE_WEIGHT),
    ...queryTerms(tool.description),
    ...queryTerms(schemaWords(tool.inputSchema, SCHEMA_DEPTH).join(' ')),
    ...queryTerms(schemaWords(field(tool.definition, 'outputSchema'), SCHEMA_DEPTH).join(' ')),
  ];
}

/** The terms of free text: split, lower-cased, stop words and numbers dropped, endings trimmed. */
export function queryTerms(text: string): string[] {
  const words = text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  const terms: string[] = [];
  for (const word of words) {
    if (word.length < 2 || STOP_WORDS.has(word) || /^\d+$/.test(word)) continue;
    terms.push(stem(word));
  }
  return terms;
}

/** A word without its plural or verb ending, and without a final "e" ("created", "creates", "create": "creat"). */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  for (const ending of ['ing', 'ed']) {
    const rest = w.slice(0, -ending.length);
    // Only where a syllable is left: "string" and "red" stay whole.
    if (w.endsWith(ending) && rest.length >= 3 && /[aeiouy]/.test(rest)) {
      w = /([^aeiouslz])\1$/.test(rest) ? rest.slice(0, -1) : rest;
      break;
    }
  }
  return w.length > 3 && w.endsWith('e') ? w.slice(0, -1) : w;
}

function titleOf(tool: ToolInfo): string {
  const title = field(tool.definition, 'title');
  return typeof title === 'string' ? title : '';
}

function field(value: unknown, key: string): unknown {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function repeat<T>(items: readonly T[], times: number): T[] {
  return Array.from({ length: times }, () => items).flat();
}

/**
 * The words of a JSON Schema that say what a tool is about: property names and descriptions, and the string values
 * of enums (a city a weather tool knows), down to `depth` levels of nesting.
 */
function schemaWords(schema: unknown, depth: number): string[] {
  if (depth <= 0 || !schema || typeof schema !== 'object' || Array.isArray(schema)) return [];
  const s = schema as Record<string, unknown>;
  const words: string[] = [];
  if (typeof s['description'] === 'string') words.push(s['description']);
  if (Array.isArray(s['enum'])) words.push(...s['enum'].filter((v): v is string => typeof v === 'string'));
  const props = s['properties'];
  if (props && typeof props === 'object' && !Array.isArray(props)) {
    for (const [name, sub] of Object.entries(props)) words.push(name, ...schemaWords(sub, depth - 1));
  }
  words.push(...schemaWords(s['items'], depth - 1));
  return words;
}
