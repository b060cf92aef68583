/**
 * Assistant commands as every channel sees them (pure): the short help the channels list. The words themselves are
 * the engine's (`engine/assistant/assistant-commands.ts`); the channels only route them to `InboundHandler.assistantCommand`.
 */

/** The Assistant commands and the way to address one, one short line each (form, then what it does). */
export const ASSISTANT_HELP_LINES: readonly { form: string; what: string }[] = [
  { form: 'ask <name>: <request>', what: 'a request for an Assistant: planned with its instructions and tools' },
  { form: 'assistants', what: 'the Assistants' },
  { form: 'assistant <name>', what: 'one Assistant, its grants and latest changes' },
  { form: 'assistant create <name> "<purpose>"', what: 'create one (approvers)' },
  { form: 'assistant <name> grant <server.tool>|<server> allow|deny', what: 'grant or deny (approvers)' },
  { form: 'assistant <name> revoke|default|instructions|delete …', what: 'change it (approvers)' },
];

/**
 * The text a `/steward ask <request>` sends on: `ask ops: restart nginx` when the request starts with an Assistant's
 * name and a colon (`ops: restart nginx`), so it reads as a mention saying `ask ops: …` would; else the request.
 */
export function askCommandText(request: string): string {
  return /^\s*[A-Za-z][\w-]{0,39}\s*:/.test(request) ? `ask ${request.trimStart()}` : request;
}
