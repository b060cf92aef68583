/** A step waiting on its requester's own connection (test/chat/connection-waits-spec.ts), steered on Slack. */
import { connectionWaitsSpec } from './connection-waits-spec.ts';
import { slackChat } from './slack-chat.ts';

connectionWaitsSpec('slack', slackChat);
