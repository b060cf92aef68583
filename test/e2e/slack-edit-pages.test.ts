/**
 * Slack refuses a view over 250 kB (`view_too_large`; the fake does too, test/fakes/fake-slack-server.ts). The
 * step-by-step edit form of a big plan comes in pages that each fit: a reviewer opens it, moves to another page, and
 * saves a change there, while the steps on other pages stay as they were.
 */
import { afterEach, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { echo, reviewed } from '../helpers/mcp-servers.ts';
import { planReply } from './harness.ts';
import { chooseStepsPage, openStepsView, submitSteps } from './slack-controls.ts';
import { messageText, onlyRunId, startSlackHarness, type SlackHarness } from './slack-harness.ts';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Block = { type: string; block_id?: string; text?: { text: string }; element?: { initial_value?: string } };
const stepBoxes = (view: { blocks?: Block[] } | undefined) =>
  (view?.blocks ?? []).filter((b) => b.block_id?.startsWith('step:')).map((b) => b.block_id!.slice(5));

it('a plan of 100 steps of Japanese text: the edit form opens in pages under 250 kB, and a change on page 2 is saved', async () => {
  // About 2.5 kB of UTF-8 per step's box: the whole form would weigh some 260 kB.
  const steps = Array.from({ length: 100 }, (_, i) => echo(`s${i}`, `第${i}段階の説明、`.repeat(80)));
  h = await startSlackHarness({
    db: 'postgres',
    servers: [reviewed()],
    script: byRole({ planner: [planReply(steps)] }),
  });
  const thread = await h.mention('百の手順');
  const card = await h.waitFor('the card', () => h!.card(thread));
  const runId = await onlyRunId(h);

  await h.press(card, 'edit-plan');
  const opened = h.slack.callsOf('views.open').at(-1)!;
  expect(opened.response).toMatchObject({ ok: true });
  expect(Buffer.byteLength(JSON.stringify(opened.args.view))).toBeLessThanOrEqual(250_000);
  const first = stepBoxes(openStepsView(h));
  expect(first[0]).toBe('s0');
  expect(first.length).toBeLessThan(100);
  const menu = JSON.stringify((openStepsView(h) as { blocks: Block[] }).blocks);
  expect(menu).toContain('Page 1 of');

  // The second page: the steps after the first page's last.
  const next = `s${first.length}`;
  expect(await chooseStepsPage(h, next)).toBe(200);
  await h.waitFor('page 2', () => stepBoxes(openStepsView(h!) as { blocks?: Block[] })[0] === next);
  const update = h.slack.callsOf('views.update').at(-1)!;
  expect(update.response).toMatchObject({ ok: true });
  expect(Buffer.byteLength(JSON.stringify(update.args.view))).toBeLessThanOrEqual(250_000);
  const second = stepBoxes(openStepsView(h));
  expect(second).not.toContain('s0');

  const view = openStepsView(h) as { blocks: Block[] };
  const values = Object.fromEntries(
    view.blocks
      .filter((b) => b.block_id?.startsWith('step:') || b.block_id === 'new-steps')
      .map((b) => {
        const text = b.element?.initial_value ?? '';
        const changed = b.block_id === `step:${next}` ? text.replace(`第${first.length}段階`, '変更した段階') : text;
        return [b.block_id!, { json: { type: 'plain_text_input', value: changed } }];
      }),
  );
  const saved = await submitSteps(h, values);
  expect(saved.answer).toBeNull();
  await h.waitFor('revision 1 on the card', () => messageText(h!.card(thread)).includes('revision 1'));
  const plan = (await h.store.getRun(runId))!.plan!;
  expect(plan.steps.map((s) => s.id)).toEqual(steps.map((s) => s.id));
  expect(JSON.stringify(plan.steps[first.length])).toContain('変更した段階');
  // Page 1's steps were not in the form that was saved, and stay as they were.
  expect(plan.steps[0]).toEqual(expect.objectContaining({ args: steps[0]!.args }));
});
