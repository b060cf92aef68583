import { describe, expect, it } from 'vitest';
import {
  fieldDefault,
  parseQuestionForm,
  questionDeadline,
  readQuestionAnswer,
  sensitiveFields,
  sensitiveName,
} from '../../../src/engine/run/question-form.ts';
import type { QuestionField } from '../../../src/engine/server-questions.ts';
import type { Json } from '../../../src/engine/types.ts';

function form(properties: Record<string, Json>, required: string[] = []): QuestionField[] {
  const parsed = parseQuestionForm({ type: 'object', properties, required });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

describe('parseQuestionForm', () => {
  it('reads each primitive kind the MCP spec allows, with titles, defaults and choices', () => {
    const fields = form(
      {
        name: { type: 'string', title: 'Name', minLength: 2 },
        email: { type: 'string', format: 'email' },
        age: { type: 'integer', minimum: 1, maximum: 100, default: 42 },
        ok: { type: 'boolean', default: true },
        pet: { type: 'string', enum: ['p1', 'p2'], enumNames: ['Cats', 'Dogs'] },
        hero: { type: 'string', oneOf: [{ const: 'h1', title: 'Superman' }] },
        fish: { type: 'array', items: { anyOf: [{ const: 'f1', title: 'Tuna' }] }, maxItems: 1, default: ['f1'] },
      },
      ['name'],
    );
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ['name', 'text', true],
      ['email', 'text', false],
      ['age', 'number', false],
      ['ok', 'boolean', false],
      ['pet', 'choice', false],
      ['hero', 'choice', false],
      ['fish', 'choices', false],
    ]);
    expect(fields[4]).toMatchObject({
      options: [
        { value: 'p1', label: 'Cats' },
        { value: 'p2', label: 'Dogs' },
      ],
    });
    expect(fieldDefault(fields[2]!)).toBe('42');
    expect(fieldDefault(fields[3]!)).toBe('yes');
    expect(fieldDefault(fields[6]!)).toBe('f1');
  });

  it('refuses nested objects and a schema that is not an object', () => {
    expect(parseQuestionForm({ type: 'object', properties: { a: { type: 'object' } } }).ok).toBe(false);
    expect(parseQuestionForm({ type: 'string' }).ok).toBe(false);
  });
});

describe('sensitiveFields', () => {
  it('flags fields that ask for passwords, tokens, API keys and cards, by name, title or description', () => {
    const fields = form({
      userPassword: { type: 'string' },
      k: { type: 'string', title: 'API key' },
      c: { type: 'string', description: 'Your credit card number' },
      pin: { type: 'string' },
      city: { type: 'string', description: 'Where you live (do not give us your phone number, pin, or other info)' },
    });
    expect(sensitiveFields(fields)).toEqual(['userPassword', 'API key', 'c', 'pin']);
  });
});

describe('sensitiveName', () => {
  it('tells names of secrets (how the dashboard hides arguments) from ordinary names', () => {
    const secret = ['apiKey', 'api_key', 'access_token', 'accessToken', 'password', 'clientSecret', 'pin', 'token'];
    const plain = ['path', 'max_tokens', 'message', 'keyword', 'spinner', 'title'];
    expect(secret.filter((n) => !sensitiveName(n))).toEqual([]);
    expect(plain.filter((n) => sensitiveName(n))).toEqual([]);
  });
});

describe('readQuestionAnswer', () => {
  const fields = form(
    {
      name: { type: 'string', title: 'Name' },
      age: { type: 'integer', title: 'Age', minimum: 1, maximum: 100 },
      ok: { type: 'boolean', title: 'OK' },
      pet: { type: 'string', title: 'Pet', enum: ['p1', 'p2'], enumNames: ['Cats', 'Dogs'] },
      fish: { type: 'array', title: 'Fish', items: { enum: ['Tuna', 'Trout'] }, maxItems: 1 },
      site: { type: 'string', title: 'Site', format: 'uri' },
    },
    ['name'],
  );

  it('turns entries into typed content, leaving empty optional fields out', () => {
    const read = readQuestionAnswer(fields, {
      name: ' Ada ',
      age: '7',
      ok: 'yes',
      pet: 'Dogs',
      fish: ['Tuna'],
      site: '',
    });
    expect(read).toEqual({ ok: true, value: { name: 'Ada', age: 7, ok: true, pet: 'p2', fish: ['Tuna'] } });
  });

  it('names every field that is wrong: a missing required one, out of range, not a choice, too many, bad format', () => {
    const read = readQuestionAnswer(fields, { age: '7.5', ok: 'maybe', pet: 'Birds', fish: 'Tuna,Trout', site: 'x' });
    expect(read.ok).toBe(false);
    expect(!read.ok && read.error.map((e) => `${e.label}: ${e.problem}`)).toEqual([
      'Name: an answer is required',
      'Age: a whole number is needed',
      'OK: answer yes or no',
      'Pet: one of Cats, Dogs',
      'Fish: pick at most 1',
      'Site: a full address (https://…) is needed',
    ]);
  });
});

describe('questionDeadline', () => {
  it('is the question’s own time, or a second before the call gives up when that is sooner', () => {
    const at = new Date('2026-12-05T10:00:00Z');
    expect(questionDeadline(at, 60_000, new Date('2026-12-05T11:00:00Z'))).toBe(Date.parse('2026-12-05T10:01:00Z'));
    expect(questionDeadline(at, 600_000, new Date('2026-12-05T10:00:30Z'))).toBe(Date.parse('2026-12-05T10:00:29Z'));
  });
});
