/** What every shared chat spec file needs: one chat stage per test, closed after it with whatever the test set up. */
import { afterEach } from 'vitest';
import type { Chat, ChatOptions } from './chat.ts';

/** Starts a chat stage for a platform. */
export type Start<C extends Chat> = (options: ChatOptions) => Promise<C>;

/** The stage of the running test: `start` opens it, and after the test it is closed, then each `cleanup` runs. */
export function useChat<C extends Chat>(
  open: Start<C>,
): { start: (options: ChatOptions) => Promise<C>; cleanup: (fn: () => void) => void } {
  let chat: C | undefined;
  let cleanups: (() => void)[] = [];
  afterEach(async () => {
    try {
      await chat?.close();
    } finally {
      chat = undefined;
      for (const fn of cleanups) fn();
      cleanups = [];
    }
  });
  return {
    async start(options) {
      chat = await open(options);
      return chat;
    },
    cleanup: (fn) => void cleanups.push(fn),
  };
}
