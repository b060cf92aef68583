import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

const SECRET = 'x'.repeat(40);

describe('dashboard settings', () => {
  it('is off unless its port is set', () => {
    expect(loadConfig({ OPENAI_API_KEY: 'k' }).dashboard).toBeUndefined();
  });

  it('needs a secret of at least 32 characters when the port is set, and never shows it', () => {
    expect(() => loadConfig({ OPENAI_API_KEY: 'k', STEWARD_DASHBOARD_PORT: '8080' })).toThrow(
      /STEWARD_DASHBOARD_SECRET must be a random string of at least 32 characters/,
    );
    const short = 'short-secret-value';
    let message = '';
    try {
      loadConfig({ OPENAI_API_KEY: 'k', STEWARD_DASHBOARD_PORT: '8080', STEWARD_DASHBOARD_SECRET: short });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('The one set has 18.');
    expect(message).not.toContain(short);
  });

  it('takes the port, the public address without its trailing slash, and keeps the secret out of logs', () => {
    const config = loadConfig({
      OPENAI_API_KEY: 'k',
      STEWARD_DASHBOARD_PORT: '8080',
      STEWARD_DASHBOARD_URL: 'https://steward.example.com/',
      STEWARD_DASHBOARD_SECRET: SECRET,
    });
    expect(config.dashboard).toEqual({
      port: 8080,
      host: '127.0.0.1',
      publicUrl: 'https://steward.example.com',
      secret: SECRET,
    });
    expect(config.secrets).toContain(SECRET);
    expect(() =>
      loadConfig({ OPENAI_API_KEY: 'k', STEWARD_DASHBOARD_URL: 'steward.example.com', STEWARD_DASHBOARD_PORT: '1' }),
    ).toThrow(/STEWARD_DASHBOARD_URL is "[^"]*", but it must be an http:\/\/ or https:\/\/ URL/);
  });

  it('listens on loopback unless an address is set, and refuses what is not an address', () => {
    const base = { OPENAI_API_KEY: 'k', STEWARD_DASHBOARD_PORT: '8080', STEWARD_DASHBOARD_SECRET: SECRET };
    expect(loadConfig({ ...base, STEWARD_DASHBOARD_HOST: '0.0.0.0' }).dashboard?.host).toBe('0.0.0.0');
    expect(loadConfig({ ...base, STEWARD_DASHBOARD_HOST: '::' }).dashboard?.host).toBe('::');
    expect(loadConfig({ ...base, STEWARD_DASHBOARD_HOST: '::1' }).dashboard?.host).toBe('::1');
    expect(loadConfig({ ...base, STEWARD_DASHBOARD_HOST: 'localhost' }).dashboard?.host).toBe('localhost');
    for (const bad of ['http://0.0.0.0/', '127.0.0.1:8080', ':::', '-', '0', 'a b'])
      expect(() => loadConfig({ ...base, STEWARD_DASHBOARD_HOST: bad }), bad).toThrow(
        /STEWARD_DASHBOARD_HOST is "[^"]*", but it must be an address to listen on \(no port\)/,
      );
  });
});
