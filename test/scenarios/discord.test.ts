/**
 * The scenario matrix in Discord (issue 25): the real discord.js client over the fake Discord, each cell in its own
 * thread on its own stage; the all-pairs covering set in `npm test`, the whole product with STEWARD_SCENARIOS=all.
 */
import { discordPerson } from './discord-person.ts';
import { matrixSuite } from './matrix-suite.ts';

matrixSuite('discord', discordPerson);
