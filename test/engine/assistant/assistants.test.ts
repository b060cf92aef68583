/**
 * The pure parts of Assistants (issue 16): the grant fallback chain, the tools as an Assistant sees them (the
 * planner's catalog and validation), addressing (`ask <name>: …`) and the command words.
 */
import { describe, expect, it } from 'vitest';
import { parseAssistantCommand, isAssistantCommand } from '../../../src/engine/assistant/assistant-commands.ts';
import { applyGrants, grantRefusal, parseAddress, resolveGrant } from '../../../src/engine/assistant/assistants.ts';
import type { AssistantGrant } from '../../../src/engine/assistant/assistants.ts';
import { plannerSystemPrompt } from '../../../src/engine/plan/planner-prompt.ts';
import { validatePlan } from '../../../src/engine/plan/validate-plan.ts';
import type { Plan } from '../../../src/engine/plan/plan-schema.ts';
import type { ToolInfo } from '../../../src/engine/types.ts';
import { askCommandText } from '../../../src/bot/assistant-words.ts';

function tool(name: string): ToolInfo {
  const [server = '', short = ''] = name.split('.');
  return {
    name,
    server,
    tool: short,
    description: `the ${short} tool`,
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: true },
    policy: { allowed: true, timeoutMs: 1000 },
    fingerprint: name,
    definition: {},
  };
}

const grants = (...g: [AssistantGrant['scope'], string, AssistantGrant['effect']][]): AssistantGrant[] =>
  g.map(([scope, target, effect]) => ({ scope, target, effect }));

describe('resolveGrant', () => {
  const ops = {
    defaultGrant: 'deny' as const,
    grants: grants(['server', 'fs', 'allow'], ['tool', 'fs.write', 'deny'], ['tool', 'web.get', 'allow']),
  };
  it.each([
    ['fs.read', 'allow', 'server'],
    ['fs.write', 'deny', 'tool'],
    ['web.get', 'allow', 'tool'],
    ['web.post', 'deny', 'default'],
    ['mail.send', 'deny', 'default'],
  ])('%s: %s, from its %s', (name, effect, from) => {
    expect(resolveGrant(ops, name)).toEqual({ effect, from });
  });

  it('a tool row wins over its server row whatever the order, and the default applies last', () => {
    const reversed = { defaultGrant: 'allow' as const, grants: [...ops.grants].reverse() };
    expect(resolveGrant(reversed, 'fs.write')).toEqual({ effect: 'deny', from: 'tool' });
    expect(resolveGrant(reversed, 'mail.send')).toEqual({ effect: 'allow', from: 'default' });
    // `fs` names the server fs, not a server whose name starts with it.
    expect(resolveGrant(reversed, 'fsx.read')).toEqual({ effect: 'allow', from: 'default' });
  });

  it('a default of allow does not let an Assistant delegate: steward.delegate takes a grant of its own', () => {
    const open = { defaultGrant: 'allow' as const, grants: [] };
    expect(resolveGrant(open, 'steward.delegate')).toEqual({ effect: 'deny', from: 'default' });
    expect(resolveGrant(open, 'steward.step_output')).toEqual({ effect: 'allow', from: 'default' });
    const granted = { defaultGrant: 'deny' as const, grants: grants(['server', 'steward', 'allow']) };
    expect(resolveGrant(granted, 'steward.delegate')).toEqual({ effect: 'allow', from: 'server' });
  });

  it('never lets an Assistant read resources, even with a grant: one tool reads every server', () => {
    const open = { defaultGrant: 'allow' as const, grants: grants(['tool', 'steward.read_resource', 'allow']) };
    expect(grantRefusal('ops', open, 'steward.read_resource')).toBe(
      "is not for Assistants: it reads any server's resources, and grants name tools and servers",
    );
  });

  it('says why a tool is refused, and refuses everything of an Assistant that is gone', () => {
    expect(grantRefusal('ops', ops, 'fs.write')).toBe(
      'is not granted to the Assistant "ops" (its grant for this tool says deny)',
    );
    expect(grantRefusal('ops', ops, 'mail.send')).toMatch(
      /no grant for the tool or its server, and its default is deny/,
    );
    expect(grantRefusal('ops', ops, 'fs.read')).toBeNull();
    expect(grantRefusal('ops', null, 'fs.read')).toBe('is not granted: the Assistant "ops" no longer exists');
  });
});

describe('the tools as an Assistant sees them', () => {
  const all = ['fs.read', 'fs.write', 'mail.send'].map(tool);
  const seen = applyGrants(all, 'ops', {
    defaultGrant: 'deny',
    grants: grants(['server', 'fs', 'allow'], ['tool', 'fs.write', 'deny']),
  });

  it('the planner is shown only the granted tools, with the Assistant after the catalog', () => {
    const prompt = plannerSystemPrompt(seen, { name: 'ops', purpose: 'Operations', instructions: 'Read first.' });
    expect(prompt).toContain('- fs.read');
    expect(prompt).not.toContain('fs.write');
    expect(prompt).not.toContain('mail.send');
    expect(
      prompt.indexOf('You plan as the Assistant "ops": Operations\nIts instructions:\nRead first.'),
    ).toBeGreaterThan(prompt.indexOf('- fs.read'));
    // Steward's own prompt is unchanged by the feature: no Assistant section.
    expect(plannerSystemPrompt(all)).not.toContain('Assistant');
  });

  it('validation refuses a step naming a tool the Assistant is not granted, naming tool and Assistant', () => {
    const plan: Plan = {
      summary: 'x',
      needsTools: true,
      risks: [],
      steps: [
        { id: 'a', kind: 'tool', tool: 'fs.read', args: {}, dependsOn: [], description: '', optional: false },
        { id: 'b', kind: 'tool', tool: 'mail.send', args: {}, dependsOn: [], description: '', optional: false },
      ],
    } as unknown as Plan;
    const v = validatePlan(plan, seen);
    expect(v.ok).toBe(false);
    expect(v.ok ? [] : v.error).toEqual([
      'step b: tool "mail.send" is not granted to the Assistant "ops" (it has no grant for the tool or its server, and its default is deny)',
    ]);
    expect(validatePlan(plan, all).ok).toBe(true);
  });
});

describe('addressing an Assistant', () => {
  it.each([
    ['ask ops: restart nginx', { name: 'ops', task: 'restart nginx' }],
    ['  Ask Ops :  restart\nnginx ', { name: 'ops', task: 'restart\nnginx' }],
    ['ask ops:', { name: 'ops', task: '' }],
    ['ask ops restart nginx', null],
    ['ask the ops team: restart', null],
    ['please ask ops: restart', null],
  ])('%j', (text, expected) => {
    expect(parseAddress(text)).toEqual(expected);
  });

  it('a long request keeps every character of its task', () => {
    expect(parseAddress(`ask ops: ${'x'.repeat(300_000)}`)?.task.length).toBe(300_000);
  });

  it('`/steward ask ops: …` reads as `ask ops: …`; other requests pass unchanged', () => {
    expect(askCommandText('ops: restart nginx')).toBe('ask ops: restart nginx');
    expect(askCommandText('restart nginx, then tell me: done?')).toBe('restart nginx, then tell me: done?');
  });
});

describe('Assistant commands', () => {
  it.each([
    ['assistants', { kind: 'list' }],
    ['assistant ops', { kind: 'show', name: 'ops' }],
    [
      'assistant create ops "Operations, day to day"',
      { kind: 'create', name: 'ops', purpose: 'Operations, day to day' },
    ],
    ['assistant OPS instructions “Read first.”', { kind: 'instructions', name: 'ops', text: 'Read first.' }],
    ['assistant ops grant fs allow', { kind: 'grant', name: 'ops', scope: 'server', target: 'fs', effect: 'allow' }],
    [
      'assistant ops grant fs.write DENY',
      { kind: 'grant', name: 'ops', scope: 'tool', target: 'fs.write', effect: 'deny' },
    ],
    ['assistant ops revoke fs.write', { kind: 'revoke', name: 'ops', scope: 'tool', target: 'fs.write' }],
    ['assistant ops default allow', { kind: 'default', name: 'ops', effect: 'allow' }],
    ['assistant ops model planner none', { kind: 'model', name: 'ops', role: 'planner', spec: null }],
    ['assistant ops delete', { kind: 'delete', name: 'ops' }],
  ])('%s', (text, expected) => {
    expect(isAssistantCommand(text)).toBe(true);
    expect(parseAssistantCommand(text)).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['assistant', /Name the Assistant/],
    ['assistant create 9lives "x"', /not an Assistant name/],
    ['assistant create ops', /Say what it is for/],
    ['assistant ops grant fs maybe', /Say allow or deny/],
    ['assistant ops grant "fs write" allow', /not a tool \(server\.tool\) or a server name/],
    ['assistant ops frobnicate', /"frobnicate" is not something an Assistant command does/],
    ['assistants please', /Just `assistants`/],
    [`assistant ops instructions "${'x'.repeat(9_000)}"`, /characters long; the most is/],
  ])('refuses %s', (text, refusal) => {
    const parsed = parseAssistantCommand(text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toMatch(refusal);
  });

  it('a request that merely mentions an assistant is not a command', () => {
    expect(isAssistantCommand('assistant, please list the files')).toBe(false);
    expect(isAssistantCommand('ask ops: list the files')).toBe(false);
  });
});
