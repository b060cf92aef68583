/** Text helpers shared by the cards, the status answers and the report. */
import type { Json } from './types.ts';

/** Text of a step output: MCP text blocks joined, else compact JSON. */
export function outputText(output: Json | undefined): string {
  if (output && typeof output === 'object' && !Array.isArray(output)) {
    if (typeof output.text === 'string') return output.text;
    const content = output.content;
    if (Array.isArray(content)) {
      // Servers that send structuredContent also send it as text (the spec asks them to): the text is enough.
      const texts = content.flatMap((c) =>
        c && typeof c === 'object' && !Array.isArray(c) && typeof c.text === 'string' ? [c.text] : [],
      );
      if (texts.length > 0) return texts.join('\n');
    }
  }
  return JSON.stringify(output ?? null);
}

/** A run's id as people read it, everywhere it is shown: its first eight characters (the full id stays in links). */
export function shortRunId(runId: string): string {
  return runId.slice(0, 8);
}

/** Cuts text to `max` characters with a note saying how much was left out. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters not shown]`;
}
