/**
 * Reads the planner's answer while it streams (pure): each element of the top-level "steps" array comes out as soon
 * as its JSON value is complete, and at the end the whole object. The answer may start with chatter or a fence; the
 * JSON begins at the first `{`, and text after the object closes is ignored. A trailing comma before `}` or `]` is
 * forgiven, as `readAnswerObject` forgives it.
 *
 * Cost: every character of the answer is looked at once by one state machine (a number or a word is looked at once
 * more, at the character that ends it), and each is handed to `JSON.parse` at most twice: inside the one step it
 * belongs to, and in the whole object at the end (text holding a trailing comma is read once more to drop it, and
 * parsed again). Deltas are kept once, as they came, and a step's text is joined from them once, when it ends (never
 * one growing string sliced again and again), so the work stays linear however finely the answer is split.
 * Nesting deeper than `MAX_PLAN_DEPTH` and answers over `MAX_PLAN_CHARS` are refused as soon as they are seen.
 */
import type { Result } from '../result.ts';
import type { Json } from '../types.ts';
import { MAX_PLAN_DEPTH, TOO_DEEP } from './json-depth.ts';
import { parseJson } from './forgiving-answer.ts';
import { MAX_PLAN_CHARS } from './planner-prompt.ts';

/** One element of the plan's top-level "steps" array, complete, with its 0-based place in the array. */
export interface StreamedStep {
  index: number;
  value: Json;
}

/** An incremental reader of one planner answer. After an error, every call answers that error. */
export interface PlanStream {
  /** Reads the next piece of the answer: the steps it completed, in order, or why the answer cannot be a plan. */
  push(delta: string): Result<readonly StreamedStep[]>;
  /** The answer ended: the whole JSON object, or why there is none. */
  end(): Result<Json>;
}

/** A fresh reader for one answer. */
export function createPlanStream(): PlanStream {
  return new PlanStreamReader();
}

const NOT_JSON = 'the answer is not a JSON object';
/** The answer's JSON breaks the grammar (a trailing comma aside). */
export const BAD_JSON = 'the answer is not valid JSON';
const TOO_LONG = `the plan is longer than ${MAX_PLAN_CHARS} characters; write a smaller plan`;
const CUT = 'the answer ended before its JSON object did';
const TWO_LISTS = 'the plan has two "steps" lists';
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const WORDS = new Set(['true', 'false', 'null']);
const ESCAPES = new Set([...'"\\/bfnrt'].map((c) => c.charCodeAt(0)));

const NOTHING_YET: Result<readonly StreamedStep[]> = Object.freeze({ ok: true, value: Object.freeze([]) });

type Mode = 'seek' | 'value' | 'key' | 'colon' | 'after' | 'string' | 'number' | 'word' | 'done';

interface Frame {
  kind: 'object' | 'array';
  /** This array is the plan's top-level "steps": its elements come out one by one. */
  steps: boolean;
}

/** A place in the answer: character `at` of delta number `delta`. */
interface Mark {
  delta: number;
  at: number;
}

/** The answer's deltas, each kept once; a piece of text is found by its marks and joined once, when it ends. */
class Deltas {
  private readonly all: string[] = [];
  add(delta: string): void {
    this.all.push(delta);
  }
  /** Where character `at` of the newest delta is. */
  mark(at: number): Mark {
    return { delta: this.all.length - 1, at };
  }
  /** The text from `from` up to character `end` (excluded) of the newest delta. */
  text(from: Mark, end: number): string {
    const last = this.all.length - 1;
    if (from.delta === last) return (this.all[last] as string).slice(from.at, end);
    const parts = [(this.all[from.delta] as string).slice(from.at)];
    for (let k = from.delta + 1; k < last; k++) parts.push(this.all[k] as string);
    parts.push((this.all[last] as string).slice(0, end));
    return parts.join('');
  }
}

class PlanStreamReader implements PlanStream {
  private mode: Mode = 'seek';
  private readonly stack: Frame[] = [];
  /** Right after `{` or `[`: the container may close at once. */
  private closable = false;
  private stringIsKey = false;
  /** In a string: 0, or -1 right after a backslash, or the hex digits a `\u` escape still needs. */
  private escape = 0;
  private token = '';
  private topKey = '';
  private sawSteps = false;
  private chars = 0;
  private index = 0;
  private error: string | null = null;
  private rootText: string | null = null;
  private readonly deltas = new Deltas();
  private rootAt: Mark = { delta: 0, at: 0 };
  private elementAt: Mark = { delta: 0, at: 0 };
  private keyAt: Mark = { delta: 0, at: 0 };
  /** The steps the current delta completed; null until it completes one. */
  private out: StreamedStep[] | null = null;

  push(delta: string): Result<readonly StreamedStep[]> {
    this.chars += delta.length;
    if (!this.error && this.chars > MAX_PLAN_CHARS) this.error = TOO_LONG;
    if (this.error) return { ok: false, error: this.error };
    this.out = null;
    this.deltas.add(delta);
    for (let i = 0; i < delta.length && !this.error; i++) i = this.read(delta, i);
    if (this.error) return { ok: false, error: this.error };
    // Most deltas complete no step: they share one answer rather than allocate their own.
    return this.out ? { ok: true, value: this.out } : NOTHING_YET;
  }

  end(): Result<Json> {
    if (this.error) return { ok: false, error: this.error };
    if (this.rootText === null) return { ok: false, error: this.mode === 'seek' ? NOT_JSON : CUT };
    const value = parse(this.rootText);
    return value === undefined ? { ok: false, error: BAD_JSON } : { ok: true, value };
  }

  /** Reads the character at `i`; returns the index of the last character read (one less to read it again). */
  private read(d: string, i: number): number {
    const c = d.charCodeAt(i);
    switch (this.mode) {
      case 'seek':
        if (c === 0x7b) this.startValue(d, i, c);
        return i;
      case 'string':
        return this.readString(d, i, c);
      case 'number':
      case 'word':
        return this.readToken(d, i, c);
      case 'done':
        return i;
      default:
        if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) this.readStructure(d, i, c);
        return i;
    }
  }

  private readStructure(d: string, i: number, c: number): void {
    const top = this.stack[this.stack.length - 1] as Frame;
    if (this.mode === 'value') {
      if (c === 0x5d && this.closable && top.kind === 'array') this.close(d, i);
      else this.startValue(d, i, c);
    } else if (this.mode === 'key') {
      if (c === 0x7d && this.closable) this.close(d, i);
      else if (c === 0x22) this.startString(i, true);
      else this.fail(BAD_JSON);
    } else if (this.mode === 'colon') {
      if (c !== 0x3a) return this.fail(BAD_JSON);
      this.mode = 'value';
      this.closable = false;
    } else if (c === 0x2c) {
      this.mode = top.kind === 'object' ? 'key' : 'value';
      // A trailing comma: the container may close right after it (its text is parsed forgiving it).
      this.closable = true;
    } else if ((c === 0x7d && top.kind === 'object') || (c === 0x5d && top.kind === 'array')) this.close(d, i);
    else this.fail(BAD_JSON);
  }

  private startValue(d: string, i: number, c: number): void {
    const parent = this.stack[this.stack.length - 1];
    if (parent?.steps) this.elementAt = this.deltas.mark(i);
    if (c === 0x7b || c === 0x5b) {
      if (!parent) this.rootAt = this.deltas.mark(i);
      const steps = c === 0x5b && this.stack.length === 1 && this.topKey === 'steps';
      this.stack.push({ kind: c === 0x7b ? 'object' : 'array', steps });
      if (this.stack.length > MAX_PLAN_DEPTH) return this.fail(TOO_DEEP);
      this.mode = c === 0x7b ? 'key' : 'value';
      this.closable = true;
    } else if (c === 0x22) this.startString(i, false);
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) this.startToken('number', d, i);
    else if (c === 0x74 || c === 0x66 || c === 0x6e) this.startToken('word', d, i);
    else this.fail(BAD_JSON);
  }

  private startToken(mode: 'number' | 'word', d: string, i: number): void {
    this.mode = mode;
    this.token = d[i] as string;
  }

  private startString(i: number, isKey: boolean): void {
    this.mode = 'string';
    this.stringIsKey = isKey;
    this.escape = 0;
    if (isKey && this.stack.length === 1) this.keyAt = this.deltas.mark(i);
  }

  private readString(d: string, i: number, c: number): number {
    if (this.escape === -1) {
      if (c === 0x75) this.escape = 4;
      else if (ESCAPES.has(c)) this.escape = 0;
      else this.fail(BAD_JSON);
    } else if (this.escape > 0) {
      if (!isHex(c)) this.fail(BAD_JSON);
      this.escape--;
    } else if (c === 0x5c) this.escape = -1;
    else if (c < 0x20) this.fail(BAD_JSON);
    else if (c === 0x22) {
      if (!this.stringIsKey) this.valueEnded(d, i + 1);
      else {
        if (this.stack.length === 1) this.readTopKey(this.deltas.text(this.keyAt, i + 1));
        this.mode = 'colon';
      }
    }
    return i;
  }

  /** A top-level key: only the plan's own "steps" (not one inside arguments) holds the steps, and only once. */
  private readTopKey(text: string): void {
    const key = parse(text);
    if (typeof key !== 'string') return this.fail(BAD_JSON);
    if (key === 'steps' && this.sawSteps) return this.fail(TWO_LISTS);
    if (key === 'steps') this.sawSteps = true;
    this.topKey = key;
  }

  private readToken(d: string, i: number, c: number): number {
    const more =
      this.mode === 'number'
        ? (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d
        : c >= 0x61 && c <= 0x7a && this.token.length < 5;
    if (more) {
      this.token += d[i];
      return i;
    }
    const valid = this.mode === 'number' ? NUMBER.test(this.token) : WORDS.has(this.token);
    if (!valid) this.fail(BAD_JSON);
    else this.valueEnded(d, i);
    // The character that ended the token belongs to what follows it.
    return i - 1;
  }

  private close(d: string, i: number): void {
    this.stack.pop();
    this.valueEnded(d, i + 1);
  }

  /** A value ended just before `end`: a step when its container is the steps list, the plan when it is the root. */
  private valueEnded(d: string, end: number): void {
    const parent = this.stack[this.stack.length - 1];
    if (!parent) {
      this.rootText = this.deltas.text(this.rootAt, end);
      this.mode = 'done';
      return;
    }
    this.mode = 'after';
    if (!parent.steps) return;
    const value = parse(this.deltas.text(this.elementAt, end));
    if (value === undefined) this.fail(BAD_JSON);
    else (this.out ??= []).push({ index: this.index++, value });
  }

  private fail(error: string): void {
    this.error ??= error;
  }
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** JSON text the reader found well formed (a trailing comma aside) as a value. */
function parse(text: string): Json | undefined {
  return parseJson(text);
}
