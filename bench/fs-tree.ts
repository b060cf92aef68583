/**
 * A generated folder for server-filesystem: text files of about 50 KB, each with a title on its first line and a
 * checksum of its body on its last line, so that a correct answer needs the start or the end of a large read.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uniforms } from './latency-model.ts';

/** One generated file and the facts a correct answer reports. */
export interface GeneratedFile {
  path: string;
  title: string;
  checksum: string;
}

const WORDS = [
  'amber',
  'basil',
  'cedar',
  'delta',
  'ember',
  'fjord',
  'grove',
  'harbor',
  'indigo',
  'juniper',
  'kelp',
  'lumen',
  'maple',
  'nectar',
  'opal',
  'pine',
];
const TARGET_BYTES = 50 * 1024;

/** Writes `count` files under a new temp folder; the same seed gives the same bytes. */
export function createFsTree(count: number, seed: number): { root: string; files: GeneratedFile[] } {
  const root = mkdtempSync(join(tmpdir(), 'steward-bench-fs-'));
  mkdirSync(join(root, 'docs'));
  const files: GeneratedFile[] = [];
  for (let i = 1; i <= count; i++) {
    const tag = createHash('sha256').update(`${seed}:doc-${i}`).digest('hex').slice(0, 6);
    const title = `doc-${i} ${tag}`;
    const lines = [`title: ${title}`];
    let bytes = lines[0]!.length + 1;
    for (let n = 1; bytes < TARGET_BYTES; n++) {
      const words = Array.from(
        { length: 9 },
        (_, k) => WORDS[Math.floor(uniforms(`${seed}:${i}:${n}:${k}`)[0] * WORDS.length)],
      );
      const line = `line ${String(n).padStart(5, '0')}: ${words.join(' ')}`;
      lines.push(line);
      bytes += line.length + 1;
    }
    const body = `${lines.join('\n')}\n`;
    const checksum = createHash('sha256').update(body).digest('hex').slice(0, 12);
    const path = join(root, 'docs', `doc-${i}.txt`);
    writeFileSync(path, `${body}checksum: ${checksum}\n`);
    files.push({ path, title, checksum });
  }
  return { root, files };
}
