/**
 * The scenario matrix on the console (issue 25): the all-pairs covering set in `npm test`, the whole product with
 * STEWARD_SCENARIOS=all (`npm run scenarios`). Each cell runs on its own stage (its own database, Steward, fake model
 * and audit session and log; see matrix-suite.ts), so cells cannot leak runs into each other.
 * Part 1 of 3: the cells are spread over 3 files, which vitest runs side by side.
 */
import { consolePerson } from './console-person.ts';
import { matrixSuite } from './matrix-suite.ts';

matrixSuite('console', consolePerson, [1, 3]);
