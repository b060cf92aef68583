/**
 * The work the chaos test asks for: request #k names a plan template, and the fake LLM's planner answers with that
 * template, every step's arguments tagged `k<k>.<step id>`, so each call the audit server receives names its request
 * and step. Templates mix the idempotent `wait` (low risk: a plan of waits starts at once) with the non-idempotent
 * `record` (medium risk: the plan waits for Approve, and a crash while it is in flight must wait for a person).
 */
import { byRole, type FakeLlmScript } from '../fakes/fake-llm-server.ts';

/** The MCP server's name in each process's mcp.json: tools are `chaos.wait` and `chaos.record`. */
export const CHAOS_SERVER = 'chaos';
/** The audit tools by idempotency, as the fixture's annotations declare them. */
export const IDEMPOTENT_TOOLS: ReadonlySet<string> = new Set(['wait']);

interface StepTemplate {
  id: string;
  tool: 'wait' | 'record';
  ms: number;
  after?: string[];
}

/** Plan templates by name. */
export const TEMPLATES: Readonly<Record<string, readonly StepTemplate[]>> = {
  waits: [
    { id: 'a', tool: 'wait', ms: 1_500 },
    { id: 'b', tool: 'wait', ms: 1_000 },
    { id: 'c', tool: 'wait', ms: 800, after: ['a', 'b'] },
  ],
  long: [
    { id: 'a', tool: 'wait', ms: 4_000 },
    { id: 'b', tool: 'wait', ms: 2_000, after: ['a'] },
  ],
  record: [
    { id: 'a', tool: 'wait', ms: 800 },
    { id: 'r', tool: 'record', ms: 1_500, after: ['a'] },
    { id: 'z', tool: 'wait', ms: 500, after: ['r'] },
  ],
  records: [
    { id: 'r1', tool: 'record', ms: 1_000 },
    { id: 'r2', tool: 'record', ms: 2_000 },
    { id: 'w', tool: 'wait', ms: 1_000, after: ['r1', 'r2'] },
    { id: 'r3', tool: 'record', ms: 500, after: ['w'] },
  ],
};

/**
 * Templates only the multi-process bench asks for (bench/multi-process.ts), kept out of TEMPLATES so that the chaos
 * test's random mix of templates stays as it was.
 */
export const BENCH_TEMPLATES: Readonly<Record<string, readonly StepTemplate[]>> = {
  // Low risk (waits only), so it starts at once; short, so a run's cost is Steward's own rather than the tool's.
  short: [
    { id: 'a', tool: 'wait', ms: 100 },
    { id: 'b', tool: 'wait', ms: 100 },
    { id: 'c', tool: 'wait', ms: 50, after: ['a', 'b'] },
  ],
};

/** The tag a step's arguments carry. */
export function stepTag(k: number, stepId: string): string {
  return `k${k}.${stepId}`;
}

/** Reads a tag back: the request number and the step id, or undefined. */
export function parseTag(tag: unknown): { k: number; stepId: string } | undefined {
  const m = typeof tag === 'string' ? /^k(\d+)\.(.+)$/.exec(tag) : null;
  return m ? { k: Number(m[1]), stepId: m[2]! } : undefined;
}

/** The text of request #k (what the person types after the mention). */
export function requestText(k: number, template: string): string {
  return `chaos #${k} ${template}: do the work`;
}

/** Reads a request's number and template back from any text that holds its request line. */
export function parseRequest(text: string): { k: number; template: string } | undefined {
  const m = /chaos #(\d+) ([a-z]+):/.exec(text);
  return m ? { k: Number(m[1]), template: m[2]! } : undefined;
}

/** The planner's answer for request #k. */
export function planFor(k: number, template: string): string {
  const steps = TEMPLATES[template] ?? BENCH_TEMPLATES[template];
  if (!steps) throw new Error(`no plan template ${template}`);
  return JSON.stringify({
    summary: `Chaos request ${k} (${template})`,
    rationale: 'chaos test',
    needsTools: true,
    answer: null,
    risks: [],
    steps: steps.map((s) => ({
      id: s.id,
      tool: `${CHAOS_SERVER}.${s.tool}`,
      args: { tag: stepTag(k, s.id), ms: s.ms },
      dependsOn: s.after ?? [],
    })),
  });
}

/** The fake LLM's script: plans by request, a fixed report, and replies read as unrelated. */
export function chaosLlmScript(o: { plannerDelayMs?: number } = {}): FakeLlmScript {
  return byRole({
    planner: (req) => {
      const found = parseRequest(JSON.stringify(req.body['messages'] ?? []));
      if (!found) throw new Error(`planner request #${req.index} names no chaos request`);
      return { text: planFor(found.k, found.template), delayMs: o.plannerDelayMs ?? 200 };
    },
    synthesizer: 'Chaos run finished.',
    classifier: 'unrelated',
    llm_step: 'ok',
  });
}
