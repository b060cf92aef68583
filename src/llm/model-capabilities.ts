/**
 * What each model role needs from its model (refused without it) and prefers (a warning without it). A role not in
 * the table takes any model. Capabilities are what a catalog entry declares: `reasons`, `callsTools`, `seesImages`.
 */

/** Something a catalog model declares it can do. */
export type Capability = 'reasons' | 'callsTools' | 'seesImages';

/** A role's requirements: `needs` are refused when missing, `prefers` only warned about. */
export interface RoleNeeds {
  needs?: readonly Capability[];
  prefers?: readonly Capability[];
}

/**
 * By role name (a string, so a role added later, such as the Butler's, only needs its row here). The planner writes
 * whole plans: a reasoning model plans better but any model can. The Butler answers by calling tools itself.
 */
export const ROLE_NEEDS: Readonly<Record<string, RoleNeeds>> = {
  planner: { prefers: ['reasons'] },
  butler: { needs: ['callsTools'] },
};

/** The capabilities `role` needs that `has` lacks (empty: the model may serve the role). */
export function missingCapabilities(role: string, has: readonly Capability[]): Capability[] {
  return (ROLE_NEEDS[role]?.needs ?? []).filter((c) => !has.includes(c));
}
