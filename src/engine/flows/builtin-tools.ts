/**
 * Steward's own tools beside the MCP servers' (`steward.*`), answered by Steward and never by a server:
 * `steward.step_output` (read-only, closed-world: an earlier step's output of the calling run's own conversation)
 * and, where Assistants and their brakes are set up, `steward.delegate` (a task handed to an Assistant as a child run);
 * `steward.read_resource` while some server offers resources (the read itself goes to that server).
 */
import type { EarlierOutput, RunHistory, ToolCallOptions, ToolCallOutcome, ToolRunner } from '../ports.ts';
import {
  BUILTIN_SERVER,
  STEP_OUTPUT_TOOL,
  parseStepOutputArgs,
  sliceOutput,
  stepOutputToolInfo,
} from '../run/earlier-turns.ts';
import { DELEGATE_TOOL, delegateToolInfo } from '../assistant/delegate-tool.ts';
import {
  parseReadResourceArgs,
  READ_RESOURCE_TOOL,
  readResourceKey,
  readResourceToolInfo,
} from '../run/resource-tool.ts';
import type { Json, ToolInfo } from '../types.ts';
import type { DelegationFlow } from './delegation-flow.ts';

/** The delegate tool's answerer and its timeout, when delegation is set up. */
export interface BuiltinDelegation {
  flow: Pick<DelegationFlow, 'call'>;
  timeoutMs?: number;
}

/** The MCP tools with Steward's own added; calls to `steward.*` never reach a server. */
export function withBuiltinTools(
  tools: ToolRunner,
  store: Pick<RunHistory, 'earlierOutput'>,
  delegation?: BuiltinDelegation,
): ToolRunner {
  const builtin: ToolInfo[] = [stepOutputToolInfo()];
  if (delegation) builtin.push(delegateToolInfo(delegation.timeoutMs));
  const isBuiltin = (name: string) => name.startsWith(`${BUILTIN_SERVER}.`);
  const listings = () => (tools.readResource ? (tools.listResources?.() ?? []) : []);
  const resourceServers = () => listings().map((l) => l.server);
  // One definition per set of servers, so its schema is compiled once by validation, not once per listing.
  let reader: { key: string; info: ToolInfo } | undefined;
  const readerTool = (): ToolInfo[] => {
    const listed = listings();
    if (listed.length === 0) return [];
    const key = readResourceKey(listed);
    if (reader?.key !== key) reader = { key, info: readResourceToolInfo(listed) };
    return [reader.info];
  };
  return {
    listTools: () => [...tools.listTools().filter((t) => t.server !== BUILTIN_SERVER), ...builtin, ...readerTool()],
    refreshTool: (name, options) =>
      isBuiltin(name) || !tools.refreshTool ? Promise.resolve() : tools.refreshTool(name, options),
    ...(tools.prepareAs && { prepareAs: tools.prepareAs.bind(tools) }),
    ...(tools.openAs && { openAs: tools.openAs.bind(tools) }),
    ...(tools.listResources && { listResources: tools.listResources.bind(tools) }),
    ...(tools.readResource && { readResource: tools.readResource.bind(tools) }),
    callTool: (name, args, options) => {
      if (!isBuiltin(name)) return tools.callTool(name, args, options);
      if (name === DELEGATE_TOOL && delegation) return delegation.flow.call(args, options);
      if (name === READ_RESOURCE_TOOL) return readResource(tools, resourceServers(), args, options);
      if (name !== STEP_OUTPUT_TOOL) return Promise.resolve(failed(`there is no built-in tool ${name}`));
      return readStepOutput(store, args, options.runId);
    },
  };
}

async function readStepOutput(
  store: Pick<RunHistory, 'earlierOutput'>,
  args: Record<string, Json>,
  runId: string | undefined,
): Promise<ToolCallOutcome> {
  const at = parseStepOutputArgs(args);
  if (typeof at === 'string') return failed(at);
  if (runId === undefined) return failed('this call has no run, so there is no conversation to read from');
  let found: EarlierOutput | null;
  try {
    found = await store.earlierOutput(runId, at.turn, at.step);
  } catch (err) {
    return { ok: false, error: { code: 'tool_error', message: (err as Error).message, retryable: true } };
  }
  if (!found) return failed(`turn ${at.turn} of this conversation has no output of step ${at.step}`);
  return { ok: true, value: sliceOutput(found.output, at) };
}

/** A `steward.read_resource` call: refused unless the server offers resources now, else read by that server. */
function readResource(
  tools: ToolRunner,
  servers: readonly string[],
  args: Record<string, Json>,
  options: ToolCallOptions,
): Promise<ToolCallOutcome> {
  const at = parseReadResourceArgs(args);
  if (typeof at === 'string') return Promise.resolve(failed(at));
  if (!tools.readResource || !servers.includes(at.server))
    return Promise.resolve(failed(`MCP server "${at.server}" offers no resources`));
  const { runId: _run, stepId: _step, ...sent } = options;
  return tools.readResource(at.server, at.uri, sent);
}

function failed(message: string): ToolCallOutcome {
  return { ok: true, value: { content: [{ type: 'text', text: message }], isError: true } };
}
