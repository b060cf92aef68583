import { describe, expect, it } from 'vitest';
import { peerTurn, requestTokens, type WireMessage } from '../../bench/peer-model.ts';
import { createTasks, type BenchTask } from '../../bench/tasks.ts';

const files = [1, 2, 3, 4].map((i) => ({
  path: `/docs/doc-${i}.txt`,
  title: `doc-${i} abcdef`,
  checksum: '0123456789ab',
}));
const task = (id: string): BenchTask => {
  const found = createTasks(0.2, files).find((t) => t.id === id);
  if (!found) throw new Error(`no task ${id}`);
  return found;
};
const user: WireMessage = { role: 'user', content: 'the request' };
const asked = (calls: { id: string; name: string; args: Record<string, unknown> }[]): WireMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: calls.map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: JSON.stringify(c.args) },
  })),
});
// How @langchain/mcp-adapters sends a text block that came with structured content.
const adapterResult = (id: string, text: string, structured: unknown): WireMessage => ({
  role: 'tool',
  tool_call_id: id,
  content: JSON.stringify({ type: 'text', text, structuredContent: structured }),
});

describe("the fake model's turns for the LangGraph peer", () => {
  it('asks for every ready call of a fan-out in one message, then answers from the results', () => {
    const fan = task('fan8-echo');
    const first = peerTurn(fan, [user]);
    expect(first.text).toBe('');
    expect(first.toolCalls).toHaveLength(8);
    expect(first.toolCalls[0]).toEqual({ id: 'call_s1', name: 'everything__echo', args: { message: 'alpha' } });
    const results = first.toolCalls.map((c): WireMessage => ({
      role: 'tool',
      tool_call_id: c.id,
      content: `Echo: ${String(c.args['message'])}`,
    }));
    const last = peerTurn(fan, [user, asked(first.toolCalls), ...results]);
    expect(last).toEqual({ text: fan.expected, toolCalls: [] });
  });

  it("resolves a diamond's references from the structured result as the adapter sends it, and joins both branches", () => {
    const diamond = task('diamond-weather');
    const weather = { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 };
    const a = peerTurn(diamond, [user]).toolCalls;
    expect(a.map((c) => c.id)).toEqual(['call_a']);
    const history = [user, asked(a), adapterResult('call_a', JSON.stringify(weather), weather)];
    const bc = peerTurn(diamond, history).toolCalls;
    expect(bc).toEqual([
      { id: 'call_b', name: 'everything__get-sum', args: { a: 36, b: 100 } },
      { id: 'call_c', name: 'everything__get-sum', args: { a: 82, b: 200 } },
    ]);
    const sums = [
      ...history,
      asked(bc),
      { role: 'tool', tool_call_id: 'call_b', content: 'The sum of 36 and 100 is 136.' },
      { role: 'tool', tool_call_id: 'call_c', content: 'The sum of 82 and 200 is 282.' },
    ];
    const d = peerTurn(diamond, sums).toolCalls;
    expect(d.map((c) => c.id)).toEqual(['call_d']);
    const done = peerTurn(diamond, [
      ...sums,
      asked(d),
      { role: 'tool', tool_call_id: 'call_d', content: 'Echo: done' },
    ]);
    expect(done).toEqual({ text: diamond.expected, toolCalls: [] });
  });

  it('counts the tool definitions and earlier tool calls of a request as input', () => {
    const tools = [{ type: 'function', function: { name: 'everything__echo', parameters: { type: 'object' } } }];
    const call = asked([{ id: 'call_s1', name: 'everything__echo', args: { message: 'x' } }]);
    const bare = requestTokens({ messages: [user] });
    expect(requestTokens({ messages: [user], tools })).toBe(
      Math.ceil(('the request' + JSON.stringify(tools)).length / 4),
    );
    expect(requestTokens({ messages: [user, call] })).toBeGreaterThan(bare);
  });
});
