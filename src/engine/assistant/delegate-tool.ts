/**
 * The `delegate` step: a plan step that calls Steward's built-in tool `steward.delegate` with an Assistant's name
 * and a task. Being a tool step, it gets references, validation, the compact form, pins, policies and the card
 * like any other step; Steward answers the call itself (flows/delegation-flow.ts): the task becomes a child run of
 * that Assistant in the same thread, and the child's report becomes the step's output.
 */
import type { Assistant } from './assistants.ts';
import { DELEGATE_TOOL } from './delegations.ts';
import type { Plan } from '../plan/plan-schema.ts';
import { cut } from '../text.ts';
import type { Json, ToolInfo } from '../types.ts';
import { BUILTIN_SERVER } from '../run/earlier-turns.ts';

export { DELEGATE_TOOL };
/** The most characters of a task handed to an Assistant. */
export const DELEGATE_TASK_CHARS = 4_000;
/** How long a delegate step may wait for its child run (its plan, review and steps) unless configured. */
export const DEFAULT_DELEGATE_TIMEOUT_MS = 6 * 60 * 60_000;

/**
 * The tool's definition. Its risk is low and it is not read-only: it does nothing itself, but it starts a run
 * whose own plan is reviewed by the requester's preference (so it never starts early, nor in a quick answer).
 */
export function delegateToolInfo(timeoutMs = DEFAULT_DELEGATE_TIMEOUT_MS): ToolInfo {
  const info: Omit<ToolInfo, 'fingerprint' | 'definition'> = {
    name: DELEGATE_TOOL,
    server: BUILTIN_SERVER,
    tool: 'delegate',
    description:
      'Hands a task to a named Assistant (see "Assistants" in the request). The Assistant plans and runs it with its ' +
      'own tools, in this thread, reviewed like any plan; the output is its report, as text. Give the whole task: ' +
      'the Assistant sees nothing else of this conversation.',
    inputSchema: {
      type: 'object',
      properties: {
        assistant: { type: 'string', minLength: 1, maxLength: 64, description: "The Assistant's name." },
        task: {
          type: 'string',
          minLength: 1,
          maxLength: DELEGATE_TASK_CHARS,
          description: 'What the Assistant should do, in full.',
        },
        depth: {
          type: 'integer',
          minimum: 1,
          maximum: 5,
          description:
            'How deep the chain of delegations may go from here (optional): only a lower depth than the configured ' +
            'one counts; a higher one is the configured depth.',
        },
      },
      required: ['assistant', 'task'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    // Sensitive: a task filled in from an earlier output (a web page, a file) waits for a person to see it, since the
    // Assistant plans from that text and a low-risk plan of its runs unreviewed under the usual preference.
    policy: { allowed: true, risk: 'low', idempotent: true, timeoutMs, sensitive: true },
  };
  const { description, inputSchema, annotations } = info;
  // Steward's own tool changes only with Steward: its version is its fingerprint, pinned like any other.
  const definition = { name: info.name, description, inputSchema, annotations } as unknown as Json;
  return { ...info, fingerprint: `builtin:${DELEGATE_TOOL}:1`, definition };
}

/** A `steward.delegate` call's arguments, read strictly. */
export interface DelegateArgs {
  assistant: string;
  task: string;
  depth?: number;
}

/** Reads a call's arguments; a sentence when they are not what the tool takes. */
export function parseDelegateArgs(args: Record<string, Json>): DelegateArgs | string {
  const { assistant, task, depth } = args;
  if (typeof assistant !== 'string' || assistant.trim() === '') return "assistant must be an Assistant's name";
  if (typeof task !== 'string' || task.trim() === '') return 'task must say what the Assistant should do';
  if (task.length > DELEGATE_TASK_CHARS) return `task is longer than ${DELEGATE_TASK_CHARS} characters`;
  if (depth !== undefined && (typeof depth !== 'number' || !Number.isInteger(depth) || depth < 1))
    return 'depth must be a whole number, 1 or more';
  return { assistant: assistant.trim(), task: task.trim(), ...(depth !== undefined && { depth }) };
}

/**
 * The delegation of one plan step: the same for every attempt at it, so a step retried after a restart finds its
 * delegation (and its child run) instead of starting another.
 */
export function delegationIdOf(parentRunId: string, stepId: string): string {
  return `${parentRunId}/${stepId}`;
}

/**
 * Why a plan cannot be a recurring workflow because it delegates (a delegated step plans its child run anew each
 * time, and a workflow's fires never call the planner), or null when it has no delegate step.
 */
export function delegationRefusal(plan: Plan): string | null {
  const ids = plan.steps.flatMap((s) => (s.kind === 'tool' && s.tool === DELEGATE_TOOL ? [s.id] : []));
  if (ids.length === 0) return null;
  return (
    `it hands work to an Assistant (${ids.join(', ')}), which plans anew each time, and a workflow's fires never ` +
    "call the planner: save the Assistant's own run instead, or a plan without delegate steps"
  );
}

/** The Assistants a plan may delegate to, as a block for the planner; undefined when there are none. */
export function renderAssistants(assistants: readonly Pick<Assistant, 'name' | 'purpose'>[]): string | undefined {
  if (assistants.length === 0) return undefined;
  const lines = assistants.map((a) => `- ${a.name}: ${cut(a.purpose || '(no purpose given)', 200)}`);
  return `Assistants a step may hand work to with ${DELEGATE_TOOL} (assistant, task):\n${lines.join('\n')}`;
}
