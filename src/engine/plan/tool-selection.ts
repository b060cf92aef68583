/**
 * Which tools the planner is shown when many are connected (pure). A catalog larger than the limit is ranked
 * against the request by BM25 over each tool's words (`tool-terms.ts`), raised by a share of its server's best
 * score; up to `limit` are offered, those matching next to nothing left out, listed in the catalog's own order so
 * that the same selection always gives the same prompt, byte for byte (providers cache identical prompt prefixes).
 * Tools the request names and, for an amendment, the tools the plan already uses are always kept. Validation still
 * checks plans against every connected tool.
 */
import type { ToolInfo } from '../types.ts';
import type { Plan } from './plan-schema.ts';
import { toolTerms, queryTerms } from './tool-terms.ts';

/**
 * How many tools the planner is shown at most when the setting is not given. 24 keeps the planner's prompt with 500
 * tools connected within twice its size with 20 (the bench's catalog-size part measures it), and is still more than
 * a plan of one or two servers uses.
 */
export const DEFAULT_PLANNER_TOOLS = 24;

/** What the selection ranks against: the request, and for an amendment the change asked for and the plan. */
export interface SelectionQuery {
  request: string;
  amend?: { plan: Plan; text: string };
}

// BM25's usual constants: term frequency saturates around k1, and b weighs a document's length against the mean.
const K1 = 1.2;
const B = 0.75;
/**
 * Each tool also gets this share of the best score among its server's tools: a plan mostly uses several tools of
 * one server ("get the weather, add to it, then say done" needs the server's echo too, which no word names).
 */
const SERVER_AFFINITY = 0.25;
/** Past the first `MIN_OFFERED`, a tool scoring below this share of the best is left out even when there is room. */
const RELEVANCE_FLOOR = 0.15;
const MIN_OFFERED = 10;

/**
 * The allowed tools to offer the planner: all of them when there are at most `limit`; else those the query names
 * or the amended plan uses, then the best of the rest by relevance, up to `limit` in all (at least `MIN_OFFERED`,
 * past which only tools scoring `RELEVANCE_FLOOR` of the best). Listed in catalog order.
 */
export function selectTools(tools: readonly ToolInfo[], query: SelectionQuery, limit: number): ToolInfo[] {
  const allowed = tools.filter((t) => t.policy.allowed);
  if (allowed.length <= limit) return allowed;
  const kept = keptTools(allowed, query);
  const scores = withServerAffinity(allowed, scoreTools(allowed, queryText(query)), kept);
  const best = Math.max(...scores);
  const ranked = allowed
    .map((_, i) => i)
    .filter((i) => !kept.has(i))
    .sort((x, y) => (scores[y] ?? 0) - (scores[x] ?? 0) || x - y);
  const room = Math.max(0, limit - kept.size);
  const sure = Math.max(0, MIN_OFFERED - kept.size);
  const added = ranked.slice(0, room).filter((i, rank) => rank < sure || (scores[i] ?? 0) >= RELEVANCE_FLOOR * best);
  const chosen = new Set([...kept, ...added]);
  return allowed.filter((_, i) => chosen.has(i));
}

/** Scores raised by `SERVER_AFFINITY` of their server's best; a kept tool counts as the best score overall. */
function withServerAffinity(tools: readonly ToolInfo[], scores: number[], kept: ReadonlySet<number>): number[] {
  const top = Math.max(0, ...scores);
  const serverBest = new Map<string, number>();
  tools.forEach((t, i) => {
    const own = kept.has(i) ? top : (scores[i] ?? 0);
    serverBest.set(t.server, Math.max(serverBest.get(t.server) ?? 0, own));
  });
  return tools.map((t, i) => (scores[i] ?? 0) + SERVER_AFFINITY * (serverBest.get(t.server) ?? 0));
}

function queryText(query: SelectionQuery): string {
  return query.amend ? `${query.request}\n${query.amend.text}` : query.request;
}

/** Indexes of the tools that must be offered: named in the words of the request, or used by the plan amended. */
function keptTools(tools: readonly ToolInfo[], query: SelectionQuery): Set<number> {
  const text = queryText(query).toLowerCase();
  const used = new Set(query.amend?.plan.steps.flatMap((s) => (s.kind === 'tool' ? [s.tool] : [])) ?? []);
  const kept = new Set<number>();
  tools.forEach((t, i) => {
    if (used.has(t.name) || namedIn(text, t)) kept.add(i);
  });
  return kept;
}

/**
 * Whether the (lower-cased) text names the tool: its qualified name, or its own name when that is an identifier no
 * one writes by chance (`read_text_file`, `get-sum`, `listIssues`); a plain word such as "echo" is left to ranking.
 */
function namedIn(text: string, tool: ToolInfo): boolean {
  if (containsWord(text, tool.name.toLowerCase())) return true;
  const identifier = /[_.-]|[a-z][A-Z]/.test(tool.tool);
  return identifier && containsWord(text, tool.tool.toLowerCase());
}

function containsWord(text: string, word: string): boolean {
  let at = text.indexOf(word);
  while (at >= 0) {
    const before = text[at - 1];
    const after = text[at + word.length];
    if (!isNameChar(before) && !isNameChar(after)) return true;
    at = text.indexOf(word, at + 1);
  }
  return false;
}

// A name ends where letters, digits and underscores end: "fs.read_file." names fs.read_file, "read_files" does not.
function isNameChar(c: string | undefined): boolean {
  return c !== undefined && /\w/.test(c);
}

/** How well each tool matches the text: BM25 over the tools' terms, 0 for a tool that shares no term with it. */
export function scoreTools(tools: readonly ToolInfo[], text: string): number[] {
  return bm25(tools.map(toolTerms), queryTerms(text));
}

/** BM25 score of each document (a list of terms) against the query's distinct terms. */
function bm25(docs: readonly string[][], query: readonly string[]): number[] {
  const terms = [...new Set(query)];
  const df = new Map<string, number>();
  const counts = docs.map((doc) => {
    const tf = new Map<string, number>();
    for (const term of doc) tf.set(term, (tf.get(term) ?? 0) + 1);
    for (const term of tf.keys()) df.set(term, (df.get(term) ?? 0) + 1);
    return tf;
  });
  const avgLength = docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length) || 1;
  return counts.map((tf, i) => {
    const norm = K1 * (1 - B + (B * (docs[i]?.length ?? 0)) / avgLength);
    let score = 0;
    for (const term of terms) {
      const f = tf.get(term);
      if (!f) continue;
      const n = df.get(term) ?? 0;
      score += Math.log(1 + (docs.length - n + 0.5) / (n + 0.5)) * ((f * (K1 + 1)) / (f + norm));
    }
    return score;
  });
}
