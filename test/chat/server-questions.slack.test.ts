/** A server's question mid-call (test/chat/server-questions-spec.ts), on Slack. */
import { serverQuestionsSpec } from './server-questions-spec.ts';
import { slackChat } from './slack-chat.ts';

serverQuestionsSpec('slack', slackChat);
