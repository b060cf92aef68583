/** Entry point: `npm start`. Reads `.env` if present, starts Steward on the console, exits cleanly. */
import { existsSync } from 'node:fs';
import { startApp } from './app.ts';
import { secretValues } from './config.ts';
import { StewardError } from './engine/errors.ts';
import { redact } from './logger.ts';

if (existsSync('.env')) process.loadEnvFile('.env');

let closing = false;
try {
  const app = await startApp({
    env: process.env,
    input: process.stdin,
    output: process.stdout,
    onClose: () => void shutdown(),
  });
  async function shutdown(graceMs?: number): Promise<void> {
    if (closing) return;
    closing = true;
    await app.close({ graceMs });
    process.exit(0);
  }
  process.once('SIGINT', () => void shutdown());
  // A deploy: steps in flight may end first, then their runs are handed to the other processes.
  process.once('SIGTERM', () => void shutdown(app.config.shutdownGraceMs));
} catch (err) {
  const secrets = secretValues(process.env);
  const message = err instanceof StewardError ? err.message : `Steward could not start: ${(err as Error).message}`;
  process.stderr.write(`${redact(message, secrets)}\n`);
  process.exit(1);
}
