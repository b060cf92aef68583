/**
 * Renders what Steward posts as thread replies (pure): reports, answers, notices, breakpoint holds, and the
 * amendment modal. Long text is cut with a note so Slack never rejects a message.
 */
import { feedbackBlock } from './slack-feedback.ts';
import { LEVEL_ICONS, reportTitle } from '../card-words.ts';
import type { types } from '@slack/bolt';
import type { Answer, BreakpointHit, Notice, Report } from '../../engine/messages.ts';
import { AMEND_INPUT, AMEND_VIEW, encodeCardRef, type CardRef } from './slack-actions.ts';
import { decisionButtons } from './slack-buttons.ts';
import type { SlackMessage } from './slack-render.ts';
import { codeSpan, escapeMrkdwn, safeMrkdwn, sentenceMrkdwn } from './slack-text.ts';
import { shortRunId } from '../../engine/text.ts';

/** Characters of body text a thread reply may carry (Slack refuses roughly 12,000 across all blocks). */
export const REPLY_BUDGET = 10_000;
const SECTION_MAX = 2_900;

/** The report, posted in the run's thread. */
export function renderReport(report: Report): SlackMessage {
  const title = reportTitle(report.status);
  const text = longText(`*${title}*`, report.text, `The full report is stored with run ${shortRunId(report.runId)}.`);
  // 👍 / 👎 under the report, stored with the run and shown on its dashboard page.
  return { ...text, blocks: [...text.blocks, feedbackBlock(report.runId)], metadata: reportMetadata(report.runId) };
}

/** The metadata every report message carries, so a process that takes the run over can find it in the thread. */
export const REPORT_EVENT = 'steward_report';
export function reportMetadata(runId: string): types.MessageMetadata {
  return { event_type: REPORT_EVENT, event_payload: { run_id: runId } };
}

/** A direct answer. */
export function renderAnswer(answer: Answer): SlackMessage {
  return longText('', answer.text, 'The answer was longer than a Slack message.');
}

/** A notice, in the thread or (with `to`) as an ephemeral message. */
export function renderNotice(notice: Notice): SlackMessage {
  const icon = LEVEL_ICONS[notice.level];
  const body = notice.parts ? sentenceMrkdwn(notice.parts, REPLY_BUDGET) : safeMrkdwn(notice.text, REPLY_BUDGET);
  // A long notice (a run's history) takes several sections rather than being cut at the first.
  const blocks: types.KnownBlock[] = chunk(`${icon} ${body}`).map((text) => ({
    type: 'section',
    text: { type: 'mrkdwn', text, verbatim: true },
  }));
  return { text: safeMrkdwn(`${icon} ${notice.text}`, 300), blocks };
}

/** A run holding at a breakpoint: the step's output and the buttons that continue or stop it. */
export function renderBreakpoint(hit: BreakpointHit): SlackMessage {
  const head = hit.before
    ? `⏸️ Holding before step ${codeSpan(hit.stepId, 100)}. It will send:`
    : `⏸️ Holding after step ${codeSpan(hit.stepId, 100)}. Its output:`;
  const output = `\`\`\`${safeMrkdwn(hit.output.replace(/```/g, 'ˋˋˋ'), SECTION_MAX - 200)}\`\`\``;
  const blocks: types.KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: head, verbatim: true } },
    { type: 'section', text: { type: 'mrkdwn', text: output, verbatim: true } },
  ];
  const buttons = decisionButtons(hit.actions, encodeCardRef({ runId: hit.runId, revision: hit.revision }), 0);
  if (buttons.length > 0) blocks.push({ type: 'actions', elements: buttons });
  return { text: head, blocks };
}

/** The amendment modal for a card; the card's run and revision travel in `private_metadata`. */
export function renderAmendModal(ref: CardRef, summary: string): types.ModalView {
  return {
    type: 'modal',
    callback_id: AMEND_VIEW,
    private_metadata: encodeCardRef(ref),
    title: { type: 'plain_text', text: 'Amend the plan' },
    submit: { type: 'plain_text', text: 'Re-plan' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: { type: 'mrkdwn', text: `Revision ${ref.revision}: ${safeMrkdwn(summary, 1_000)}`, verbatim: true },
      },
      {
        type: 'input',
        block_id: AMEND_INPUT.block,
        label: { type: 'plain_text', text: 'What should change?' },
        element: {
          type: 'plain_text_input',
          action_id: AMEND_INPUT.element,
          multiline: true,
          min_length: 1,
          max_length: 2_000,
        },
      },
    ],
  };
}

/** Long text as sections within the reply budget, with a note saying how much was cut. */
function longText(title: string, body: string, whereIsTheRest: string): SlackMessage {
  const mrkdwn = toMrkdwn(body);
  const escaped = safeMrkdwn(mrkdwn, REPLY_BUDGET);
  const blocks: types.KnownBlock[] = [];
  if (title) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: title } });
  for (const text of chunk(escaped)) blocks.push({ type: 'section', text: { type: 'mrkdwn', text, verbatim: true } });
  if (escapeMrkdwn(mrkdwn).length > REPLY_BUDGET) {
    const note = `✂️ Cut to fit in Slack: the whole text is ${body.length} characters long. ${whereIsTheRest}`;
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: safeMrkdwn(note, 300) }] });
  }
  return { text: `${title ? `${title} ` : ''}${safeMrkdwn(mrkdwn, 300)}`, blocks };
}

/** Splits text into pieces of at most a section's size, at a line break when there is one nearby. */
function chunk(text: string): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > SECTION_MAX) {
    let at = rest.lastIndexOf('\n', SECTION_MAX);
    if (at < SECTION_MAX / 2) at = SECTION_MAX;
    // Never split inside an escape such as `&amp;`.
    const amp = rest.lastIndexOf('&', at);
    if (amp > at - 5 && rest.indexOf(';', amp) >= at) at = amp;
    // Nor inside a mention (`<@U…>`) inserted after escaping.
    const open = rest.lastIndexOf('<', at - 1);
    if (open > rest.lastIndexOf('>', at - 1)) at = open;
    // Nor inside an emoji (a surrogate pair).
    if (isHighSurrogate(rest.charCodeAt(at - 1))) at -= 1;
    out.push(rest.slice(0, at));
    rest = rest.slice(at).replace(/^\n/, '');
  }
  if (rest) out.push(rest);
  return out.length > 0 ? out : ['(empty)'];
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Markdown from a model, turned into Slack's mrkdwn where the two differ most (bold and headings). */
function toMrkdwn(text: string): string {
  return text.replace(/\*\*(.+?)\*\*/g, '*$1*').replace(/^#{1,6}\s+(.+)$/gm, '*$1*');
}
