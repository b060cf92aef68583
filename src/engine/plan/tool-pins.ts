/**
 * Tool definitions pinned at approval. Before each step the current definition is compared with the pin:
 * a server that changed a description, schema or annotation after approval gets the step held, with the change shown.
 */
import { canonicalJson } from './canonical-json.ts';
import type { Plan } from './plan-schema.ts';
import type { PinnedTool } from '../ports.ts';
import { cut } from '../text.ts';
import type { Json, ToolInfo } from '../types.ts';

/** Pins for the plan's tools that are not pinned yet, from the definitions on offer now. */
export function newPins(plan: Plan, tools: readonly ToolInfo[], pinned: ReadonlyMap<string, PinnedTool>): PinnedTool[] {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const names = new Set(plan.steps.flatMap((s) => (s.kind === 'tool' ? [s.tool] : [])));
  return [...names].flatMap((name) => {
    const tool = byName.get(name);
    return tool && !pinned.has(name)
      ? [{ tool: name, fingerprint: tool.fingerprint, definition: tool.definition }]
      : [];
  });
}

/** The current definition when it differs from the pin; undefined when unchanged (or the tool is gone). */
export function changedDefinition(pin: PinnedTool | undefined, tools: readonly ToolInfo[]): ToolInfo | undefined {
  if (!pin) return undefined;
  const now = tools.find((t) => t.name === pin.tool);
  return now && now.fingerprint !== pin.fingerprint ? now : undefined;
}

/** What changed between two definitions, one line per difference, for the person to judge. */
export function describeChange(before: Json, after: Json): string[] {
  const a = asRecord(before);
  const b = asRecord(after);
  const lines: string[] = [];
  for (const key of ['title', 'description']) {
    if (a[key] !== b[key])
      lines.push(`${key}: "${cut(asText(a[key] ?? ''), 200)}" → "${cut(asText(b[key] ?? ''), 200)}"`);
  }
  for (const key of ['inputSchema', 'outputSchema']) {
    if (canonicalJson(a[key]) !== canonicalJson(b[key]))
      lines.push(`${key} changed: ${cut(JSON.stringify(b[key] ?? null), 300)}`);
  }
  const ha = asRecord(a.annotations ?? null);
  const hb = asRecord(b.annotations ?? null);
  for (const hint of new Set([...Object.keys(ha), ...Object.keys(hb)])) {
    if (ha[hint] !== hb[hint])
      lines.push(`annotation ${hint}: ${asText(ha[hint] ?? 'unset')} → ${asText(hb[hint] ?? 'unset')}`);
  }
  const sa = asRecord(a.server ?? null);
  const sb = asRecord(b.server ?? null);
  if (sa.name !== sb.name || sa.version !== sb.version)
    lines.push(`server: ${asText(sa.name)} ${asText(sa.version)} → ${asText(sb.name)} ${asText(sb.version)}`);
  return lines.length > 0 ? lines : ['the definition changed'];
}

function asRecord(v: Json | undefined): Record<string, Json> {
  return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
}

/** A definition field as text: strings as they are, anything else as JSON (a missing field reads `undefined`). */
function asText(v: Json | undefined): string {
  if (v === undefined) return 'undefined';
  return typeof v === 'string' ? v : JSON.stringify(v);
}
