/**
 * A Kysely handle on a test database whose pool records every statement its connections send to PostgreSQL
 * (BEGIN and COMMIT included), so a test can count the round trips a piece of work costs.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { DatabaseSchema } from '../../src/store/schema.ts';
import { testDatabaseUrlFor } from './databases.ts';

/** The recording handle: `statements` grows with every query sent; `close` ends its pool. */
export interface StatementLog {
  db: Kysely<DatabaseSchema>;
  statements: string[];
  close(): Promise<void>;
}

/** Opens a second, recording pool on the (already migrated) PostgreSQL test database `name`. */
export function recordStatements(name: string): StatementLog {
  const statements: string[] = [];
  const pool = new pg.Pool({ connectionString: testDatabaseUrlFor(name), max: 10 });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0];
      const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '?');
      statements.push(text.replace(/\s+/g, ' ').trim());
      return query(...args);
    };
  });
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  return { db, statements, close: () => db.destroy() };
}
