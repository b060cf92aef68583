/**
 * What people do with Assistants: list and show them (anyone), and create, edit, grant, revoke, set the default and
 * delete (approvers only). Every answer is a sentence for the person who asked, marked `info` or, for a refusal
 * (which says why), `warning`. The store writes
 * each change with its audit row.
 */
import { describeAssistant, describeAssistantList, parseAssistantCommand } from '../assistant/assistant-commands.ts';
import type { AssistantCommand } from '../assistant/assistant-commands.ts';
import type { AssistantStore, GrantScope } from '../assistant/assistants.ts';
import { info, refusal, type CommandAnswer, type WorkflowRequest } from '../channel.ts';
import type { ToolRunner } from '../ports.ts';
import { isApprover } from '../run/run-actions.ts';
import type { Actor } from '../types.ts';

/** What the commands need. */
/** The roles of a run's model calls an Assistant may give a model of its own. */
const ASSISTANT_MODEL_ROLES: readonly string[] = ['planner', 'classifier', 'synthesizer', 'llm_step'];

export interface AssistantFlowDeps {
  assistants: AssistantStore;
  tools: ToolRunner;
  clock: () => Date;
  /** Actors (as `<channel>:<id>`, or `<channel>:role:<role id>`) who may change Assistants. */
  approvers: readonly string[];
  /** The model catalog's names; an Assistant's model per role must be one of them (none: no catalog). */
  models?: readonly string[];
}

/** How many audit rows `assistant <name>` shows. */
const SHOWN_CHANGES = 5;

/** Answers Assistant commands. */
export class AssistantFlow {
  constructor(private readonly deps: AssistantFlowDeps) {}

  /** A command's answer; bad words, an unknown Assistant or tool, or a person without the right are answered. */
  async command(request: WorkflowRequest): Promise<CommandAnswer> {
    const parsed = parseAssistantCommand(request.text);
    if (!parsed.ok) return refusal(parsed.error);
    const c = parsed.value;
    const { assistants } = this.deps;
    if (c.kind === 'list') return info(describeAssistantList(await assistants.listAssistants()));
    if (c.kind === 'show') {
      const a = await assistants.getAssistant(c.name);
      if (!a) return this.unknown(c.name);
      return info(describeAssistant(a, await assistants.listChanges(c.name, SHOWN_CHANGES)));
    }
    if (!isApprover(request.actor, this.deps.approvers))
      return refusal('Only approvers can create or change Assistants.');
    return this.change(c, request.actor);
  }

  /** An unknown name, answered with the names there are. */
  /** Why a role or model cannot be set: roles are the model roles a run has; models are the catalog's names. */
  private modelRefusal(role: string, model: string | null): string | null {
    if (!ASSISTANT_MODEL_ROLES.includes(role))
      return `There is no model role "${role}"; the roles are ${ASSISTANT_MODEL_ROLES.join(', ')}.`;
    if (model === null) return null;
    const names = this.deps.models ?? [];
    if (names.length === 0)
      return 'An Assistant names its models from the model catalog, and there is none (see models.json.example).';
    return names.includes(model)
      ? null
      : `There is no model named "${model}" in the model catalog; it has ${names.join(', ')}.`;
  }

  async unknown(name: string): Promise<CommandAnswer> {
    const names = (await this.deps.assistants.listAssistants()).map((a) => a.name);
    const there = names.length === 0 ? 'There are none yet.' : `There are: ${names.join(', ')}.`;
    return refusal(`There is no Assistant named "${name}". ${there}`);
  }

  private async change(c: Exclude<AssistantCommand, { kind: 'list' | 'show' }>, by: Actor): Promise<CommandAnswer> {
    const { assistants, clock } = this.deps;
    const at = clock();
    switch (c.kind) {
      case 'create': {
        const def = { name: c.name, purpose: c.purpose, instructions: '', models: {}, defaultGrant: 'deny' as const };
        if (!(await assistants.createAssistant({ ...def, grants: [] }, by, at)))
          return refusal(`There is already an Assistant named "${c.name}".`);
        return info(
          `Created the Assistant "${c.name}". It may use no tool until you grant some: assistant ${c.name} grant <server.tool>|<server> allow.`,
        );
      }
      case 'purpose':
      case 'instructions': {
        if (!(await assistants.editAssistant(c.name, { [c.kind]: c.text }, by, at))) return this.unknown(c.name);
        return info(c.kind === 'purpose' ? `Set the purpose of "${c.name}".` : `Set the instructions of "${c.name}".`);
      }
      case 'model': {
        const refused = this.modelRefusal(c.role, c.spec);
        if (refused) return refusal(refused);
        const a = await assistants.getAssistant(c.name);
        if (!a) return this.unknown(c.name);
        const models = { ...a.models };
        if (c.spec === null) delete models[c.role];
        else models[c.role] = c.spec;
        await assistants.editAssistant(c.name, { models }, by, at);
        return info(
          c.spec === null
            ? `"${c.name}" uses Steward's own ${c.role} model.`
            : `"${c.name}" uses ${c.spec} as its ${c.role} model.`,
        );
      }
      case 'grant': {
        const missing = this.missing(c.scope, c.target);
        if (missing) return refusal(missing);
        const done = await assistants.setGrant(c.name, { scope: c.scope, target: c.target, effect: c.effect }, by, at);
        if (!done) return this.unknown(c.name);
        return info(
          `"${c.name}": ${c.effect} ${c.scope === 'tool' ? 'the tool' : 'every tool of the server'} ${c.target}.`,
        );
      }
      case 'revoke': {
        const outcome = await assistants.revokeGrant(c.name, c.scope, c.target, by, at);
        if (outcome === 'gone') return this.unknown(c.name);
        if (outcome === 'none') return refusal(`"${c.name}" has no grant for ${c.scope} ${c.target}; nothing changed.`);
        return info(`Revoked the grant of "${c.name}" for ${c.scope} ${c.target}.`);
      }
      case 'default': {
        if (!(await assistants.editAssistant(c.name, { defaultGrant: c.effect }, by, at))) return this.unknown(c.name);
        return info(`Tools without a grant are now ${c.effect === 'allow' ? 'allowed' : 'denied'} to "${c.name}".`);
      }
      case 'delete':
        if (!(await assistants.deleteAssistant(c.name, by, at))) return this.unknown(c.name);
        return info(`Deleted the Assistant "${c.name}" and its grants; its history stays.`);
    }
  }

  /** Why a grant's target is not one Steward knows (no tool by that name, no server with tools), or null. */
  private missing(scope: GrantScope, target: string): string | null {
    const tools = this.deps.tools.listTools();
    if (scope === 'tool' && !tools.some((t) => t.name === target))
      return `There is no tool named "${target}" connected. Tools are named <server>.<tool>, as the plans show them.`;
    if (scope === 'server' && !tools.some((t) => t.server === target))
      return `There is no server named "${target}" with tools connected.`;
    return null;
  }
}
