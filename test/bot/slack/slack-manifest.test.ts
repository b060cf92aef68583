import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const manifest = readFileSync(new URL('../../../slack/manifest.yml', import.meta.url), 'utf8');

/** The `- item` lines right under a key (comments skipped). */
function listUnder(key: string): string[] {
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

describe('slack app manifest', () => {
  it('asks for exactly the scopes and events the adapter uses, with interactivity and Socket Mode on', () => {
    expect(listUnder('bot').sort()).toEqual(['app_mentions:read', 'channels:history', 'chat:write', 'groups:history']);
    expect(listUnder('bot_events').sort()).toEqual(['app_mention', 'message.channels', 'message.groups']);
    expect(manifest).toMatch(/interactivity:\n(\s+#.*\n)*\s+is_enabled: true/);
    expect(manifest).toMatch(/^\s+socket_mode_enabled: true$/m);
  });
});
