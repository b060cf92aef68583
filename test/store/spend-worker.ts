/**
 * One process of the spend caps' multi-process test (`spend-multi-process.test.ts`): its own pool on the test
 * database, Steward's metered model client over a model that answers at once, and `calls` model calls fired together
 * once the parent writes a line to stdin. Prints one JSON line: what it was granted and refused.
 *
 *   node --import tsx spend-worker.ts   (env: DATABASE_URL, SPEND_JOB = JSON of the job below)
 */
import { once } from 'node:events';
import { meteredLlm } from '../../src/engine/flows/metered-llm.ts';
import type { LlmClient, LlmRequest, LlmResponse } from '../../src/engine/ports.ts';
import { openDatabase } from '../../src/store/database.ts';
import { PgRunStore } from '../../src/store/pg-run-store.ts';
import type { SpendSettings } from '../../src/engine/flows/deps.ts';
import type { PricedModel } from '../../src/engine/model-cost.ts';

/** What the parent asks of this process. */
export interface SpendJob {
  runs: { id: string; requester: { id: string; channel: string } }[];
  calls: number;
  spend: SpendSettings;
  prices: PricedModel[];
  /** The model's input tokens as a share of the metered client's prompt estimate (1.1: a 10 % underestimate). */
  inputFactor: number;
  /** The engine's clock, fixed: every call counts in the same day. */
  at: string;
}

/**
 * A model that honours its output cap: it reads the prompt as `inputFactor` times the metered client's estimate (four
 * characters a token) and writes up to its cap, a different length each call.
 */
function model(job: SpendJob): LlmClient {
  let n = 0;
  return {
    complete(req: LlmRequest): Promise<LlmResponse> {
      n += 1;
      const chars = req.system.length + req.messages.reduce((k, m) => k + m.content.length, 0);
      const cap = req.maxOutputTokens ?? 0;
      const output = Math.max(1, Math.round(cap * (0.5 + ((n * 37) % 50) / 100)));
      const usage = { inputTokens: Math.ceil((chars / 4) * job.inputFactor), outputTokens: Math.min(cap, output) };
      // The answer comes after a short wait, as a model's does, so calls of all three processes overlap.
      return new Promise((resolve) =>
        setTimeout(() => resolve({ text: 'x', model: 'gpt-test', usage }), 5 + ((n * 13) % 20)),
      );
    },
  };
}

async function main(): Promise<void> {
  const job = JSON.parse(process.env.SPEND_JOB ?? '{}') as SpendJob;
  const database = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: '.', maxConnections: 10 });
  try {
    const store = new PgRunStore(database.db);
    const deps = { llm: model(job), store, clock: () => new Date(job.at), prices: job.prices, spend: job.spend };
    const request: LlmRequest = {
      role: 'llm_step',
      system: '[steward:llm_step] Do the task.',
      messages: [{ role: 'user', content: 'Summarise this. '.repeat(250) }],
    };
    process.stdout.write('ready\n');
    await once(process.stdin, 'data');
    const outcomes = await Promise.all(
      Array.from({ length: job.calls }, (_, i) => {
        const run = job.runs[i % job.runs.length]!;
        return meteredLlm(deps, run.id, run.requester)
          .complete(request)
          .then(
            (r) => ({ ok: true as const, output: r.usage.outputTokens }),
            (err: unknown) => ({ ok: false as const, code: (err as { code?: string }).code ?? String(err) }),
          );
      }),
    );
    const granted = outcomes.filter((o) => o.ok).length;
    const refused = outcomes.flatMap((o) => (o.ok ? [] : [o.code]));
    process.stdout.write(`${JSON.stringify({ granted, refused })}\n`);
  } finally {
    await database.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
