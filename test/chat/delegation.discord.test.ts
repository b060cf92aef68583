/** Delegation (test/chat/delegation-spec.ts) on Discord. */
import { delegationSpec } from './delegation-spec.ts';
import { discordChat } from './discord-chat.ts';

delegationSpec('Discord', discordChat);
