/**
 * Assistants: the vocabulary, the port, and the grant rules (pure).
 *
 * - assistant: a named specialist a person can address (`ask ops: …`): a purpose, instructions the planner reads, a
 *   model per role (stored and shown; routing reads it), and a default grant.
 * - grant: a row saying whether an Assistant may use one tool (`scope: 'tool'`, target `server.tool`) or every tool
 *   of a server (`scope: 'server'`, target `server`). A tool's own row wins, else its server's, else the default.
 * - change: an audit row for every create, edit, grant, revoke, default and delete, with who made it (a person, or
 *   `file` for the bootstrap file) and the values before and after; written in the same transaction as the change.
 */
import { DELEGATE_TOOL } from './delegations.ts';
import { READ_RESOURCE_TOOL } from '../run/resource-tool.ts';
import type { Actor, Json, ToolInfo } from '../types.ts';

/** An Assistant's name: a letter, then up to 39 lower-case letters, digits, `-` or `_`. */
export const ASSISTANT_NAME = /^[a-z][a-z0-9_-]{0,39}$/;

/** What a grant (or the default) says. */
export type GrantEffect = 'allow' | 'deny';
/** What a grant names: one tool (`server.tool`) or a whole server (`server`). */
export type GrantScope = 'tool' | 'server';

/** One grant row. */
export interface AssistantGrant {
  scope: GrantScope;
  target: string;
  effect: GrantEffect;
}

/** An Assistant's fields as a file or a command sets them. */
export interface AssistantDefinition {
  name: string;
  purpose: string;
  /** What the planner is told when it plans for this Assistant. */
  instructions: string;
  /** A catalog model name per role (`planner`, `synthesizer`, …); roles not named use Steward's own models. */
  models: Record<string, string>;
  /** What a tool with no grant row of its own or its server's gets. */
  defaultGrant: GrantEffect;
  grants: AssistantGrant[];
}

/** An Assistant as stored, with its grants. */
export interface Assistant extends AssistantDefinition {
  createdAt: Date;
  updatedAt: Date;
}

/** What a change did. */
export type AssistantAction = 'create' | 'edit' | 'grant' | 'revoke' | 'default' | 'delete';

/** Who made a change: a person, or the bootstrap file read at start. */
export type ChangedBy = Actor | 'file';

/** One audit row. */
export interface AssistantChange {
  assistant: string;
  action: AssistantAction;
  /** `file`, or the person as `<channel>:<id>`. */
  changedBy: string;
  /** The person's name when a person made it. */
  changedByName: string | null;
  /** What changed, in the terms of the action: the fields edited, or the grant with its scope and target. */
  before: Json | null;
  after: Json | null;
  at: Date;
}

/** The fields a command edits. */
export type AssistantEdit = Partial<Pick<Assistant, 'purpose' | 'instructions' | 'models' | 'defaultGrant'>>;

/**
 * Durable Assistants. Every change is stored with its audit row in one transaction; a name taken twice is decided
 * by the unique name, never in memory.
 */
export interface AssistantStore {
  /** Every Assistant with its grants, by name. */
  listAssistants(): Promise<Assistant[]>;
  getAssistant(name: string): Promise<Assistant | null>;
  /** Creates an Assistant (no grants, default deny unless given); false when the name is taken. */
  createAssistant(a: AssistantDefinition, by: ChangedBy, at: Date): Promise<boolean>;
  /** Edits fields; false when there is no such Assistant. An edit that changes nothing writes nothing. */
  editAssistant(name: string, edit: AssistantEdit, by: ChangedBy, at: Date): Promise<boolean>;
  /** Sets (adds or replaces) a grant row; false when there is no such Assistant. */
  setGrant(name: string, grant: AssistantGrant, by: ChangedBy, at: Date): Promise<boolean>;
  /** Removes a grant row: `revoked`, `none` (no such row) or `gone` (no such Assistant). */
  revokeGrant(name: string, scope: GrantScope, target: string, by: ChangedBy, at: Date): Promise<RevokeOutcome>;
  /** Deletes an Assistant and its grants (its audit rows stay); false when there is no such Assistant. */
  deleteAssistant(name: string, by: ChangedBy, at: Date): Promise<boolean>;
  /**
   * The bootstrap file: each definition created, or its fields and the grants it names brought to the file's values
   * (grants it does not name are left as they are; nothing is deleted). Only what differs is written and audited,
   * as changed by `file`, all in one transaction.
   */
  applyDefinitions(defs: readonly AssistantDefinition[], at: Date): Promise<void>;
  /** An Assistant's audit rows, newest first (also those of a deleted one). */
  listChanges(name: string, limit: number): Promise<AssistantChange[]>;
}

export type RevokeOutcome = 'revoked' | 'none' | 'gone';

/** Where a tool's grant came from. */
export interface ResolvedGrant {
  effect: GrantEffect;
  from: 'tool' | 'server' | 'default';
}

/** The server of a qualified tool name (`server.tool`); server names have no dot. */
export function serverOf(toolName: string): string {
  const dot = toolName.indexOf('.');
  return dot < 0 ? toolName : toolName.slice(0, dot);
}

/** A tool's grant for an Assistant: the tool's own row, else its server's row, else the default. */
export function resolveGrant(assistant: Pick<Assistant, 'defaultGrant' | 'grants'>, toolName: string): ResolvedGrant {
  const server = serverOf(toolName);
  let serverGrant: GrantEffect | undefined;
  for (const g of assistant.grants) {
    if (g.scope === 'tool' && g.target === toolName) return { effect: g.effect, from: 'tool' };
    if (g.scope === 'server' && g.target === server) serverGrant = g.effect;
  }
  if (serverGrant) return { effect: serverGrant, from: 'server' };
  // Handing work on to other Assistants is never a default: it takes a grant of its own (or of the server steward).
  if (toolName === DELEGATE_TOOL) return { effect: 'deny', from: 'default' };
  return { effect: assistant.defaultGrant, from: 'default' };
}

/** Why an Assistant may not use a tool, as a clause after the tool's name; null when it may. */
export function grantRefusal(
  name: string,
  assistant: Pick<Assistant, 'defaultGrant' | 'grants'> | null,
  toolName: string,
): string | null {
  if (!assistant) return `is not granted: the Assistant "${name}" no longer exists`;
  // One tool for every server's resources: a grant for it would reach servers the Assistant is not granted.
  if (toolName === READ_RESOURCE_TOOL)
    return `is not for Assistants: it reads any server's resources, and grants name tools and servers`;
  const grant = resolveGrant(assistant, toolName);
  if (grant.effect === 'allow') return null;
  const why =
    grant.from === 'tool'
      ? 'its grant for this tool says deny'
      : grant.from === 'server'
        ? `its grant for the server "${serverOf(toolName)}" says deny`
        : 'it has no grant for the tool or its server, and its default is deny';
  return `is not granted to the Assistant "${name}" (${why})`;
}

/**
 * The tools as an Assistant sees them: each one it is not granted is marked not allowed, with the reason, so the
 * planner's catalog leaves it out and validation refuses a step naming it.
 */
export function applyGrants(
  tools: readonly ToolInfo[],
  name: string,
  assistant: Pick<Assistant, 'defaultGrant' | 'grants'> | null,
): ToolInfo[] {
  return tools.map((t) => {
    const refusal = grantRefusal(name, assistant, t.name);
    return refusal === null ? t : { ...t, policy: { ...t.policy, allowed: false, notAllowed: refusal } };
  });
}

/** A request addressed to an Assistant: `ask <name>: <task>`; null when the text is not one. */
export function parseAddress(text: string): { name: string; task: string } | null {
  // The prefix is read from the head alone, so a long request costs no more than a short one.
  const m = /^\s*ask\s+([A-Za-z][\w-]{0,39})\s*:/i.exec(text.slice(0, 120));
  if (!m) return null;
  return { name: (m[1] as string).toLowerCase(), task: text.slice(m[0].length).trim() };
}
