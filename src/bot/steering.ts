/**
 * Steering a run from a card's controls, the same on every platform: which plans can still be edited, a
 * breakpoint picker's whole selection turned into the engine's decisions, and taking the suggested breakpoints.
 */
import type { EditablePlan, InboundHandler } from '../engine/channel.ts';
import type { Breakpoint } from '../engine/plan/breakpoints.ts';
import { isSteerable, type Actor } from '../engine/types.ts';

/** A card's run and the revision it shows. */
export interface CardRef {
  runId: string;
  revision: number;
}

/** Why this plan cannot be edited from this card now (gone, finished, or a newer revision), or null when it can. */
export function editRefusal(editable: EditablePlan | null, ref: CardRef): string | null {
  if (!editable || !isSteerable(editable.status))
    return `That plan can no longer be edited${editable ? ` (it is ${editable.status.replace('_', ' ')})` : ''}.`;
  if (editable.revision !== ref.revision)
    return `This card shows revision ${ref.revision}, but the plan is now at revision ${editable.revision}; use the newest card.`;
  return null;
}

/**
 * A picker sends its whole new selection: steps newly picked get a breakpoint, steps unpicked lose theirs (only
 * among steps not yet started, the ones it offers). Returns the breakpoints as stored afterwards, for the card (null
 * when the run has no plan).
 */
export async function pickBreakpoints(
  handler: InboundHandler,
  ref: CardRef,
  chosen: readonly string[],
  actor: Actor,
): Promise<Breakpoint[] | null> {
  const before = await handler.editablePlan(ref.runId);
  if (!before) return null;
  const started = new Set(before.started);
  const held = new Set(before.breakpoints.map((b) => b.stepId).filter((id) => !started.has(id)));
  const picked = new Set(chosen);
  const on = [...picked].filter((id) => !held.has(id));
  const off = [...held].filter((id) => !picked.has(id));
  if (on.length > 0) await handler.decision({ ...ref, action: 'breakpoint', actor, stepIds: on, on: true });
  if (off.length > 0) await handler.decision({ ...ref, action: 'breakpoint', actor, stepIds: off, on: false });
  return (await handler.editablePlan(ref.runId))?.breakpoints ?? null;
}

/**
 * "Add suggested breakpoints": the engine sets the breakpoints the card offers. Returns the breakpoints as stored
 * afterwards, for the card (null when the run has no plan).
 */
export async function takeSuggestions(
  handler: InboundHandler,
  ref: CardRef,
  actor: Actor,
): Promise<Breakpoint[] | null> {
  await handler.decision({ ...ref, action: 'breakpoint', actor, suggested: true, on: true });
  return (await handler.editablePlan(ref.runId))?.breakpoints ?? null;
}
