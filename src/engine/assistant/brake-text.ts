/** The words of the brakes: a sentence for each trip, and the escalation a parent gets when rounds run out. */
import { DEPTH_CEILING, type DelegationRound, type Tripped } from './delegations.ts';
import { cut } from '../text.ts';

/** Most characters of one instruction or reply in an escalation; longer ones are cut with a note. */
export const ESCALATION_FIELD_CHARS = 1_500;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A clear sentence for a trip, for the person or the parent run that hit it; `assistant` names the Assistant
 * asked, when there is one. */
export function brakeSentence(trip: Tripped, assistant?: string): string {
  const who = assistant ? `${assistant}` : 'the Assistant';
  switch (trip.brake) {
    case 'depth':
      return (
        `Delegation refused: ${who} would run ${plural(trip.count, 'level')} deep, and this chain may go ` +
        `${plural(trip.limit, 'level')} deep (the operator's setting, or less where a plan asked for less; never more ` +
        `than ${DEPTH_CEILING}). ` +
        'Do this part without delegating it.'
      );
    case 'concurrency':
      return (
        `Delegation refused: this person already has ${plural(trip.count, 'delegated run')} going, and ` +
        `${trip.limit} at once is the most. Wait until one ends, or stop one.`
      );
    case 'rounds':
      return (
        `Delegation refused: this conversation has asked ${who} ${plural(trip.count, 'time')}, and ` +
        `${trip.limit} is the most; ${who} will not be called again here.`
      );
    case 'messages':
      return (
        `Message refused: a delegated run and its parent have exchanged ${plural(trip.count, 'message')}, and ` +
        `${trip.limit} is the most. Finish with what you have.`
      );
  }
}

/**
 * What the parent gets instead of another round with an Assistant: how many rounds there were, each round's
 * instruction and reply (each cut to `fieldChars`), and a plain directive to take over without calling it again.
 */
export function escalationText(
  assistant: string,
  rounds: readonly DelegationRound[],
  limit: number,
  fieldChars = ESCALATION_FIELD_CHARS,
): string {
  const lines = [
    `${assistant} was asked ${plural(rounds.length, 'time')} in this conversation, and ${limit} is the most: ` +
      `it will not be called again here.`,
  ];
  for (const r of rounds) {
    lines.push(
      '',
      `Round ${r.round}`,
      `Instruction: ${cut(r.instruction, fieldChars)}`,
      `Reply: ${r.reply === null ? '(none: it did not finish)' : cut(r.reply, fieldChars)}`,
    );
  }
  lines.push(
    '',
    `Take over now: finish the task yourself from what is above, or tell the person plainly what is missing. ` +
      `Do not delegate to ${assistant} again.`,
  );
  return lines.join('\n');
}
