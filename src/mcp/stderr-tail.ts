/**
 * Keeps the last lines a server wrote to stderr, so error messages can say why it died.
 */

const KEEP_LINES = 20;
const MAX_LINE_CHARS = 500;

/** A bounded buffer of complete stderr lines plus the unfinished one. */
export class StderrTail {
  private lines: string[] = [];
  private partial = '';

  /** Adds a chunk and returns the complete, non-blank lines it finished. */
  push(chunk: string): string[] {
    const parts = (this.partial + chunk).split(/\r?\n/);
    this.partial = (parts.pop() ?? '').slice(-MAX_LINE_CHARS);
    const finished = parts.map((l) => l.trimEnd().slice(0, MAX_LINE_CHARS)).filter((l) => l.trim() !== '');
    this.lines.push(...finished);
    if (this.lines.length > KEEP_LINES) this.lines.splice(0, this.lines.length - KEEP_LINES);
    return finished;
  }

  /** The last non-blank line written, finished or not. */
  lastLine(): string | undefined {
    return this.partial.trim() !== '' ? this.partial.trimEnd() : this.lines.at(-1);
  }

  /** The kept lines, oldest first. */
  recent(): string[] {
    return [...this.lines];
  }
}
