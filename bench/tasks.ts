/**
 * The bench's 25 deterministic tasks with checkable answers, in the spec's shapes. A task is what a person asks,
 * the plan a good planner writes for it, the answer an ideal model gives from the results it sees, and the string a
 * correct report must contain. Servers: `everything` (server-everything, stdio), `web` (server-everything,
 * Streamable HTTP), `fs` (server-filesystem on the generated tree), `audit` (the fixture's `sleep`).
 */
import type { Json } from '../src/engine/types.ts';
import type { GeneratedFile } from './fs-tree.ts';

/** Task shapes, as the spec names them. */
export const SHAPES = [
  'single',
  'fan-2',
  'fan-4',
  'fan-8',
  'fan-16',
  'chain-2',
  'chain-3',
  'chain-4',
  'chain-5',
  'diamond',
  'mixed',
  'large',
] as const;
export type Shape = (typeof SHAPES)[number];

/** One step of a task's plan. */
export interface TaskStep {
  id: string;
  kind: 'tool' | 'llm';
  /** `<server>.<tool>` for tool steps. */
  tool: string;
  args: Record<string, Json>;
  dependsOn: string[];
  description: string;
  /** Modelled duration at the bench's scale: the sleep asked for, 0 for tools that answer at once, 0 for llm steps (their latency comes from the fake). */
  nominalMs: number;
}

/** A task: request, plan, answer rule and the expected answer. */
export interface BenchTask {
  id: string;
  shape: Shape;
  transport: 'stdio' | 'http' | 'mixed';
  request: string;
  summary: string;
  steps: TaskStep[];
  /** The answer an ideal model writes from the step result texts it can see, in plan order. */
  answer(texts: readonly string[]): string;
  /** A correct final answer contains this. */
  expected: string;
}

type Answer = Pick<BenchTask, 'answer' | 'expected'>;

const tool = (
  id: string,
  name: string,
  args: Record<string, Json>,
  description: string,
  dependsOn: string[] = [],
  nominalMs = 0,
): TaskStep => ({ id, kind: 'tool', tool: name, args, dependsOn, description, nominalMs });
const ref = (path: string): Json => ({ $ref: path });

function sumsAnswer(expectedTotal: number): Answer {
  return {
    answer: (texts) =>
      `The total is ${texts.flatMap((t) => [...t.matchAll(/ is (-?\d+)\./g)].map((m) => Number(m[1]))).reduce((a, b) => a + b, 0)}.`,
    expected: `The total is ${expectedTotal}.`,
  };
}

function echoesAnswer(messages: string[]): Answer {
  return {
    answer: (texts) => `Results: ${texts.join('; ')}.`,
    expected: `Results: ${messages.map((m) => `Echo: ${m}`).join('; ')}.`,
  };
}

function lastEchoAnswer(expectedText: string): Answer {
  return {
    answer: (texts) => `The final message is "${texts.at(-1) ?? ''}".`,
    expected: `The final message is "${expectedText}".`,
  };
}

function sleepsAnswer(expectedMs: number, expectedOps = 0): Answer {
  const words = (ms: number, ops: number) =>
    `Slept ${ms} ms in total${ops > 0 ? `; ${ops} long operations completed` : ''}.`;
  return {
    answer: (texts) => {
      const ms = texts
        .flatMap((t) => [...t.matchAll(/slept (\d+)/g)].map((m) => Number(m[1])))
        .reduce((a, b) => a + b, 0);
      const ops = texts.reduce((n, t) => n + [...t.matchAll(/Long running operation completed/g)].length, 0);
      return words(ms, expectedOps > 0 ? ops : 0);
    },
    expected: words(expectedMs, expectedOps),
  };
}

function uniqueMatches(texts: readonly string[], pattern: RegExp): string[] {
  return [...new Set(texts.flatMap((t) => [...t.matchAll(pattern)].map((m) => m[1] as string)))];
}

/** Builds every task; sleeps are scaled, file paths and facts come from the generated tree. */
export function createTasks(scale: number, files: readonly GeneratedFile[]): BenchTask[] {
  const ms = (base: number) => Math.max(1, Math.round(base * scale));
  const sleepStep = (id: string, base: number, dependsOn: string[] = []) =>
    tool(id, 'audit.sleep', { ms: ms(base) }, `Wait ${ms(base)} ms`, dependsOn, ms(base));
  const sleeps = (bases: number[]) => bases.map((b, i) => sleepStep(`s${i + 1}`, b));
  const sleepTask = (id: string, shape: Shape, steps: TaskStep[], request: string): BenchTask => ({
    id,
    shape,
    transport: 'stdio',
    request,
    summary: `Run ${steps.length} waits and add up the time slept`,
    steps,
    ...sleepsAnswer(steps.reduce((a, s) => a + (s.args['ms'] as number), 0)),
  });
  const sums = (server: string, pairs: [number, number][]) =>
    pairs.map(([a, b], i) => tool(`s${i + 1}`, `${server}.get-sum`, { a, b }, `Add ${a} and ${b}`));
  const sumTask = (id: string, shape: Shape, server: string, pairs: [number, number][]): BenchTask => ({
    id,
    shape,
    transport: server === 'web' ? 'http' : 'stdio',
    request: `Add each pair and tell me the total of all the sums: ${pairs.map(([a, b]) => `${a}+${b}`).join(', ')}.`,
    summary: `Add ${pairs.length} pairs and total the sums`,
    steps: sums(server, pairs),
    ...sumsAnswer(pairs.reduce((t, [a, b]) => t + a + b, 0)),
  });
  const echoChain = (id: string, shape: Shape, server: string, n: number, message: string): BenchTask => ({
    id,
    shape,
    transport: server === 'web' ? 'http' : 'stdio',
    request: `Echo "${message}", then echo each answer again, ${n} echoes in all, and tell me the final message.`,
    summary: `Echo ${n} times in a chain`,
    steps: Array.from({ length: n }, (_, i) =>
      i === 0
        ? tool('s1', `${server}.echo`, { message }, `Echo "${message}"`)
        : tool(
            `s${i + 1}`,
            `${server}.echo`,
            { message: ref(`steps.s${i}.output.content[0].text`) },
            `Echo the answer of s${i}`,
            [`s${i}`],
          ),
    ),
    ...lastEchoAnswer(`${'Echo: '.repeat(n)}${message}`),
  });
  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
  const single: BenchTask[] = [
    {
      id: 'single-echo',
      shape: 'single',
      transport: 'stdio',
      request: 'Echo "ping" and tell me what came back.',
      summary: 'Echo ping',
      steps: [tool('s1', 'everything.echo', { message: 'ping' }, 'Echo "ping"')],
      ...echoesAnswer(['ping']),
    },
    sumTask('single-sum-http', 'single', 'web', [[19, 23]]),
    sleepTask(
      'single-sleep',
      'single',
      [sleepStep('s1', 600)],
      'Wait 600 ms (scaled) once and tell me how long it slept.',
    ),
  ];
  const fans: BenchTask[] = [
    sumTask('fan2-sum', 'fan-2', 'everything', [
      [3, 4],
      [10, 20],
    ]),
    sleepTask('fan2-sleep', 'fan-2', sleeps([400, 700]), 'Run two waits and tell me the total time slept.'),
    sumTask('fan4-sum-http', 'fan-4', 'web', [
      [1, 2],
      [30, 40],
      [500, 600],
      [7, 8],
    ]),
    sleepTask('fan4-sleep', 'fan-4', sleeps([300, 500, 700, 450]), 'Run four waits and tell me the total time slept.'),
    {
      id: 'fan8-echo',
      shape: 'fan-8',
      transport: 'stdio',
      request: `Echo each of these words and list the answers: ${words.join(', ')}.`,
      summary: 'Echo eight words',
      steps: words.map((w, i) => tool(`s${i + 1}`, 'everything.echo', { message: w }, `Echo "${w}"`)),
      ...echoesAnswer(words),
    },
    sleepTask(
      'fan8-sleep',
      'fan-8',
      sleeps([200, 350, 500, 650, 800, 250, 400, 900]),
      'Run eight waits and tell me the total time slept.',
    ),
    sumTask(
      'fan16-sum',
      'fan-16',
      'everything',
      Array.from({ length: 16 }, (_, i): [number, number] => [i + 1, (i + 1) * 10]),
    ),
    sleepTask(
      'fan16-sleep',
      'fan-16',
      sleeps([100, 150, 200, 250, 300, 350, 400, 450, 500, 550, 600, 650, 700, 750, 800, 850]),
      'Run sixteen waits and tell me the total time slept.',
    ),
  ];
  const chainSleeps = (bases: number[]) => bases.map((b, i) => sleepStep(`s${i + 1}`, b, i ? [`s${i}`] : []));
  const chains: BenchTask[] = [
    echoChain('chain2-echo', 'chain-2', 'everything', 2, 'hello'),
    sleepTask(
      'chain2-sleep',
      'chain-2',
      chainSleeps([500, 300]),
      'Wait, then wait again, and tell me the total time slept.',
    ),
    echoChain('chain3-echo-http', 'chain-3', 'web', 3, 'relay'),
    sleepTask(
      'chain3-sleep',
      'chain-3',
      chainSleeps([300, 600, 200]),
      'Run three waits one after another and tell me the total time slept.',
    ),
    // Issue 13's chain of 4 dependent calls (2 model calls for Steward against 5 for a tool-calling agent).
    echoChain('chain4-echo', 'chain-4', 'everything', 4, 'link'),
    echoChain('chain5-echo', 'chain-5', 'everything', 5, 'baton'),
    sleepTask(
      'chain5-sleep',
      'chain-5',
      chainSleeps([200, 400, 300, 500, 100]),
      'Run five waits one after another and tell me the total time slept.',
    ),
  ];
  return [
    ...single,
    ...fans,
    ...chains,
    ...diamondTasks(ms, sleepStep),
    ...mixedTasks(ms, sleepStep),
    ...largeTasks(files),
  ];
}

/** Rounds the estimates section may run that have tasks with arguments new to that round (`createFreshArgTasks`). */
export const FRESH_ROUNDS = 20;

/**
 * Section 10's tasks whose arguments are new in each round, for estimates of calls never made before: `fresh-wait`
 * waits a length no earlier call asked for (1.5 s and a little more each round, at scale 1), the same shape of
 * arguments as every other wait; `fresh-pings` is a chain of four short waits that carry a label (another shape of
 * the same tool's arguments, as a search with a filter is to one without), with labels and lengths new each round.
 */
export function createFreshArgTasks(scale: number, rounds = FRESH_ROUNDS): BenchTask[] {
  const ms = (base: number) => Math.max(1, Math.round(base * scale));
  return Array.from({ length: rounds }, (_, r) => {
    const waitMs = ms(1500 + 50 * r);
    const pings = [1, 2, 3, 4].map((i) =>
      tool(
        `p${i}`,
        'audit.sleep',
        { ms: ms(100 + r), label: `ping ${r}.${i}` },
        `Ping ${i}`,
        i > 1 ? [`p${i - 1}`] : [],
        ms(100 + r),
      ),
    );
    const wait: BenchTask = {
      id: `fresh-wait-r${r}`,
      shape: 'single',
      transport: 'stdio',
      request: `Wait ${waitMs} ms once and tell me how long it slept.`,
      summary: `Wait ${waitMs} ms`,
      steps: [tool('s1', 'audit.sleep', { ms: waitMs }, `Wait ${waitMs} ms`, [], waitMs)],
      ...sleepsAnswer(waitMs),
    };
    const chain: BenchTask = {
      id: `fresh-pings-r${r}`,
      shape: 'chain-4',
      transport: 'stdio',
      request: 'Send four labelled pings one after another and tell me the total time slept.',
      summary: 'Four labelled pings in a chain',
      steps: pings,
      ...sleepsAnswer(pings.reduce((a, p) => a + (p.args['ms'] as number), 0)),
    };
    return [wait, chain];
  }).flat();
}

type SleepStep = (id: string, base: number, dependsOn?: string[]) => TaskStep;

function diamondTasks(_ms: (b: number) => number, sleepStep: SleepStep): BenchTask[] {
  // server-everything's weather for Chicago: 36 °C, 82 % humidity.
  const weather: TaskStep[] = [
    tool('a', 'everything.get-structured-content', { location: 'Chicago' }, 'Get the weather in Chicago'),
    tool(
      'b',
      'everything.get-sum',
      { a: ref('steps.a.output.structuredContent.temperature'), b: 100 },
      'Add 100 to the temperature',
      ['a'],
    ),
    tool(
      'c',
      'everything.get-sum',
      { a: ref('steps.a.output.structuredContent.humidity'), b: 200 },
      'Add 200 to the humidity',
      ['a'],
    ),
    tool('d', 'everything.echo', { message: 'done' }, 'Say done', ['b', 'c']),
  ];
  const waits = [
    sleepStep('a', 200),
    sleepStep('b', 600, ['a']),
    sleepStep('c', 300, ['a']),
    sleepStep('d', 200, ['b', 'c']),
  ];
  return [
    {
      id: 'diamond-weather',
      shape: 'diamond',
      transport: 'stdio',
      summary: 'Weather, two sums, done',
      request:
        'Get the weather in Chicago, add 100 to its temperature and 200 to its humidity, then say done; tell me the total of the two sums.',
      steps: weather,
      ...sumsAnswer(136 + 282),
    },
    {
      id: 'diamond-sleep',
      shape: 'diamond',
      transport: 'stdio',
      summary: 'Wait, two waits, wait',
      request: 'Wait, then run two waits, then wait once more; tell me the total time slept.',
      steps: waits,
      ...sleepsAnswer(waits.reduce((a, s) => a + (s.args['ms'] as number), 0)),
    },
  ];
}

function mixedTasks(ms: (b: number) => number, sleepStep: SleepStep): BenchTask[] {
  const longOp = (id: string, base: number, dependsOn: string[] = []) =>
    tool(
      id,
      'web.trigger-long-running-operation',
      { duration: ms(base) / 1000, steps: 2 },
      `Run a long operation of ${ms(base)} ms`,
      dependsOn,
      ms(base),
    );
  const fan = [
    sleepStep('s1', 50),
    sleepStep('s2', 100),
    sleepStep('s3', 250),
    sleepStep('s4', 900),
    longOp('s5', 400),
    tool('s6', 'everything.echo', { message: 'mixed' }, 'Echo "mixed"'),
  ];
  const branches = [
    sleepStep('a', 150),
    sleepStep('b', 800, ['a']),
    sleepStep('c', 100, ['a']),
    longOp('d', 200, ['c']),
    sleepStep('e', 120, ['d']),
    tool('f', 'everything.echo', { message: 'merged' }, 'Echo "merged"', ['b', 'e']),
  ];
  const slept = (steps: TaskStep[]) =>
    steps.filter((s) => s.tool === 'audit.sleep').reduce((a, s) => a + (s.args['ms'] as number), 0);
  return [
    {
      id: 'mixed-fan',
      shape: 'mixed',
      transport: 'mixed',
      summary: 'Waits of mixed lengths, a long operation and an echo',
      request:
        'Run four waits of different lengths, one long operation and an echo, all at once; tell me the total time slept and how many long operations completed.',
      steps: fan,
      ...sleepsAnswer(slept(fan), 1),
    },
    {
      id: 'mixed-branches',
      shape: 'mixed',
      transport: 'mixed',
      summary: 'A long branch and a short chain, then merge',
      request:
        'Wait, then run a long wait beside a chain of a wait, a long operation and a wait; then echo "merged"; tell me the total time slept and how many long operations completed.',
      steps: branches,
      ...sleepsAnswer(slept(branches), 1),
    },
  ];
}

function largeTasks(files: readonly GeneratedFile[]): BenchTask[] {
  const file = (i: number) => files[i] as GeneratedFile;
  const read = (id: string, i: number) =>
    tool(id, 'fs.read_text_file', { path: file(i).path }, `Read doc-${i + 1}.txt`);
  // The checksum is the file's last line: only a model that reads the whole file finds it, so the plan maps each
  // read through an llm step (the report writer sees each output cut to a budget).
  const extract = (id: string, readId: string): TaskStep => ({
    id,
    kind: 'llm',
    tool: 'llm',
    dependsOn: [readId],
    description: `Find the checksum in ${readId}`,
    nominalMs: 0,
    args: {
      prompt: {
        task: 'Report the checksum line of this file, exactly as written.',
        file: ref(`steps.${readId}.output.structuredContent.content`),
      },
    },
  });
  const checksums = (n: number): Answer => ({
    answer: (texts) => `Checksums: ${uniqueMatches(texts, /checksum: ([0-9a-f]{12})/g).join(', ')}.`,
    expected: `Checksums: ${files
      .slice(0, n)
      .map((f) => f.checksum)
      .join(', ')}.`,
  });
  return [
    {
      id: 'large-checksum-1',
      shape: 'large',
      transport: 'stdio',
      summary: 'Read one large file and find its checksum',
      request: 'Read docs/doc-1.txt and tell me its checksum (the last line).',
      steps: [read('r1', 0), extract('x1', 'r1')],
      ...checksums(1),
    },
    {
      id: 'large-checksum-2',
      shape: 'large',
      transport: 'stdio',
      summary: 'Read two large files and find their checksums',
      request: 'Read docs/doc-1.txt and docs/doc-2.txt and tell me their checksums (the last lines).',
      steps: [read('r1', 0), read('r2', 1), extract('x1', 'r1'), extract('x2', 'r2')],
      ...checksums(2),
    },
    {
      id: 'large-titles-4',
      shape: 'large',
      transport: 'stdio',
      summary: 'Read four large files and list their titles',
      request: 'Read docs/doc-1.txt to docs/doc-4.txt and list their titles (the first lines).',
      steps: [0, 1, 2, 3].map((i) => read(`r${i + 1}`, i)),
      answer: (texts) => `Titles: ${uniqueMatches(texts, /title: (doc-\d+ [0-9a-f]{6})/g).join(', ')}.`,
      expected: `Titles: ${files
        .slice(0, 4)
        .map((f) => f.title)
        .join(', ')}.`,
    },
  ];
}
