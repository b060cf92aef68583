/**
 * Asking for JSON where a provider cannot enforce a schema, and tidying what comes back.
 * The engine validates every JSON answer itself, so these only raise the odds of a valid first answer.
 */

/** A JSON schema the engine wants the answer to match, as in `LlmRequest.jsonSchema`. */
export interface RequestedSchema {
  name: string;
  schema: Record<string, unknown>;
}

/** The system prompt with an instruction to answer with JSON matching the schema appended. */
export function withSchemaInstruction(system: string, requested: RequestedSchema): string {
  const instruction =
    `Answer with a single JSON value and nothing else: no prose, no Markdown code fences. ` +
    `It must match this JSON Schema (named "${requested.name}"):\n${JSON.stringify(requested.schema)}`;
  return system ? `${system}\n\n${instruction}` : instruction;
}

/** The text without one surrounding Markdown code fence, which models add to JSON despite being told not to. */
export function unwrapJsonFence(text: string): string {
  const match = /^\s*```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```\s*$/.exec(text);
  return match?.[1] ?? text;
}

/** A schema name OpenAI accepts (letters, digits, `_` and `-`, at most 64). */
export function toSchemaName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return cleaned || 'answer';
}
