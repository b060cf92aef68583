/**
 * A call's `structuredContent` against its tool's `outputSchema`, checked by the host for every tool. The SDK's
 * client checks it too, but only for tools of the last page of a paginated listing (each `listTools` page replaces
 * its cache), so a server that lists its tools in pages would otherwise go unchecked.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { stepError } from '../engine/errors.ts';
import type { StepError, ToolOutput } from '../engine/types.ts';

// ajv-formats ships CommonJS; under nodenext its default export sits one level down.
type FormatsPlugin = (ajv: Ajv) => Ajv;
const addFormats: FormatsPlugin =
  (addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  (addFormatsModule as unknown as FormatsPlugin);

const ajv = new Ajv({ allErrors: false, strict: false, validateSchema: false });
addFormats(ajv);
const compiled = new WeakMap<object, ValidateFunction | 'unreadable'>();

/**
 * Why `output` breaks `schema` (the same words as the SDK's check), or undefined when it holds. An error result is
 * not checked (the spec asks for structured content only from a call that succeeded), nor is one against a schema
 * that cannot be compiled (the server's mistake, not the call's).
 */
export function outputSchemaProblem(schema: Record<string, unknown>, output: ToolOutput): string | undefined {
  if (output.isError) return undefined;
  if (output.structuredContent === undefined) {
    return 'the tool declares an output schema and its answer has no structuredContent';
  }
  let validate = compiled.get(schema);
  if (!validate) {
    const { $schema: _ignored, ...rest } = schema;
    try {
      validate = ajv.compile(rest);
    } catch {
      validate = 'unreadable';
    }
    compiled.set(schema, validate);
  }
  if (validate === 'unreadable' || validate(output.structuredContent)) return undefined;
  return `its structuredContent breaks the tool's output schema: ${ajv.errorsText(validate.errors)}`;
}

/** The step error of a call whose answer broke its output schema (`why`, a clause): the tool ran, the answer is unused. */
export function brokenOutput(name: string, why: string): StepError {
  return stepError('tool_error', `${name} ran, but ${why}; its answer was not used.`);
}
