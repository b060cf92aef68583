/**
 * The scenario matrix in Discord (issue 25): the real discord.js client over the fake Discord, each cell in its own
 * thread on its own stage; the all-pairs covering set in `npm test`, the whole product with STEWARD_SCENARIOS=all.
 * Part k of 2: the cells are spread over 2 files, which vitest runs side by side.
 */
import { matrixSuite } from './matrix-suite.ts';
import { discordPerson } from './discord-person.ts';

matrixSuite('discord', discordPerson, [1, 2]);
