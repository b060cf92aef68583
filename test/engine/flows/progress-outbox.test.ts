/** The driver's outbox: messages in the order their places were taken, a kept place bounded in time. */
import { describe, expect, it } from 'vitest';
import { ProgressOutbox } from '../../../src/engine/flows/progress-outbox.ts';
import { waitUntil } from '../../helpers/wait.ts';

function outbox(maxHoldMs = 1_000) {
  const sent: string[] = [];
  const box = new ProgressOutbox<string>((m) => {
    sent.push(m);
    return Promise.resolve();
  }, maxHoldMs);
  return { box, sent };
}

describe('the progress outbox', () => {
  it('a kept place holds what is pushed after it until it is filled, then sends in order', async () => {
    const { box, sent } = outbox();
    const running = box.keepPlace();
    box.push('✖ cheap failed');
    await Promise.resolve();
    expect(sent).toEqual([]);
    running('▶ b running');
    running('a second fill is ignored');
    await box.idle();
    expect(sent).toEqual(['▶ b running', '✖ cheap failed']);
  });

  it('a place filled with nothing lets the rest go on', async () => {
    const { box, sent } = outbox();
    const hold = box.keepPlace();
    box.push('■ s1 cancelled');
    hold(null);
    await box.idle();
    expect(sent).toEqual(['■ s1 cancelled']);
  });

  it('a place not filled in time lets the rest go on; its message, when it comes, goes last', async () => {
    const { box, sent } = outbox(20);
    const late = box.keepPlace();
    box.push('✔ a succeeded');
    await waitUntil('the rest went on', () => sent.length === 1);
    late('▶ b running');
    await box.idle();
    expect(sent).toEqual(['✔ a succeeded', '▶ b running']);
  });
});
