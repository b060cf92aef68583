/** Thread replies (test/chat/thread-spec.ts) on Discord; without the Message Content intent: discord-thread.test.ts. */
import { discordChat } from './discord-chat.ts';
import { threadSpec } from './thread-spec.ts';

threadSpec('discord', discordChat);
