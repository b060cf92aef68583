/** Delegation (test/chat/delegation-spec.ts) on Slack. */
import { delegationSpec } from './delegation-spec.ts';
import { slackChat } from './slack-chat.ts';

delegationSpec('Slack', slackChat);
