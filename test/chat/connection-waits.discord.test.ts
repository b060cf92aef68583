/** A step waiting on its requester's own connection (test/chat/connection-waits-spec.ts), steered on Discord. */
import { connectionWaitsSpec } from './connection-waits-spec.ts';
import { discordChat } from './discord-chat.ts';

connectionWaitsSpec('discord', discordChat);
