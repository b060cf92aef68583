/**
 * Planner answers as models write them, slips included, with what Steward must make of each: the plan it reads (each
 * step as `id:tool`, `id:llm` or `id:condition`, with `<deps` after the id when it has dependencies), or the step
 * its refusal names and what the refusal must say. Read by `answer-corpus.test.ts`.
 */
import type { ToolInfo } from '../../../src/engine/types.ts';
import { createTool } from '../fixtures.ts';

const object = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
});
const text = { type: 'string' };

/** The tools connected for every answer: `search_files` is a tool of two servers, every other name of one. */
export const corpusTools: ToolInfo[] = [
  createTool('everything.echo', { inputSchema: object({ message: text }, ['message']) }),
  createTool('fs.read_text_file', { inputSchema: object({ path: text }, ['path']) }),
  createTool('fs.list_directory', { inputSchema: object({ path: text }, ['path']) }),
  createTool('fs.list_allowed_directories', { inputSchema: object({}, []) }),
  createTool('fs.search_files', { inputSchema: object({ path: text, pattern: text }, ['path', 'pattern']) }),
  createTool('notes.search_files', { inputSchema: object({ query: text }, ['query']) }),
];

export interface CorpusAnswer {
  name: string;
  answer: string;
  /** `answer` for a plan that needs no tools; else the steps, space separated, as `id<dep,dep:tool`. */
  accepted?: string;
  /** The step the refusal names (its id, and its place in the steps list), and words it must hold. */
  refused?: { id: string; index: number; says: string[] };
}

const json = (value: unknown) => JSON.stringify(value);
const fence = (body: string) => `Here is the plan:\n\n\`\`\`json\n${body}\n\`\`\``;

const readThenSummarize = {
  steps: [{ tool: 'fs.read_text_file', args: { path: '/notes/todo.md' } }, { llm: { $ref: 's1.content[0].text' } }],
  summary: 'Summarize the todo list',
};

const fullPlan = (steps: unknown[], extra: Record<string, unknown> = {}) =>
  json({ summary: 'Work', rationale: 'asked', needsTools: true, answer: null, risks: [], steps, ...extra });

export const corpus: CorpusAnswer[] = [
  // Clean answers, and slips the reader already forgave.
  { name: 'a clean compact plan', answer: json(readThenSummarize), accepted: 's1:fs.read_text_file s2<s1:llm' },
  {
    name: 'a clean full plan',
    answer: fullPlan([{ id: 'a', kind: 'tool', tool: 'fs.list_directory', args: { path: '/' } }]),
    accepted: 'a:fs.list_directory',
  },
  {
    name: 'a compact plan in a code fence, after a sentence',
    answer: fence(json(readThenSummarize)),
    accepted: 's1:fs.read_text_file s2<s1:llm',
  },
  {
    name: 'compact steps with null "after", "note", "optional" and "id"',
    answer: json({
      steps: [
        { id: null, tool: 'everything.echo', args: { message: 'hi' }, after: null, note: null, optional: null },
        { tool: 'fs.list_allowed_directories', args: null },
      ],
    }),
    accepted: 's1:everything.echo s2:fs.list_allowed_directories',
  },
  {
    name: 'a compact plan with null "why", "risks" and "summary"',
    answer: json({ ...readThenSummarize, why: null, risks: null, summary: null }),
    accepted: 's1:fs.read_text_file s2<s1:llm',
  },
  { name: 'an answer with no tools', answer: json({ answer: 'Hello! How can I help?' }), accepted: 'answer' },
  {
    name: 'a full plan with "answer": null and a null argument value',
    answer: fullPlan([{ id: 'e', kind: 'tool', tool: 'notes.search_files', args: { query: 'x', cursor: null } }]),
    accepted: 'e:notes.search_files',
  },

  // null for a key the full form may leave out.
  {
    name: 'a full step with "dependsOn": null',
    answer: fullPlan([{ id: 'a', kind: 'tool', tool: 'fs.list_directory', args: { path: '/' }, dependsOn: null }]),
    accepted: 'a:fs.list_directory',
  },
  {
    name: 'full steps with "description": null and "optional": null',
    answer: fullPlan([
      { id: 'a', kind: 'tool', tool: 'fs.list_directory', args: { path: '/' }, description: null, optional: null },
      {
        id: 'b',
        kind: 'llm',
        dependsOn: ['a'],
        description: null,
        args: { prompt: { $ref: 'steps.a.output.content[0].text' } },
      },
    ]),
    accepted: 'a:fs.list_directory b<a:llm',
  },
  {
    name: 'a full plan with "rationale": null and "risks": null',
    answer: fullPlan([{ id: 'a', kind: 'tool', tool: 'fs.list_allowed_directories', args: {} }], {
      rationale: null,
      risks: null,
    }),
    accepted: 'a:fs.list_allowed_directories',
  },
  {
    name: 'a full condition with "ifFalse": null',
    answer: fullPlan([
      { id: 'a', kind: 'tool', tool: 'fs.list_directory', args: { path: '/' } },
      {
        id: 'c',
        kind: 'condition',
        dependsOn: ['a'],
        expression: 'steps.a.output.content[0].text contains "todo"',
        ifTrue: ['r'],
        ifFalse: null,
      },
      { id: 'r', kind: 'tool', tool: 'fs.read_text_file', args: { path: '/todo' }, dependsOn: ['c'] },
    ]),
    accepted: 'a:fs.list_directory c<a:condition r<c:fs.read_text_file',
  },
  {
    name: 'a full tool step with "args": null',
    answer: fullPlan([{ id: 'a', kind: 'tool', tool: 'fs.list_allowed_directories', args: null, dependsOn: [] }]),
    accepted: 'a:fs.list_allowed_directories',
  },
  {
    name: 'a full step with "kind": null (the full form\'s default kind, tool)',
    answer: fullPlan([{ id: 'a', kind: null, tool: 'everything.echo', args: { message: 'hi' }, dependsOn: [] }]),
    accepted: 'a:everything.echo',
  },
  {
    name: 'a full plan with every optional key of the plan and its steps null',
    answer: fullPlan(
      [
        {
          id: 'a',
          kind: 'tool',
          tool: 'everything.echo',
          args: { message: 'hi' },
          dependsOn: null,
          description: null,
          optional: null,
        },
        { id: 'b', kind: 'llm', args: { prompt: 'a haiku' }, dependsOn: null, description: null, optional: null },
      ],
      { rationale: null, risks: null, answer: null },
    ),
    accepted: 'a:everything.echo b:llm',
  },

  // Trailing commas, fences and prose.
  {
    name: 'a trailing comma after the last step',
    answer:
      '{"steps":[{"tool":"fs.read_text_file","args":{"path":"/notes/todo.md"}},{"llm":{"$ref":"s1.content[0].text"}},],"summary":"Summarize"}',
    accepted: 's1:fs.read_text_file s2<s1:llm',
  },
  {
    name: 'trailing commas in arguments and at the end, in a fence',
    answer: fence('{\n  "steps": [\n    {"tool": "everything.echo", "args": {"message": "hi",},},\n  ],\n}'),
    accepted: 's1:everything.echo',
  },
  {
    name: 'prose after the JSON that holds braces',
    answer: `${json(readThenSummarize)}\n\nThe second step reads the first through {"$ref": ...}, so it waits for it.`,
    accepted: 's1:fs.read_text_file s2<s1:llm',
  },
  {
    name: 'prose before the JSON that holds braces',
    answer: `I will fill the {path} placeholder with the todo file:\n${json(readThenSummarize)}`,
    accepted: 's1:fs.read_text_file s2<s1:llm',
  },
  {
    name: 'a fence, then a closing remark that holds a brace',
    answer: `${fence(json(readThenSummarize))}\nLet me know if you want changes }`,
    accepted: 's1:fs.read_text_file s2<s1:llm',
  },

  // A tool named without its server.
  {
    name: 'a tool named without its server, one server having it',
    answer: json({ steps: [{ tool: 'echo', args: { message: 'hi' } }] }),
    accepted: 's1:everything.echo',
  },
  {
    name: 'a full plan naming a tool without its server',
    answer: fullPlan([{ id: 'r', kind: 'tool', tool: 'read_text_file', args: { path: '/a' } }]),
    accepted: 'r:fs.read_text_file',
  },
  {
    name: 'every slip at once: a fence, a trailing comma, a null and a tool without its server',
    answer: fence(
      '{"steps":[{"id":"l","kind":"tool","tool":"list_directory","args":{"path":"/"},"dependsOn":null,},' +
        '{"id":"r","kind":"tool","tool":"read_text_file","args":{"path":"/a"},"dependsOn":["l"],"description":null}],' +
        '"summary":"List, then read","needsTools":true,"rationale":null,}',
    ),
    accepted: 'l:fs.list_directory r<l:fs.read_text_file',
  },

  // Where the meaning is not certain: refused, naming the step.
  {
    name: 'a tool named without its server, two servers having it',
    answer: json({
      steps: [
        { tool: 'echo', args: { message: 'x' } },
        { tool: 'search_files', args: { query: 'x' } },
      ],
    }),
    refused: { id: 's2', index: 1, says: ['fs.search_files', 'notes.search_files'] },
  },
  {
    name: 'a tool under a server that does not exist',
    answer: json({ steps: [{ id: 'r', tool: 'filesystem.read_text_file', args: { path: '/a' } }] }),
    refused: { id: 'r', index: 0, says: ['fs.read_text_file'] },
  },
  {
    name: 'a tool no server has',
    answer: json({ steps: [{ id: 'd', tool: 'fs.delete_everything', args: {} }] }),
    refused: { id: 'd', index: 0, says: ['fs.delete_everything'] },
  },
  {
    name: 'a null tool name',
    answer: fullPlan([
      { id: 'a', kind: 'tool', tool: 'fs.list_allowed_directories' },
      { id: 'b', kind: 'tool', tool: null },
    ]),
    refused: { id: 'b', index: 1, says: ['tool'] },
  },
  {
    name: 'a null id in the full form, where the id is required',
    answer: fullPlan([{ id: null, kind: 'tool', tool: 'fs.list_allowed_directories' }]),
    refused: { id: 'null', index: 0, says: ['id'] },
  },
  {
    name: 'arguments missing what the tool requires',
    answer: json({ steps: [{ id: 'l', tool: 'fs.list_directory', args: { dir: '/' } }] }),
    refused: { id: 'l', index: 0, says: ['path'] },
  },
  {
    name: 'a dependency on a step that is not in the plan',
    answer: json({ steps: [{ id: 'a', tool: 'fs.list_allowed_directories', after: ['zz'] }] }),
    refused: { id: 'a', index: 0, says: ['zz'] },
  },
];
