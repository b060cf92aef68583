import { describe, expect, it } from 'vitest';
import { createPlanWriter, sizeRefusal, writePlan } from '../../../src/engine/flows/planner.ts';
import { compactPlanJsonSchema } from '../../../src/engine/plan/compact-schema.ts';
import { MAX_PLAN_CHARS } from '../../../src/engine/plan/planner-prompt.ts';
import type { Step } from '../../../src/engine/plan/plan-schema.ts';
import type { LlmRequest, LlmResponse, ToolRunner } from '../../../src/engine/ports.ts';
import { createTool } from '../fixtures.ts';

const tools = [createTool('fs.read')];
const validPlan = JSON.stringify({
  summary: 'Read it',
  rationale: 'asked',
  needsTools: true,
  answer: null,
  risks: [],
  steps: [{ id: 's1', kind: 'tool', tool: 'fs.read', args: {}, dependsOn: [], description: 'read', optional: false }],
});

/** A planner model answering from a queue, recording what it was asked. */
function plannerAnswering(...answers: Array<Partial<LlmResponse> & { text: string }>) {
  const seen: LlmRequest[] = [];
  return {
    seen,
    complete(req: LlmRequest): Promise<LlmResponse> {
      seen.push(req);
      const next = answers.shift();
      if (!next) return Promise.reject(new Error('no answer left'));
      return Promise.resolve({ model: 'm', usage: { inputTokens: 10, outputTokens: 10 }, ...next });
    },
  };
}

describe('the planner and answers too large to be a plan', () => {
  it('refuses an answer cut off at its cap for its size, with no repair call', async () => {
    const llm = plannerAnswering({
      text: `{"summary": "${'a'.repeat(64_000)}`,
      truncated: true,
      usage: { inputTokens: 900, outputTokens: 16_000 },
    });
    const result = await writePlan(llm, { request: 'do it', tools }, { maxRepairs: 2 });
    expect(result).toEqual({
      ok: false,
      error:
        "the plan is too large: the planner's answer reached the limit of one answer (16,000 tokens, 64,013 characters) and was cut off before it ended",
    });
    expect(llm.seen).toHaveLength(1);
  });

  it('refuses an answer over the plan size limit, even from a model that ignored its cap, with no repair call', async () => {
    const llm = plannerAnswering({ text: `{"summary": "${'a'.repeat(5_000_000)}"}` });
    const result = await writePlan(llm, { request: 'do it', tools }, { maxRepairs: 2 });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toBe(
      "the plan is too large: the planner's answer is 5,000,015 characters, over the limit of 200,000",
    );
    expect(llm.seen).toHaveLength(1);
  });

  it('still repairs an answer that is merely wrong', async () => {
    const llm = plannerAnswering({ text: '{"summary": "no steps"}' }, { text: validPlan });
    const result = await writePlan(llm, { request: 'do it', tools }, { maxRepairs: 2 });
    expect(result.ok).toBe(true);
    expect(llm.seen).toHaveLength(2);
  });

  it('lets a complete answer of up to MAX_PLAN_CHARS through to the usual checks', () => {
    const usage = { inputTokens: 1, outputTokens: 1 };
    expect(sizeRefusal({ text: 'x'.repeat(MAX_PLAN_CHARS), usage })).toBeUndefined();
    expect(sizeRefusal({ text: 'x'.repeat(MAX_PLAN_CHARS + 1), usage })).toMatch(/too large/);
    expect(sizeRefusal({ text: '{}', truncated: true, usage: { inputTokens: 1, outputTokens: 0 } })).toBe(
      "the plan is too large: the planner's answer reached the limit of one answer (2 characters) and was cut off before it ended",
    );
  });
});

describe('the planner with more tools connected than it is shown', () => {
  const ada = { id: 'run-1', requester: { id: 'ada', channel: 'console' } };
  // 30 tools about tickets, and one that reads files.
  const catalog = [
    ...Array.from({ length: 30 }, (_, i) =>
      createTool(`desk.ticket_${i}`, { description: `Ticket operation number ${i}.` }),
    ),
    createTool('fs.read', { description: 'Reads a file from the disk.' }),
  ];
  const runner = { listTools: () => catalog } as unknown as ToolRunner;
  const planUsing = (tool: string) =>
    JSON.stringify({ summary: 's', needsTools: true, steps: [{ id: 's1', kind: 'tool', tool, args: {} }] });

  it('shows the planner only the tools that fit the request, the same on a repair', async () => {
    const llm = plannerAnswering({ text: '{"summary": "no steps"}' }, { text: planUsing('fs.read') });
    const write = createPlanWriter(runner, () => llm, 2, 10);
    const outcome = await write(ada, 'Read the file notes.md from the disk');
    expect(outcome.ok).toBe(true);
    const [first, repair] = llm.seen;
    expect(first?.system).toContain('- fs.read (risk low)');
    expect(first?.system.match(/^- \S+ \(risk /gm)).toHaveLength(10);
    expect(repair?.system).toBe(first?.system);
  });

  it('accepts a plan that uses a connected tool it was not shown: plans are checked against every tool', async () => {
    const llm = plannerAnswering({ text: planUsing('desk.ticket_29') });
    const outcome = await createPlanWriter(runner, () => llm, 0, 10)(ada, 'Read the file notes.md from the disk');
    expect(llm.seen[0]?.system).not.toContain('desk.ticket_29');
    expect(outcome.ok).toBe(true);
  });
});

describe('the planner and the compact form', () => {
  it('asks for the compact form by its schema, and the repair message names the step to fix', async () => {
    const llm = plannerAnswering(
      { text: '{"steps":[{"tool":"fs.read"},{"tool":"fs.read","dependsOn":["s1"]}]}' },
      { text: '{"steps":[{"tool":"fs.read"},{"tool":"fs.read","after":["s1"]}],"summary":"Read twice"}' },
    );
    const result = await writePlan(llm, { request: 'read twice', tools }, { maxRepairs: 2 });

    expect(result.ok && result.value.plan.steps.map((s) => [s.id, s.dependsOn])).toEqual([
      ['s1', []],
      ['s2', ['s1']],
    ]);
    expect(llm.seen[0]?.jsonSchema).toEqual({ name: 'steward_plan', schema: compactPlanJsonSchema() });
    expect(llm.seen[1]?.messages.at(-1)?.content).toBe(
      'That plan was rejected:\n' +
        'steps[1]: unknown key "dependsOn" (write "after"); a step with "tool" may have "tool", "args", "each", "id", "after", "note", "optional"\n' +
        'Reply with the corrected plan as JSON only.',
    );
  });

  it('names a step by its default id when validation refuses it', async () => {
    const llm = plannerAnswering({ text: '{"steps":[{"tool":"fs.read"},{"tool":"fs.nope"}]}' });
    const result = await writePlan(llm, { request: 'read', tools }, { maxRepairs: 0 });
    expect(result).toEqual({ ok: false, error: 'step s2: unknown tool "fs.nope"' });
  });
});

/** A planner model that streams its answers in pieces of `size` characters when asked to stream. */
function plannerStreaming(size: number, ...answers: string[]) {
  const seen: LlmRequest[] = [];
  return {
    seen,
    complete(req: LlmRequest): Promise<LlmResponse> {
      seen.push(req);
      const text = answers.shift();
      if (text === undefined) return Promise.reject(new Error('no answer left'));
      for (let i = 0; i < text.length; i += size) req.onText?.(text.slice(i, i + size));
      return Promise.resolve({ model: 'm', text, usage: { inputTokens: 10, outputTokens: 10 } });
    },
  };
}

describe('the planner streaming its first answer', () => {
  const compact =
    '{"steps":[{"tool":"fs.read","args":{}},{"id":"b","tool":"fs.read","after":["s1"]}],"summary":"Read"}';

  it('hands on each step, expanded, as it completes; only the first call streams', async () => {
    const steps: string[] = [];
    const llm = plannerStreaming(7, '{"steps":[{"tool":"fs.nope"}]}', compact);
    const streaming = {
      onStep: (s: { id: string; dependsOn: string[] }) => steps.push(`${s.id}<${s.dependsOn.join(',')}`),
      refused: () => [],
    };
    const result = await writePlan(llm, { request: 'read', tools }, { maxRepairs: 1, streaming });
    expect(result.ok).toBe(true);
    expect(steps).toEqual(['s1<']);
    expect(llm.seen.map((r) => r.onText !== undefined)).toEqual([true, false]);
  });

  it('repairs a refused first answer after steps started early, telling the repair to keep them as they started', async () => {
    const started: Step[] = [];
    const llm = plannerStreaming(5, '{"steps":[{"tool":"fs.read"},{"tool":"fs.nope"}]}', compact);
    const streaming = { onStep: (s: Step) => void started.push(s), refused: () => started.slice(0, 1) };
    const result = await writePlan(llm, { request: 'read', tools }, { maxRepairs: 2, streaming });
    expect(result.ok && result.value.plan.steps.map((s) => s.id)).toEqual(['s1', 'b']);
    expect(llm.seen).toHaveLength(2);
    const repair = llm.seen[1]!.messages.at(-1)!.content;
    expect(repair).toContain('fs.nope');
    expect(repair).toContain('already started');
    expect(repair).toContain('[{"id":"s1","tool":"fs.read"}]');
  });

  it('reads the answer whole from a client that cannot stream, as before streaming', async () => {
    const llm = plannerAnswering({ text: compact });
    const streaming = { onStep: () => undefined, refused: () => [] };
    const result = await writePlan(llm, { request: 'read', tools }, { maxRepairs: 0, streaming });
    expect(result.ok && result.value.plan.steps.map((s) => s.id)).toEqual(['s1', 'b']);
  });

  it('checks the answer as the stream read it, refusing a stream that never closes its object', async () => {
    const llm = plannerStreaming(4, compact.slice(0, -1));
    const streaming = { onStep: () => undefined, refused: () => [] };
    const result = await writePlan(llm, { request: 'read', tools }, { maxRepairs: 0, streaming });
    expect(result).toEqual({ ok: false, error: 'the answer ended before its JSON object did' });
  });
});
