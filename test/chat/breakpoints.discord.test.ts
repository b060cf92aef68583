/** Breakpoints from the card (test/chat/breakpoints-spec.ts) on Discord: the hold message offers Resume and Stop. */
import { breakpointsSpec } from './breakpoints-spec.ts';
import { discordChat } from './discord-chat.ts';

breakpointsSpec('discord', discordChat, { holdOffers: ['resume', 'stop'] });
