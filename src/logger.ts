/** A small line logger that scrubs known secret values from everything it writes. */
import { appendFileSync } from 'node:fs';

export type LogLevel = 'info' | 'warn' | 'error';
export type Log = (level: LogLevel, message: string) => void;

/** Replaces each secret (and any password in a URL) with a mask. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('[redacted]');
  return out.replace(/(\w+:\/\/[^:/\s]+):[^@\s]+@/g, '$1:[redacted]@');
}

/** A logger writing to a file (the console channel owns the terminal) or to stderr. */
export function createLogger(options: { file?: string; secrets: readonly string[] }): Log {
  return (level, message) => {
    const line = `${new Date().toISOString()} ${level.toUpperCase()} ${redact(message, options.secrets)}\n`;
    if (options.file) appendFileSync(options.file, line);
    else process.stderr.write(line);
  };
}
