import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/engine/plan/canonical-json.ts';

describe('canonicalJson', () => {
  it('sorts keys at every depth', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}',
    );
  });

  it('treats undefined as JSON does: a key with it is left out, in an array it is null', () => {
    // A step rebuilt in code with `why: undefined` is the same step as one stored without it.
    expect(canonicalJson({ id: 's1', why: undefined })).toBe(canonicalJson({ id: 's1' }));
    expect(canonicalJson([1, undefined])).toBe(JSON.stringify([1, undefined]));
    expect(canonicalJson(undefined)).toBe('null');
  });
});
