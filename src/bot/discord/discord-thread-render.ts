/**
 * Renders what Steward posts in a run's thread as Discord messages (pure): reports, answers, notices and breakpoint
 * holds. Model-written text keeps its markdown with mentions and masked links made inert; long text is split over
 * at most three messages and then cut with a note, so a 1 MB report still gives valid messages.
 */
import { LEVEL_ICONS, reportTitle } from '../card-words.ts';
import type { Answer, BreakpointHit, Notice, Report } from '../../engine/messages.ts';
import { buttonRows, decisionButtons, DESCRIPTION_MAX, textMessage, type DiscordMessage } from './discord-render.ts';
import { codeBlockText, codeSpan, neutraliseMentions, sentenceText, splitText } from './discord-text.ts';
import { shortRunId } from '../../engine/text.ts';

/** Characters of content a message holds. */
export const CONTENT_MAX = 2_000;
/** The most messages one report or answer takes. */
export const MAX_PARTS = 3;

const LEVEL_COLOURS: Record<Notice['level'], number> = { info: 0x5865f2, warning: 0xe67e22, error: 0xed4245 };

/** The report, as the model wrote it, in at most three messages. */
export function renderReport(report: Report): DiscordMessage[] {
  const title = reportTitle(report.status);
  const text = `**${title}**\n${neutraliseMentions(report.text)}`;
  const where = ` The full report is stored with run ${shortRunId(report.runId)}.`;
  return splitText(text, CONTENT_MAX, MAX_PARTS, where).map((content) => textMessage(content));
}

/** A direct answer, in at most three messages. */
export function renderAnswer(answer: Answer): DiscordMessage[] {
  const text = neutraliseMentions(answer.text) || '(no answer)';
  return splitText(text, CONTENT_MAX, MAX_PARTS).map((content) => textMessage(content));
}

/**
 * A notice, in the thread or (with `to`) only to that person: its icon by level, its people as mentions. A notice
 * too long for content (a run's history) goes in an embed, which holds twice as much.
 */
export function renderNotice(notice: Notice): DiscordMessage {
  const icon = LEVEL_ICONS[notice.level];
  const text = `${icon} ${sentenceText(notice, DESCRIPTION_MAX - icon.length - 1)}`;
  if (text.length <= CONTENT_MAX) return textMessage(text);
  return {
    embeds: [{ description: text, color: LEVEL_COLOURS[notice.level] }],
    components: [],
    allowed_mentions: { parse: [] },
  };
}

/** A run holding at a breakpoint: the step's output in a code block, and the buttons that continue or stop it. */
export function renderBreakpoint(hit: BreakpointHit): DiscordMessage {
  const step = codeSpan(hit.stepId, 100);
  const head = hit.before
    ? `⏸️ Holding before step ${step}. It will send:`
    : `⏸️ Holding after step ${step}. Its output:`;
  const output = codeBlockText(hit.output, CONTENT_MAX - head.length - 1);
  const buttons = decisionButtons(hit.actions, { runId: hit.runId, revision: hit.revision }, null);
  return textMessage(`${head}\n${output}`, buttonRows(buttons));
}
