/**
 * The words people use about Assistants, the same in the console, Slack's `/steward` and Discord's `/steward`
 * (`ASSISTANT_FORMS` lists them), and the answers that list and show them (pure). Parsing reads the text once and
 * at most a few words, so a pasted page costs one pass and gets a short refusal.
 */
import {
  ASSISTANT_NAME,
  type Assistant,
  type AssistantChange,
  type GrantEffect,
  type GrantScope,
} from './assistants.ts';
import { fail, ok, type Result } from '../result.ts';

/** A parsed command. */
export type AssistantCommand =
  | { kind: 'list' }
  | { kind: 'show'; name: string }
  | { kind: 'create'; name: string; purpose: string }
  | { kind: 'purpose'; name: string; text: string }
  | { kind: 'instructions'; name: string; text: string }
  | { kind: 'model'; name: string; role: string; spec: string | null }
  | { kind: 'grant'; name: string; scope: GrantScope; target: string; effect: GrantEffect }
  | { kind: 'revoke'; name: string; scope: GrantScope; target: string }
  | { kind: 'default'; name: string; effect: GrantEffect }
  | { kind: 'delete'; name: string };

/** The longest purpose or instructions a command may set. */
export const MAX_ASSISTANT_TEXT = 8_000;

/** Each command's form, for refusals. */
const FORM = {
  list: 'assistants',
  show: 'assistant <name>',
  create: 'assistant create <name> "<purpose>"',
  purpose: 'assistant <name> purpose "<text>"',
  instructions: 'assistant <name> instructions "<text>"',
  model: 'assistant <name> model <role> <model>|none',
  grant: 'assistant <name> grant <server.tool>|<server> allow|deny',
  revoke: 'assistant <name> revoke <server.tool>|<server>',
  default: 'assistant <name> default allow|deny',
  delete: 'assistant <name> delete',
} as const;

/** Each command's form, with what it does, in the order the help lists them. */
export const ASSISTANT_FORMS: readonly { form: string; says: string }[] = [
  { form: FORM.list, says: 'list the Assistants' },
  { form: FORM.show, says: 'show one, with its grants and latest changes' },
  { form: FORM.create, says: 'create one (it may use no tool until granted)' },
  { form: FORM.purpose, says: 'say what it is for' },
  { form: FORM.instructions, says: 'what the planner is told when it plans for it' },
  { form: FORM.model, says: 'the model it uses for a role' },
  { form: FORM.grant, says: 'allow or deny a tool or a whole server' },
  { form: FORM.revoke, says: 'remove that grant' },
  { form: FORM.default, says: 'what a tool with no grant gets' },
  { form: FORM.delete, says: 'delete it (its history stays)' },
];

const TARGET = /^[A-Za-z0-9_-]+(\.[^\s]+)?$/;

/** Whether a typed line is an Assistant command: it starts with the word `assistant` or `assistants`. */
export function isAssistantCommand(text: string): boolean {
  return /^\s*assistants?(\s|$)/i.test(text.slice(0, 20));
}

/** Parses a command; a sentence saying what is wrong (and the right form) when it is not one. */
export function parseAssistantCommand(text: string): Result<AssistantCommand, string> {
  const max = MAX_ASSISTANT_TEXT + 200;
  if (text.length > max) return fail(`That command is ${text.length} characters long; the most is ${max}.`);
  const words = [...text.trim().matchAll(/\S+/g)].slice(0, 6).map((m) => ({ text: m[0], end: m.index + m[0].length }));
  const first = words[0]?.text.toLowerCase();
  if (first === 'assistants') return words.length === 1 ? ok({ kind: 'list' }) : fail('Just `assistants` lists them.');
  if (first !== 'assistant') return fail('That is not an Assistant command: they start with assistant or assistants.');
  const trimmed = text.trim();
  const second = words[1];
  if (!second) return fail(`Name the Assistant: ${help()}`);
  if (second.text.toLowerCase() === 'create') {
    const name = nameOf(words[2]?.text);
    if (!name.ok) return name;
    const purpose = quotedRest(trimmed, words[2]?.end ?? trimmed.length);
    if (!purpose) return fail('Say what it is for: assistant create <name> "<purpose>"');
    return ok({ kind: 'create', name: name.value, purpose });
  }
  const name = nameOf(second.text);
  if (!name.ok) return name;
  const verb = words[2]?.text.toLowerCase();
  if (verb === undefined) return ok({ kind: 'show', name: name.value });
  const rest = (i: number) => words[i]?.text;
  switch (verb) {
    case 'purpose':
    case 'instructions': {
      const said = quotedRest(trimmed, words[2]?.end ?? trimmed.length);
      if (!said) return fail(`Give the text: ${FORM[verb]}`);
      return ok({ kind: verb, name: name.value, text: said });
    }
    case 'model': {
      const role = rest(3);
      const spec = rest(4);
      if (!role || !spec || words.length > 5) return fail(`Give a role and a model: ${FORM.model}`);
      return ok({ kind: 'model', name: name.value, role, spec: spec.toLowerCase() === 'none' ? null : spec });
    }
    case 'grant': {
      const target = targetOf(rest(3));
      if (!target.ok) return target;
      const effect = effectOf(rest(4));
      if (!effect || words.length > 5) return fail(`Say allow or deny: ${FORM.grant}`);
      return ok({ kind: 'grant', name: name.value, ...target.value, effect });
    }
    case 'revoke': {
      const target = targetOf(rest(3));
      if (!target.ok) return target;
      if (words.length > 4) return fail(`Revoke one grant at a time: ${FORM.revoke}`);
      return ok({ kind: 'revoke', name: name.value, ...target.value });
    }
    case 'default': {
      const effect = effectOf(rest(3));
      if (!effect || words.length > 4) return fail(`Say allow or deny: ${FORM.default}`);
      return ok({ kind: 'default', name: name.value, effect });
    }
    case 'delete':
      return words.length > 3 ? fail('Just `assistant <name> delete`.') : ok({ kind: 'delete', name: name.value });
    default:
      return fail(`"${cutWord(words[2]?.text ?? '')}" is not something an Assistant command does. ${help()}`);
  }
}

/** The forms, for a refusal that points to them. */
function help(): string {
  return `The forms are: ${ASSISTANT_FORMS.map((f) => f.form).join('; ')}.`;
}

function nameOf(word: string | undefined): Result<string, string> {
  if (!word) return fail(`Name the Assistant: ${FORM.create}`);
  const name = word.toLowerCase();
  if (name === 'create') return fail('"create" cannot be an Assistant\'s name.');
  if (ASSISTANT_NAME.test(name)) return ok(name);
  return fail(
    `"${cutWord(word)}" is not an Assistant name: a name is a letter followed by up to 39 lower-case letters, digits, - or _ (e.g. ops).`,
  );
}

/** A grant's target: `server.tool` names a tool, `server` a whole server. */
function targetOf(word: string | undefined): Result<{ scope: GrantScope; target: string }, string> {
  if (!word) return fail(`Name a tool (server.tool) or a server: ${FORM.grant}`);
  if (!TARGET.test(word) || word.length > 200)
    return fail(`"${cutWord(word)}" is not a tool (server.tool) or a server name.`);
  return ok({ scope: word.includes('.') ? 'tool' : 'server', target: word });
}

function effectOf(word: string | undefined): GrantEffect | null {
  const w = word?.toLowerCase();
  return w === 'allow' || w === 'deny' ? w : null;
}

/** The text after `from`, without the quotes around it (straight or curly); empty when there is none. */
function quotedRest(text: string, from: number): string {
  const rest = text.slice(from).trim();
  const m = /^["“”'‘’]([\s\S]*)["“”'‘’]$/.exec(rest);
  return (m ? (m[1] as string) : rest).trim();
}

function cutWord(word: string): string {
  return word.length <= 40 ? word : `${word.slice(0, 39)}…`;
}

/** The list answer. */
export function describeAssistantList(assistants: readonly Assistant[]): string {
  if (assistants.length === 0)
    return 'There are no Assistants yet. An approver creates one with `assistant create <name> "<purpose>"`.';
  const lines = assistants.map((a) => `• ${a.name}: ${a.purpose} (${grantCount(a)}; default ${a.defaultGrant})`);
  return `Assistants (address one with \`ask <name>: <request>\`):\n${lines.join('\n')}`;
}

function grantCount(a: Assistant): string {
  const n = a.grants.length;
  return n === 1 ? '1 grant' : `${n} grants`;
}

/** One Assistant: its purpose, instructions, models, default, grants and latest changes. */
export function describeAssistant(a: Assistant, changes: readonly AssistantChange[]): string {
  const lines = [`Assistant ${a.name}: ${a.purpose}`];
  lines.push(a.instructions ? `Instructions: ${cutText(a.instructions, 1_000)}` : 'Instructions: none');
  const models = Object.entries(a.models);
  if (models.length > 0) lines.push(`Models: ${models.map(([role, spec]) => `${role} ${spec}`).join(', ')}`);
  lines.push(`Default for tools without a grant: ${a.defaultGrant}`);
  if (a.grants.length === 0) lines.push('Grants: none');
  else {
    lines.push("Grants (a tool's own grant wins over its server's, which wins over the default):");
    for (const g of a.grants) lines.push(`  ${g.effect} ${g.scope} ${g.target}`);
  }
  if (changes.length > 0) {
    lines.push('Latest changes:');
    for (const c of changes) lines.push(`  ${c.at.toISOString()} ${c.action} by ${c.changedByName ?? c.changedBy}`);
  }
  return lines.join('\n');
}

function cutText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
