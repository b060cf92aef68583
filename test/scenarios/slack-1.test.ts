/**
 * The scenario matrix in Slack (issue 25): the real Bolt app over the fake Slack, each cell in its own thread on its
 * own stage; the all-pairs covering set in `npm test`, the whole product with STEWARD_SCENARIOS=all.
 * Part k of 3: the cells are spread over 3 files, which vitest runs side by side.
 */
import { matrixSuite } from './matrix-suite.ts';
import { slackPerson } from './slack-person.ts';

matrixSuite('slack', slackPerson, [1, 3]);
