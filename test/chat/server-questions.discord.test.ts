/** A server's question mid-call (test/chat/server-questions-spec.ts), on Discord. */
import { serverQuestionsSpec } from './server-questions-spec.ts';
import { discordChat } from './discord-chat.ts';

serverQuestionsSpec('discord', discordChat);
