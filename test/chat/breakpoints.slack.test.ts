/** Breakpoints from the card (test/chat/breakpoints-spec.ts) on Slack: the hold message is text; Resume is on the card. */
import { breakpointsSpec } from './breakpoints-spec.ts';
import { slackChat } from './slack-chat.ts';

breakpointsSpec('slack', slackChat, { holdOffers: [] });
