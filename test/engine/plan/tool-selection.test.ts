import { describe, expect, it } from 'vitest';
import { plannerSystemPrompt } from '../../../src/engine/plan/planner-prompt.ts';
import { stem, queryTerms } from '../../../src/engine/plan/tool-terms.ts';
import { selectTools } from '../../../src/engine/plan/tool-selection.ts';
import type { ToolInfo } from '../../../src/engine/types.ts';
import { createPlan, createTool } from '../fixtures.ts';

/** A tool with a description and argument names, as a server would describe it. */
function tool(name: string, description: string, args: string[] = [], title?: string): ToolInfo {
  const properties = Object.fromEntries(args.map((a) => [a, { type: 'string' }]));
  return createTool(name, {
    description,
    inputSchema: { type: 'object', properties },
    definition: { name, ...(title && { title }) },
  });
}

const NOUNS = ['ticket', 'invoice', 'pod', 'sprint', 'bucket', 'alert', 'dashboard', 'contact', 'order', 'shipment'];
const VERBS = ['list', 'get', 'create', 'update', 'delete', 'archive'];

/** 60 tools of three servers about other things, so that a catalog of them and a few more is over the limit. */
function distractors(): ToolInfo[] {
  return ['crm', 'ops', 'shop'].flatMap((server, s) =>
    NOUNS.slice(s * 3, s * 3 + 4).flatMap((noun) =>
      VERBS.map((verb) =>
        tool(`${server}.${verb}_${noun}`, `${verb} a ${noun} in the ${server} system by its id.`, ['id', 'scope']),
      ),
    ),
  );
}

const weather = tool(
  'meteo.forecast',
  'Returns the weather forecast for a city.',
  ['city', 'days'],
  'Weather Forecast',
);
const readFile = tool('fs.read_text_file', 'Read the complete contents of a file as text.', ['path']);
const sendMail = tool('mail.send_message', 'Sends an email message to a recipient.', ['to', 'subject', 'body']);
const catalog = [...distractors().slice(0, 30), weather, readFile, ...distractors().slice(30), sendMail];
const names = (tools: readonly ToolInfo[]) => tools.map((t) => t.name);

describe('choosing the tools the planner is shown', () => {
  it('offers a catalog no larger than the limit whole, so its prompt is what it always was', () => {
    const small = [weather, readFile, sendMail];
    expect(selectTools(small, { request: 'read a file' }, 3)).toEqual(small);
  });

  it('never offers a tool the operator did not allow, however well it matches', () => {
    const blocked = createTool('fs.read_file', {
      description: 'Read a file.',
      policy: { allowed: false, timeoutMs: 1000 },
    });
    expect(names(selectTools([weather, blocked, sendMail], { request: 'read the file' }, 5))).toEqual([
      'meteo.forecast',
      'mail.send_message',
    ]);
    const offered = names(selectTools([...catalog, blocked], { request: 'read the file fs.read_file' }, 10));
    expect(offered).toContain('fs.read_text_file');
    expect(offered).not.toContain('fs.read_file');
  });

  it('offers the tools whose words match the request, out of a catalog larger than the limit', () => {
    const offered = names(selectTools(catalog, { request: "What's the weather in Lyon for the next 3 days?" }, 10));
    expect(offered).toContain('meteo.forecast');
    expect(offered.length).toBeLessThanOrEqual(10);
    expect(names(selectTools(catalog, { request: 'Read notes/todo.md and email it to Bo' }, 10))).toEqual(
      expect.arrayContaining(['fs.read_text_file', 'mail.send_message']),
    );
  });

  it('finds a tool through plurals, verb endings and split identifiers', () => {
    expect(['files', 'file', 'filed'].map(stem)).toEqual(['fil', 'fil', 'fil']);
    expect(['listing', 'listed', 'lists', 'running'].map(stem)).toEqual(['list', 'list', 'list', 'run']);
    expect(queryTerms('readTextFile get-sum fs.list_directory the 42')).toEqual([
      'read',
      'text',
      'fil',
      'get',
      'sum',
      'fs',
      'list',
      'directory',
    ]);
    const offered = names(selectTools(catalog, { request: 'Forecasting for cities, please' }, 10));
    expect(offered).toContain('meteo.forecast');
  });

  it('keeps every tool the request names, by its full name or its identifier, even past the limit', () => {
    const named = distractors()
      .slice(0, 11)
      .map((t) => t.name);
    const request = `Run ${named.join(', ')}, then send_message to Bo.`;
    const offered = names(selectTools(catalog, { request }, 10));
    expect(offered).toEqual(expect.arrayContaining([...named, 'mail.send_message']));
    // "send" and "message" are words, not a name: ranking decides, and here other tools match better.
    expect(
      names(selectTools(catalog, { request: 'list, get and archive every ticket and invoice' }, 10)),
    ).not.toContain('mail.send_message');
  });

  it("keeps the tools an amended plan uses, though the change's words do not match them", () => {
    const plan = createPlan([{ id: 's1', tool: 'fs.read_text_file', args: { path: 'a.md' } }]);
    const offered = names(
      selectTools(catalog, { request: 'summarise a.md', amend: { plan, text: 'and list every ticket' } }, 10),
    );
    expect(offered).toContain('fs.read_text_file');
    expect(offered).toContain('crm.list_ticket');
  });

  it('lists the offered tools in catalog order, so the same selection gives a byte-identical prompt', () => {
    const request = { request: 'Email the weather forecast to Bo' };
    const offered = selectTools(catalog, request, 10);
    const order = (t: ToolInfo) => catalog.indexOf(t);
    expect(offered.map(order)).toEqual([...offered.map(order)].sort((a, b) => a - b));
    expect(plannerSystemPrompt(selectTools([...catalog], request, 10))).toBe(plannerSystemPrompt(offered));
    expect(plannerSystemPrompt(selectTools(catalog, { request: 'Email the weather forecast to Bo' }, 10))).toBe(
      plannerSystemPrompt(offered),
    );
  });

  it('offers fewer than the limit when the rest match nothing, but at least ten', () => {
    const offered = selectTools(catalog, { request: 'weather forecast' }, 40);
    expect(offered.length).toBeLessThan(40);
    expect(offered.length).toBeGreaterThanOrEqual(10);
    expect(names(offered)).toContain('meteo.forecast');
  });

  it("offers a matched tool's server siblings that no word matches before tools that match nothing", () => {
    const stations = tool('meteo.stations', 'Lists measuring stations.', ['country']);
    const offered = names(selectTools([...catalog, stations], { request: 'weather forecast for Lyon' }, 12));
    expect(offered).toEqual(expect.arrayContaining(['meteo.forecast', 'meteo.stations']));
  });
});
