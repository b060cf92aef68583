import { describe, expect, it } from 'vitest';
import { attachmentsText, fitAttachments } from '../../src/bot/attachments.ts';
import type { RunFile } from '../../src/engine/messages.ts';

const file = (name: string, bytes: number): RunFile => ({ stepId: 's', name, mimeType: 'image/png', data: '', bytes });
const limits = { platform: 'Discord', maxFiles: 2, maxFileBytes: 100, maxTotalBytes: 150 };

describe('fitAttachments', () => {
  it('skips a file over the per-file size, then one over the message total, then past the count, saying why', () => {
    const fitted = fitAttachments(
      [file('big', 101), file('a', 80), file('b', 80), file('c', 60), file('d', 1)],
      limits,
    );
    expect(fitted.attach.map((f) => f.name)).toEqual(['a', 'c']);
    expect(attachmentsText(fitted)).toBe(
      [
        'Files from this run (2):',
        "• big (image/png, 101 bytes) from step s: not attached (over Discord's 100 bytes per file)",
        "• b (image/png, 80 bytes) from step s: not attached (over Discord's 150 bytes per message)",
        '• d (image/png, 1 bytes) from step s: not attached (at most 2 files go with a report here)',
      ].join('\n'),
    );
  });
});
