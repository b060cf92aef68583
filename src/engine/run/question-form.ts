/**
 * A server's question read as a form: the fields of its `requestedSchema` (MCP elicitation, form mode: a flat object
 * of primitive properties), the check that it asks for nothing secret, and a person's entries checked against it.
 */
import { fail, ok, type Result } from '../result.ts';
import type { QuestionField, QuestionOption } from '../server-questions.ts';
import type { Json } from '../types.ts';

type Obj = Record<string, Json>;

const FORMATS = new Set(['email', 'uri', 'date', 'date-time']);

/** The fields of a `requestedSchema`, in the server's order; a schema outside the spec's restricted subset is refused. */
export function parseQuestionForm(schema: Json): Result<QuestionField[]> {
  if (!isObj(schema) || schema.type !== 'object' || !isObj(schema.properties)) {
    return fail('its form is not an object with properties');
  }
  const required = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [];
  const fields: QuestionField[] = [];
  for (const [name, prop] of Object.entries(schema.properties)) {
    if (!isObj(prop)) return fail(`its field "${name}" is not a schema`);
    const base = {
      name,
      label: str(prop.title) ?? name,
      description: str(prop.description) ?? '',
      required: required.includes(name),
    };
    const field = readField(base, prop);
    if (!field) return fail(`its field "${name}" is not a kind a form can ask for (text, number, yes/no or a choice)`);
    fields.push(field);
  }
  return ok(fields);
}

function readField(
  base: Pick<QuestionField, 'name' | 'label' | 'description' | 'required'>,
  p: Obj,
): QuestionField | undefined {
  const single = options(p);
  if (p.type === 'string' && single) return { ...base, kind: 'choice', options: single, ...def(str(p.default)) };
  if (p.type === 'string') {
    const format = str(p.format);
    return {
      ...base,
      kind: 'text',
      ...(format && FORMATS.has(format) && { format: format as 'email' | 'uri' | 'date' | 'date-time' }),
      ...(num(p.minLength) !== undefined && { minLength: num(p.minLength) }),
      ...(num(p.maxLength) !== undefined && { maxLength: num(p.maxLength) }),
      ...def(str(p.default)),
    };
  }
  if (p.type === 'number' || p.type === 'integer') {
    return {
      ...base,
      kind: 'number',
      integer: p.type === 'integer',
      ...(num(p.minimum) !== undefined && { minimum: num(p.minimum) }),
      ...(num(p.maximum) !== undefined && { maximum: num(p.maximum) }),
      ...def(num(p.default)),
    };
  }
  if (p.type === 'boolean')
    return { ...base, kind: 'boolean', ...def(typeof p.default === 'boolean' ? p.default : undefined) };
  if (p.type === 'array' && isObj(p.items)) {
    const many = options(p.items);
    if (!many) return undefined;
    const dflt = Array.isArray(p.default) ? p.default.filter((d): d is string => typeof d === 'string') : undefined;
    return {
      ...base,
      kind: 'choices',
      options: many,
      ...(num(p.minItems) !== undefined && { minItems: num(p.minItems) }),
      ...(num(p.maxItems) !== undefined && { maxItems: num(p.maxItems) }),
      ...def(dflt),
    };
  }
  return undefined;
}

/** The choices of an enum: `enum` (with `enumNames`), or `oneOf` / `anyOf` of `{ const, title }`. */
function options(p: Obj): QuestionOption[] | undefined {
  if (Array.isArray(p.enum)) {
    const names = Array.isArray(p.enumNames) ? p.enumNames : [];
    const values = p.enum.filter((v): v is string => typeof v === 'string');
    return values.map((value, i) => ({ value, label: str(names[i]) ?? value }));
  }
  const list = Array.isArray(p.oneOf) ? p.oneOf : Array.isArray(p.anyOf) ? p.anyOf : undefined;
  if (!list) return undefined;
  const found = list.flatMap((o) =>
    isObj(o) && typeof o.const === 'string' ? [{ value: o.const, label: str(o.title) ?? o.const }] : [],
  );
  return found.length > 0 ? found : undefined;
}

// Words that mark a field as asking for a secret. The MCP spec (elicitation, "Security Considerations"): servers MUST
// NOT use form mode to request sensitive information (passwords, API keys, access tokens, payment credentials).
const SENSITIVE =
  /pass(word|phrase|code)|secret|\btokens?\b|access[ _-]?token|api[ _-]?key|apikey|private[ _-]?key|credit[ _-]?card|card[ _-]?number|\bcvv\b|\bcvc\b|\bssn\b|social[ _-]?security|\biban\b|one[ _-]?time[ _-]?code|\botp\b/i;
// Short words that only count as a field's own name or title (a description may well say "do not give us your pin").
const SENSITIVE_NAME = /^(pin|cvv|cvc|otp|ssn|token|secret|password|pwd|key)$/i;

/** The labels of fields that look like they ask for a secret (by name, title or description); empty when none do. */
export function sensitiveFields(fields: readonly QuestionField[]): string[] {
  return fields
    .filter((f) => {
      const words = (s: string) => s.replace(/([a-z])([A-Z])/g, '$1 $2');
      return (
        SENSITIVE.test(words(f.name)) ||
        SENSITIVE.test(f.label) ||
        SENSITIVE.test(f.description) ||
        SENSITIVE_NAME.test(f.name) ||
        SENSITIVE_NAME.test(f.label) ||
        (f.kind === 'text' && /password/i.test(f.format ?? ''))
      );
    })
    .map((f) => f.label);
}

/**
 * Whether a name (an argument's key, a field's name) looks like it names a secret, by the same words as
 * `sensitiveFields`: `apiKey`, `access_token`, `password`, `pin`.
 */
export function sensitiveName(name: string): boolean {
  return SENSITIVE.test(name.replace(/([a-z])([A-Z])/g, '$1 $2')) || SENSITIVE_NAME.test(name);
}

/** What is wrong with one entry: the field's name and label, and the problem in words. */
export interface EntryProblem {
  field: string;
  label: string;
  problem: string;
}

/** Raw entries by field name, as a channel collects them. */
export type QuestionValues = Record<string, string | string[] | boolean | null>;

/**
 * A person's entries as the content sent back: each checked against its field (kind, range, length, format, choice);
 * an empty optional field is left out. The errors name each field that is wrong, in words.
 */
export function readQuestionAnswer(
  fields: readonly QuestionField[],
  values: QuestionValues,
): Result<Record<string, Json>, EntryProblem[]> {
  const content: Record<string, Json> = {};
  const errors: EntryProblem[] = [];
  for (const field of fields) {
    const raw = values[field.name];
    const empty =
      raw === undefined ||
      raw === null ||
      (typeof raw === 'string' && raw.trim() === '') ||
      (Array.isArray(raw) && raw.length === 0);
    if (empty) {
      if (field.required) errors.push({ field: field.name, label: field.label, problem: 'an answer is required' });
      continue;
    }
    const read = readValue(field, raw);
    if (read.ok) content[field.name] = read.value;
    else errors.push({ field: field.name, label: field.label, problem: read.error });
  }
  return errors.length > 0 ? fail(errors) : ok(content);
}

function readValue(field: QuestionField, raw: string | string[] | boolean): Result<Json> {
  const text = typeof raw === 'string' ? raw.trim() : undefined;
  switch (field.kind) {
    case 'boolean': {
      if (typeof raw === 'boolean') return ok(raw);
      if (text && /^(yes|y|true|on)$/i.test(text)) return ok(true);
      if (text && /^(no|n|false|off)$/i.test(text)) return ok(false);
      return fail('answer yes or no');
    }
    case 'number': {
      const n = text !== undefined && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text) ? Number(text) : NaN;
      if (!Number.isFinite(n)) return fail('a number is needed');
      if (field.integer && !Number.isInteger(n)) return fail('a whole number is needed');
      if (field.minimum !== undefined && n < field.minimum) return fail(`at least ${field.minimum}`);
      if (field.maximum !== undefined && n > field.maximum) return fail(`at most ${field.maximum}`);
      return ok(n);
    }
    case 'choice': {
      const found = field.options.find((o) => o.value === text || o.label === text);
      return found ? ok(found.value) : fail(`one of ${field.options.map((o) => o.label).join(', ')}`);
    }
    case 'choices': {
      const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : [];
      const picked: string[] = [];
      for (const item of list.map((s) => s.trim()).filter((s) => s !== '')) {
        const found = field.options.find((o) => o.value === item || o.label === item);
        if (!found) return fail(`"${item}" is not one of ${field.options.map((o) => o.label).join(', ')}`);
        if (!picked.includes(found.value)) picked.push(found.value);
      }
      if (field.minItems !== undefined && picked.length < field.minItems)
        return fail(`pick at least ${field.minItems}`);
      if (field.maxItems !== undefined && picked.length > field.maxItems) return fail(`pick at most ${field.maxItems}`);
      return ok(picked);
    }
    case 'text': {
      if (text === undefined) return fail('text is needed');
      if (field.minLength !== undefined && text.length < field.minLength)
        return fail(`at least ${field.minLength} characters`);
      if (field.maxLength !== undefined && text.length > field.maxLength)
        return fail(`at most ${field.maxLength} characters`);
      const bad = field.format ? formatProblem(field.format, text) : undefined;
      return bad ? fail(bad) : ok(text);
    }
  }
}

function formatProblem(format: 'email' | 'uri' | 'date' | 'date-time', text: string): string | undefined {
  if (format === 'email') return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text) ? undefined : 'an email address is needed';
  if (format === 'uri')
    return /^[a-z][a-z0-9+.-]*:\S+$/i.test(text) ? undefined : 'a full address (https://…) is needed';
  if (format === 'date') return validDate(text, /^\d{4}-\d{2}-\d{2}$/) ? undefined : 'a date like 2026-12-31 is needed';
  return validDate(text, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/)
    ? undefined
    : 'a date and time like 2026-12-31T09:00:00Z is needed';
}

function validDate(text: string, shape: RegExp): boolean {
  return shape.test(text) && !Number.isNaN(Date.parse(text));
}

/** The value a field shows before the person changes it (its default), as text. */
export function fieldDefault(field: QuestionField): string | undefined {
  if (field.default === undefined) return undefined;
  if (field.kind === 'boolean') return field.default ? 'yes' : 'no';
  if (field.kind === 'choices') return field.default.join(', ');
  return String(field.default);
}

/**
 * When an open question is declined (epoch ms): its own time, or the call's end if sooner (a second's margin for the
 * reply to reach the server before the call gives up).
 */
export function questionDeadline(askedAt: Date, timeoutMs: number, callDeadline: Date): number {
  return Math.min(askedAt.getTime() + timeoutMs, callDeadline.getTime() - 1000);
}

function isObj(v: Json | undefined): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: Json | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function num(v: Json | undefined): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function def<T>(value: T | undefined): { default: T } | Record<string, never> {
  return value === undefined ? {} : { default: value };
}
