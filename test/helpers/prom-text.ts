/**
 * A strict parser of Prometheus's text exposition format (0.0.4), as a scraper reads `/metrics`: HELP and TYPE
 * lines, samples with escaped label values and a float value, each sample in a family whose TYPE came first. Any
 * line it cannot read throws, naming the line. No installed package parses this format, and prom-client only writes it.
 */

/** One sample: its name, labels and value. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed exposition: the TYPE of each family and every sample. */
export interface PromText {
  types: Map<string, string>;
  samples: PromSample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<string, string[]> = {
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

/** Parses `text`; throws on the first line that is not valid exposition. */
export function parsePromText(text: string): PromText {
  if (!text.endsWith('\n')) throw new Error('exposition must end with a newline');
  const types = new Map<string, string>();
  const samples: PromSample[] = [];
  text
    .slice(0, -1)
    .split('\n')
    .forEach((line, i) => {
      const fail = (why: string) => new Error(`line ${i + 1}: ${why}: ${JSON.stringify(line)}`);
      if (line === '') return;
      const meta = new RegExp(`^# (HELP|TYPE) (${NAME}) (.*)$`).exec(line);
      if (meta) {
        const [, kind, name, rest] = meta as unknown as [string, string, string, string];
        if (kind === 'TYPE') {
          if (!TYPES.has(rest)) throw fail('unknown type');
          if (types.has(name)) throw fail('second TYPE for a family');
          types.set(name, rest);
        }
        return;
      }
      if (line.startsWith('#')) return;
      const sample = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`).exec(line);
      if (!sample) throw fail('not a sample');
      const [, name, labelText, valueText] = sample as unknown as [string, string, string | undefined, string];
      if (familyOf(name, types) === undefined) throw fail('sample before its TYPE');
      samples.push({ name, labels: parseLabels(labelText ?? '', fail), value: parseValue(valueText, fail) });
    });
  return { types, samples };
}

/** The family a sample belongs to, by its TYPE line. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const [family, type] of types)
    if ((SUFFIXES[type] ?? []).some((s) => s !== '' && name === family + s)) return family;
  return undefined;
}

function parseLabels(text: string, fail: (why: string) => Error): Record<string, string> {
  const labels: Record<string, string> = {};
  const pair = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/;
  let rest = text;
  while (rest !== '') {
    const m = pair.exec(rest);
    if (!m) throw fail('bad label');
    const [all, key, raw] = m as unknown as [string, string, string];
    if (key in labels) throw fail(`label ${key} twice`);
    labels[key] = raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(all.length);
  }
  return labels;
}

/** A float as Go's ParseFloat reads it, which the format names: NaN and Inf in any case (prom-client writes `Nan`). */
function parseValue(text: string, fail: (why: string) => Error): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(text)) return Number.NaN;
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(text)) throw fail('bad value');
  return Number(text);
}
