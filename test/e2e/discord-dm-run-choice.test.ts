/**
 * Which run a word applies to in a Discord DM (issue 25, docs/runs.md "Steering a run"): a DM is one thread, so a word
 * there is about its run; a bare `stop` while several runs are active there (one resumed or fired into the DM, say)
 * names none of them and is answered with a picker: a Stop button per run. Cancellations are seen at the audit server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { createAuditServer, planReply, type AuditServer } from './harness.ts';
import { startDiscordHarness, type DiscordHarness } from './discord-harness.ts';

let h: DiscordHarness | undefined;
let audit: AuditServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  audit?.remove();
  audit = undefined;
});

const sleepPlan = (id: string) => planReply([{ id, tool: 'audit.sleep', args: { ms: 20_000 } }]);
const entries = (type: string) => (audit?.entries() ?? []).filter((e) => e.type === type && e.name === 'sleep');

describe('which run a word applies to in a Discord DM', () => {
  it('a bare "stop" in a DM with two active runs answers with a picker; its buttons stop only the run pressed', async () => {
    audit = createAuditServer();
    h = await startDiscordHarness({
      db: 'postgres',
      servers: [audit.config()],
      script: byRole({ planner: [sleepPlan('a'), sleepPlan('b')], synthesizer: 'Stopped.' }),
    });
    const dm = await h.dm('Wait twenty seconds');
    await h.waitFor('the first sleep at the server', () => entries('call').length === 1);
    // A second run in the same DM, as a workflow fire or a run taken up after a restart makes one.
    const ada = { id: h.ada.id, name: h.ada.username, channel: 'discord' };
    const conversation = { channel: 'discord', key: `dm:${dm}` };
    await h.steward.message({ conversation, actor: ada, text: 'Wait twenty seconds more', newRequest: true });
    await h.waitFor('both sleeps at the server', () => entries('call').length === 2);
    const runs = await h.db.db.selectFrom('runs').select(['id', 'request']).orderBy('created_at').execute();
    const [a, b] = runs.map((r) => r.id);
    const modelCalls = h.llm.requests.length;

    await h.dm('stop');
    const picker = await h.waitFor('the picker', () =>
      h!.replies(dm).find((m) => m.message.content.startsWith('Which run should I stop?')),
    );
    expect(picker.message.content.split('\n')).toEqual([
      'Which run should I stop? You have 2 active runs here:',
      `• ${b!.slice(0, 8)} · running · Wait twenty seconds more`,
      `• ${a!.slice(0, 8)} · running · Wait twenty seconds`,
    ]);
    expect(h.buttons(picker)).toEqual(['stop', 'stop']);
    // The word was neither a reply to either run nor a request: no model call, no run.
    expect(h.llm.requests).toHaveLength(modelCalls);
    expect(await h.db.db.selectFrom('runs').select('id').execute()).toHaveLength(2);

    await h.press(picker, 'stop', { customId: `stw:stop:${a!}:0` });
    await h.waitFor('the cancellation at the server', () => entries('cancelled').length === 1);
    await h.waitFor('the first run to stop', async () => (await h!.store.getRun(a!))?.status === 'stopped');
    expect((await h.store.getRun(b!))?.status).toBe('running');
  });
});
