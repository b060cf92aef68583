/** `/steward review` and `suggestions` (test/chat/preferences-spec.ts) on Slack, answered by ephemeral responses. */
import { preferencesSpec } from './preferences-spec.ts';
import { slackChat } from './slack-chat.ts';

preferencesSpec('slack', slackChat);
