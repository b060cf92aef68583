import { describe, expect, it } from 'vitest';
import { withAssistantModels } from '../../../src/engine/flows/assistant-grants.ts';
import type { LlmClient, LlmRequest } from '../../../src/engine/ports.ts';
import type { Assistant } from '../../../src/engine/assistant/assistants.ts';

function recording() {
  const sent: LlmRequest[] = [];
  const llm: LlmClient = {
    complete: (r) => {
      sent.push(r);
      return Promise.resolve({
        text: 'ok',
        model: r.model ?? 'role-model',
        usage: { inputTokens: 1, outputTokens: 1 },
      });
    },
  };
  return { llm, sent };
}

const ask = (role: LlmRequest['role'], model?: string): LlmRequest => ({
  role,
  system: `[steward:${role}]`,
  messages: [{ role: 'user', content: 'hi' }],
  ...(model ? { model } : {}),
});

describe("an Assistant's models per role", () => {
  it('sends a role the Assistant names a model for to that catalog model, and the others as they are', async () => {
    const { llm, sent } = recording();
    let reads = 0;
    const assistants = {
      getAssistant: (name: string) => {
        reads++;
        return Promise.resolve({ name, models: { planner: 'o4-mini' } } as unknown as Assistant);
      },
    };
    const client = withAssistantModels(llm, assistants, 'ops');
    await client.complete(ask('planner'));
    await client.complete(ask('synthesizer'));
    await client.complete(ask('planner', 'sonnet'));
    expect(sent.map((r) => [r.role, r.model])).toEqual([
      ['planner', 'o4-mini'],
      ['synthesizer', undefined],
      ['planner', 'sonnet'],
    ]);
    expect(reads).toBe(1);
  });

  it('changes nothing when the Assistant is gone or cannot be read', async () => {
    for (const getAssistant of [() => Promise.resolve(null), () => Promise.reject(new Error('database away'))]) {
      const { llm, sent } = recording();
      await withAssistantModels(llm, { getAssistant }, 'ops').complete(ask('planner'));
      expect(sent[0]?.model).toBeUndefined();
    }
  });
});
