/** Thread replies (test/chat/thread-spec.ts) on Slack. */
import { slackChat } from './slack-chat.ts';
import { threadSpec } from './thread-spec.ts';

threadSpec('slack', slackChat);
