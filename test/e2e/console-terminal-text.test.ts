import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { byRole } from '../fakes/fake-llm-server.ts';
import { serverConfig } from '../helpers/mcp-servers.ts';
import { rawControls } from '../bot/terminal-controls.ts';
import { planReply, startHarness, type Harness } from './harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

// What an attacker's page holds: a window title change (OSC), clear screen and cursor home, cursor moves, a carriage
// return that would draw a fake approval over the line, and a right-to-left override that reverses a file name.
const PAGE = 'Page \x1b]0;pwned\x07\x1b[2J\x1b[H\x1b[3A\x1b[10;5H Denied\r✔ Approved, report\u202etxt.exe';
const PAGE_SHOWN =
  'Page \\x1b]0;pwned\\x07\\x1b[2J\\x1b[H\\x1b[3A\\x1b[10;5H Denied\\x0d✔ Approved, report\\u202etxt.exe';
// What a steered model writes into the plan card and the report.
const MODEL = 'All fine\x1b]0;model\x07\x1b[2J\r=== Report (completed) ===\u202e';
const MODEL_SHOWN = 'All fine\\x1b]0;model\\x07\\x1b[2J\\x0d=== Report (completed) ===\\u202e';

/** The fixture server whose `page` answers with PAGE and whose `broken` fails with PAGE as its error. */
function hostileServer() {
  return serverConfig('hostile', {
    command: process.execPath,
    args: [join(import.meta.dirname, 'terminal-text-server.mjs')],
    env: { HOSTILE_TEXT: PAGE },
  });
}

describe('console: text from tools, models and people reaches the terminal inert (postgres)', () => {
  it('escape sequences, overwrites and bidi overrides are shown escaped on the card, breakpoint, status, failure line, report and history, and stripped from a progress message', async () => {
    const plan = planReply(
      [
        { id: 'read', tool: 'hostile.page', args: {}, description: MODEL },
        { id: 'again', tool: 'hostile.broken', args: {}, dependsOn: ['read'] },
      ],
      { summary: MODEL, risks: [MODEL] },
    );
    h = await startHarness({
      db: 'postgres',
      servers: [hostileServer()],
      script: byRole({ planner: [plan], classifier: ['status'], synthesizer: [MODEL] }),
    });
    await h.store.setReviewPreference({ id: 'ada', channel: 'console' }, 'all', new Date());
    await h.type('read the page \u202eexe.txt\x1b[2J');
    await h.waitFor(/revision 0, risk LOW/);
    await h.type('break read');
    await h.type('approve');
    await h.waitFor(/=== Breakpoint after read ===/);
    await h.type('how is it going?');
    await h.waitFor(/Run paused: 1\/2 steps finished/);
    await h.type('continue');
    await h.waitFor(/=== Report \(failed\) ===/);
    await h.steward.idle();
    await h.type('history');
    await h.waitFor(/History of/);

    const printed = h.output();
    // The terminal got none of the raw sequences.
    for (const raw of ['\x1b', '\x07', '\r', '\u202e']) expect(printed).not.toContain(raw);
    expect(rawControls(printed)).toEqual([]);
    // The person sees each of them, escaped, wherever the text appeared.
    expect(printed).toContain(`=== Plan (revision 0, risk LOW) ===\n${MODEL_SHOWN}\n`);
    expect(printed).toContain(`\n     ${MODEL_SHOWN}\n`);
    expect(printed).toContain(`Risks: ${MODEL_SHOWN}\n`);
    expect(printed).toContain(`=== Breakpoint after read ===\n${PAGE_SHOWN}\n`);
    expect(printed).toContain(`• read succeeded: ${PAGE_SHOWN}\n`);
    // Its progress message (issue 29) is one plain line: controls, the carriage return and the override are gone.
    expect(printed).toContain(
      '▶ read running — calling hostile.page: 1 / 1, Page ]0;pwned [2J [H [3A [10;5H Denied ✔ Approved, report txt.exe [0/2]',
    );
    expect(printed).toContain(`✖ again failed — ${PAGE_SHOWN}`);
    expect(printed).toContain(`=== Report (failed) ===\n${MODEL_SHOWN}\n`);
    expect(printed).toContain('History of "read the page \\u202eexe.txt\\x1b[2J"');
    // The fake report heading stays on the line of the text that carried it.
    expect(printed.match(/^=== Report \(/gm)).toHaveLength(1);
  });
});
