import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { STEWARD_COMMAND } from '../../../src/bot/slack/slack-command-text.ts';
import { ASK_MESSAGE_SHORTCUT } from '../../../src/bot/slack/slack-ask-message.ts';

const read = (name: string) => readFileSync(new URL(`../../../slack/${name}`, import.meta.url), 'utf8');
const manifests = { full: read('manifest.yml'), 'mention-only': read('manifest-mention-only.yml') };

/** The `- item` lines right under a key (comments skipped). */
function listUnder(manifest: string, key: string): string[] {
  const lines = manifest.split('\n');
  const start = lines.findIndex((l) => l.trim() === `${key}:`);
  const items: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const t = line.trim();
    if (t.startsWith('#')) continue;
    if (!t.startsWith('- ')) break;
    items.push(t.slice(2));
  }
  return items;
}

/** The scope each event the adapter listens to needs (Slack refuses the manifest otherwise); null: none. */
const EVENT_SCOPES: Record<string, string | null> = {
  app_mention: 'app_mentions:read',
  app_home_opened: null,
  // https://docs.slack.dev/reference/events/assistant_thread_started: "Required scopes: assistant:write".
  assistant_thread_started: 'assistant:write',
  'message.channels': 'channels:history',
  'message.groups': 'groups:history',
  'message.im': 'im:history',
};
/** Scopes needed by what the adapter calls, whatever it listens to: posting (and the loading status), the
 * fallback reaction, the slash command, and the files attached to a report. */
const CALL_SCOPES = ['chat:write', 'reactions:write', 'commands', 'files:write'];

describe('slack app manifests', () => {
  it.each(Object.entries(manifests))('%s: every scope is used and every event has its scope', (_mode, manifest) => {
    const events = listUnder(manifest, 'bot_events');
    const scopes = listUnder(manifest, 'bot');
    const needed = events.map((e) => {
      expect(EVENT_SCOPES, `the event ${e}`).toHaveProperty([e]);
      return EVENT_SCOPES[e];
    });
    expect(scopes.sort()).toEqual([...needed.filter((s) => s !== null), ...CALL_SCOPES].sort());
    expect(manifest).toMatch(/interactivity:\n(\s+#.*\n)*\s+is_enabled: true/);
    expect(manifest).toMatch(/^\s+socket_mode_enabled: true$/m);
    expect(manifest).toMatch(new RegExp(`slash_commands:\\n\\s+- command: ${STEWARD_COMMAND}\\n`));
    // DMs need the Messages tab open for writing.
    expect(manifest).toMatch(/^\s+messages_tab_enabled: true$/m);
    expect(manifest).toMatch(/^\s+messages_tab_read_only_enabled: false$/m);
    // The Home tab, published when opened.
    expect(manifest).toMatch(/^\s+home_tab_enabled: true$/m);
    expect(events).toContain('app_home_opened');
    // The AI app split view, where a new thread gets suggested prompts (assistant_thread_started).
    expect(manifest).toMatch(/^\s+assistant_view:\n(\s+#.*\n)*\s+assistant_description: \S/m);
    expect(events).toContain('assistant_thread_started');
    // The message shortcut, with the callback id the adapter listens for.
    expect(manifest).toMatch(
      new RegExp(
        `shortcuts:\\n\\s+- name: Ask Steward about this message\\n\\s+type: message\\n\\s+callback_id: ${ASK_MESSAGE_SHORTCUT}\\n`,
      ),
    );
  });

  it('full mode hears plain thread replies; mention-only mode reads no channel history, and differs in nothing else', () => {
    expect(listUnder(manifests.full, 'bot_events').sort()).toEqual([
      'app_home_opened',
      'app_mention',
      'assistant_thread_started',
      'message.channels',
      'message.groups',
      'message.im',
    ]);
    expect(listUnder(manifests['mention-only'], 'bot_events').sort()).toEqual([
      'app_home_opened',
      'app_mention',
      'assistant_thread_started',
      'message.im',
    ]);
    expect(listUnder(manifests['mention-only'], 'bot')).not.toContain('channels:history');
    const settings = (m: string) => m.slice(m.indexOf('display_information:')).replace(/^\s*#.*\n/gm, '');
    const withoutHistory = settings(manifests.full)
      .split('\n')
      .filter((l) => !/channels:history|groups:history|message\.channels|message\.groups/.test(l))
      .join('\n');
    expect(settings(manifests['mention-only'])).toBe(withoutHistory);
  });
});
