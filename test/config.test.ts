import { describe, expect, it } from 'vitest';
import { DEFAULT_DB_POOL_SIZE, DEFAULT_MAX_PARALLEL, loadConfig } from '../src/config.ts';

describe('configuration', () => {
  it('names what to set when no model is configured, and that Ollama works', () => {
    expect(() => loadConfig({})).toThrow(/No language model is configured\. Set OPENAI_API_KEY .*Ollama/);
  });

  it('names the variable with a bad value', () => {
    expect(() => loadConfig({ OPENAI_API_KEY: 'k', STEWARD_MAX_PARALLEL: 'lots' })).toThrow(
      'Configuration error: STEWARD_MAX_PARALLEL is "lots", which is not a number: it must be a whole number of 1 or more, e.g. STEWARD_MAX_PARALLEL=16.',
    );
    expect(() => loadConfig({ OPENAI_API_KEY: 'k', DATABASE_URL: 'mysql://x' })).toThrow(
      'Configuration error: DATABASE_URL is set to a value (not shown here), but it must start with postgres:// or postgresql://, e.g. DATABASE_URL=postgres://steward:password@localhost:5432/steward.',
    );
    expect(() => loadConfig({ OPENAI_API_KEY: 'k', OPENAI_STRUCTURED_OUTPUT: 'json' })).toThrow(
      /OPENAI_STRUCTURED_OUTPUT/,
    );
  });

  it('turns Slack plan blocks on by default, off with SLACK_PLAN_BLOCKS=off, and names a bad value', () => {
    const slack = { OPENAI_API_KEY: 'k', SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 'secret-1' };
    expect(loadConfig(slack).slack?.planBlocks).toBe(true);
    expect(loadConfig({ ...slack, SLACK_PLAN_BLOCKS: 'off' }).slack?.planBlocks).toBe(false);
    expect(() => loadConfig({ ...slack, SLACK_PLAN_BLOCKS: 'no' })).toThrow(/SLACK_PLAN_BLOCKS/);
  });

  it('serves Discord with DISCORD_TOKEN (with or without Slack), keeps the token secret, and names a bad setting', () => {
    const discord = { OPENAI_API_KEY: 'k', DISCORD_TOKEN: 'discord-token-123' };
    const c = loadConfig(discord);
    expect(c.discord).toEqual({ token: 'discord-token-123', messageContent: false });
    expect(c.slack).toBeUndefined();
    expect(c.secrets).toContain('discord-token-123');
    const both = loadConfig({
      ...discord,
      SLACK_BOT_TOKEN: 'xoxb-1',
      SLACK_SIGNING_SECRET: 'secret-1',
      DISCORD_GUILD_ID: '123456789012345678',
      DISCORD_MESSAGE_CONTENT: 'on',
      DISCORD_API_URL: 'http://127.0.0.1:4000/api',
    });
    expect(both.slack).toBeDefined();
    expect(both.discord).toEqual({
      token: 'discord-token-123',
      guildId: '123456789012345678',
      messageContent: true,
      apiUrl: 'http://127.0.0.1:4000/api',
    });
    expect(() => loadConfig({ ...discord, DISCORD_GUILD_ID: 'my-server' })).toThrow(
      /DISCORD_GUILD_ID is "my-server", but it must be a server \(guild\) ID, a number of 15 to 22 digits/,
    );
    expect(() => loadConfig({ ...discord, DISCORD_MESSAGE_CONTENT: 'yes' })).toThrow(/DISCORD_MESSAGE_CONTENT/);
  });

  it('turns traces on with an OTLP endpoint, as the OpenTelemetry spec builds the traces URL, and warns of gRPC', () => {
    const k = { OPENAI_API_KEY: 'k' };
    expect(loadConfig(k).tracing).toBeUndefined();
    expect(loadConfig({ ...k, OTEL_SERVICE_NAME: 'x', STEWARD_OTEL_CONTENT: 'on' }).tracing).toBeUndefined();
    expect(loadConfig({ ...k, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      url: 'http://collector:4318/v1/traces',
      serviceName: 'steward',
      content: false,
    });
    const both = {
      ...k,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/otlp',
      OTEL_SERVICE_NAME: 'steward-eu',
      STEWARD_OTEL_CONTENT: 'on',
    };
    expect(loadConfig(both).tracing).toEqual({
      url: 'https://traces.example.com/otlp',
      serviceName: 'steward-eu',
      content: true,
    });
    expect(loadConfig(both).warnings).toEqual([]);
    expect(loadConfig({ ...both, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).warnings).toEqual([
      "Traces go over OTLP/HTTP in JSON only, not gRPC as OTEL_EXPORTER_OTLP_PROTOCOL says: point OTEL_EXPORTER_OTLP_TRACES_ENDPOINT at the collector's OTLP/HTTP port (4318 by default), not its gRPC one.",
    ]);
    // gRPC set for other programs, with traces off: nothing to say.
    expect(loadConfig({ ...k, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).warnings).toEqual([]);
    expect(() => loadConfig({ ...k, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT.*http:\/\/ or https:\/\//,
    );
    expect(() => loadConfig({ ...k, STEWARD_OTEL_CONTENT: '1' })).toThrow(/STEWARD_OTEL_CONTENT.*on or off|off or on/);
  });

  it('treats an empty number as unset, not as zero', () => {
    const c = loadConfig({ OPENAI_API_KEY: 'k', STEWARD_AMENDMENT_CAP: '', STEWARD_MAX_PARALLEL: ' ' });
    expect(c.settings.amendmentCap).toBe(3);
    expect(c.settings.maxParallel).toBe(DEFAULT_MAX_PARALLEL);
  });

  it('shows the planner at most 24 tools unless STEWARD_PLANNER_TOOLS says otherwise, and never 0', () => {
    expect(loadConfig({ OPENAI_API_KEY: 'k' }).settings.plannerTools).toBe(24);
    expect(loadConfig({ OPENAI_API_KEY: 'k', STEWARD_PLANNER_TOOLS: '60' }).settings.plannerTools).toBe(60);
    expect(() => loadConfig({ OPENAI_API_KEY: 'k', STEWARD_PLANNER_TOOLS: '0' })).toThrow(/STEWARD_PLANNER_TOOLS/);
  });

  it('a local OpenAI-compatible server needs a model name; STEWARD_MODEL covers every role', () => {
    expect(() => loadConfig({ OPENAI_BASE_URL: 'http://localhost:11434/v1' })).toThrow(/set STEWARD_MODEL/);
    const c = loadConfig({
      OPENAI_BASE_URL: 'http://localhost:11434/v1',
      STEWARD_MODEL: 'llama3.1',
      STEWARD_MODEL_CLASSIFIER: 'qwen2.5:0.5b',
    });
    expect(c.llm.models).toEqual({
      planner: 'llama3.1',
      classifier: 'qwen2.5:0.5b',
      synthesizer: 'llama3.1',
      llm_step: 'llama3.1',
      // Quick answers take the classifier's model unless STEWARD_MODEL_BUTLER names one.
      butler: 'qwen2.5:0.5b',
    });
    expect(c.llm.openai).toEqual({
      apiKey: 'not-needed',
      baseURL: 'http://localhost:11434/v1',
      structuredOutput: 'native',
    });
  });

  it('quick answers: on by default with 4 turns and 12,000 tokens, the planner asked beside; off by setting; a butler model of its own', () => {
    const on = loadConfig({ OPENAI_API_KEY: 'sk-x' });
    expect(on.settings.quickAnswers).toEqual({ maxTurns: 4, maxTokens: 12_000, frontDesk: 'beside' });
    expect(on.llm.models.butler).toBe(on.llm.models.classifier);
    expect(on.settings.budgets.perCall.butler).toBe(2_000);
    const tuned = loadConfig({
      OPENAI_API_KEY: 'sk-x',
      STEWARD_QUICK_MAX_TURNS: '2',
      STEWARD_QUICK_MAX_TOKENS: '5000',
      STEWARD_MODEL_BUTLER: 'gpt-4.1-nano',
      STEWARD_QUICK_PLANNER: 'after',
    });
    expect(tuned.settings.quickAnswers).toEqual({ maxTurns: 2, maxTokens: 5000, frontDesk: 'after' });
    expect(() => loadConfig({ OPENAI_API_KEY: 'sk-x', STEWARD_QUICK_PLANNER: 'sometimes' })).toThrow(
      /STEWARD_QUICK_PLANNER/,
    );
    expect(tuned.llm.models.butler).toBe('gpt-4.1-nano');
    expect(loadConfig({ OPENAI_API_KEY: 'sk-x', STEWARD_QUICK_ANSWERS: 'off' }).settings.quickAnswers).toBeUndefined();
    expect(() => loadConfig({ OPENAI_API_KEY: 'sk-x', STEWARD_QUICK_ANSWERS: 'yes' })).toThrow(/STEWARD_QUICK_ANSWERS/);
    expect(() => loadConfig({ OPENAI_API_KEY: 'sk-x', STEWARD_QUICK_MAX_TURNS: '0' })).toThrow(
      /STEWARD_QUICK_MAX_TURNS/,
    );
  });

  it('refuses a model base URL without an http(s) scheme at start, naming the variable and a working form', () => {
    // "localhost:11434/v1" is a URL to the WHATWG parser (scheme "localhost:"), so it used to pass and fail later.
    for (const bad of ['localhost:11434/v1', '127.0.0.1:11434/v1', 'ftp://models.example/v1', 'http://']) {
      expect(() => loadConfig({ OPENAI_BASE_URL: bad, STEWARD_MODEL: 'llama3.1' }), bad).toThrow(
        /^Configuration error: OPENAI_BASE_URL is "[^"]*", but it must be an http:\/\/ or https:\/\/ URL, e\.g\. http:\/\/localhost:11434\/v1/,
      );
    }
    expect(() => loadConfig({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'api.anthropic.com' })).toThrow(
      /^Configuration error: ANTHROPIC_BASE_URL is "[^"]*", but it must be an http:\/\/ or https:\/\/ URL/,
    );
    const ok = loadConfig({
      OPENAI_BASE_URL: ' HTTPS://llm.internal:8443/v1 ',
      STEWARD_MODEL: 'm',
      OPENAI_API_KEY: 'k',
    });
    expect(ok.llm.openai?.baseURL).toBe('HTTPS://llm.internal:8443/v1');
    expect(loadConfig({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: '' }).llm.openai?.baseURL).toBeUndefined();
  });

  it('keeps secrets on a list for redaction, and reads approvers', () => {
    const c = loadConfig({
      OPENAI_API_KEY: 'sk-canary-1',
      DATABASE_URL: 'postgres://u:pw@h/db',
      STEWARD_APPROVERS: 'slack:U1, console:ada',
    });
    expect(c.secrets).toEqual(['sk-canary-1', 'postgres://u:pw@h/db']);
    expect(c.settings.approvers).toEqual(['slack:U1', 'console:ada']);
  });

  it('reads the database pool size, defaults it, and names the variable when it is not a positive whole number', () => {
    expect(loadConfig({ OPENAI_API_KEY: 'k' }).databasePoolSize).toBe(DEFAULT_DB_POOL_SIZE);
    expect(loadConfig({ OPENAI_API_KEY: 'k', STEWARD_DB_POOL_SIZE: '' }).databasePoolSize).toBe(DEFAULT_DB_POOL_SIZE);
    expect(loadConfig({ OPENAI_API_KEY: 'k', STEWARD_DB_POOL_SIZE: '5' }).databasePoolSize).toBe(5);
    for (const bad of ['0', '-3', '2.5', 'many']) {
      expect(() => loadConfig({ OPENAI_API_KEY: 'k', STEWARD_DB_POOL_SIZE: bad }), bad).toThrow(
        /^Configuration error: STEWARD_DB_POOL_SIZE is /,
      );
    }
  });

  it('reads the lease and the shutdown grace, and refuses a lease too short to be renewed in time', () => {
    const defaults = loadConfig({ OPENAI_API_KEY: 'k' });
    expect([defaults.settings.leaseMs, defaults.shutdownGraceMs]).toEqual([15_000, 20_000]);
    const set = loadConfig({ OPENAI_API_KEY: 'k', STEWARD_LEASE_SECONDS: '1.5', STEWARD_SHUTDOWN_GRACE_SECONDS: '0' });
    expect([set.settings.leaseMs, set.shutdownGraceMs]).toEqual([1_500, 0]);
    for (const bad of ['0.1', '0', '-5', 'soon']) {
      expect(() => loadConfig({ OPENAI_API_KEY: 'k', STEWARD_LEASE_SECONDS: bad }), bad).toThrow(
        /^Configuration error: STEWARD_LEASE_SECONDS is /,
      );
    }
  });

  it('reads the health port (off when unset or empty) and names the variable when it is not a port', () => {
    expect(loadConfig({ OPENAI_API_KEY: 'k' }).healthPort).toBeUndefined();
    expect(loadConfig({ OPENAI_API_KEY: 'k', STEWARD_HEALTH_PORT: '' }).healthPort).toBeUndefined();
    expect(loadConfig({ OPENAI_API_KEY: 'k', STEWARD_HEALTH_PORT: '8081' }).healthPort).toBe(8081);
    for (const bad of ['-1', '70000', 'web']) {
      expect(() => loadConfig({ OPENAI_API_KEY: 'k', STEWARD_HEALTH_PORT: bad }), bad).toThrow(
        /^Configuration error: STEWARD_HEALTH_PORT is /,
      );
    }
  });

  it('reads the brakes on delegation: defaults 2, 10, 3 and 5; a depth above the ceiling of 5 is lowered to 5', () => {
    expect(loadConfig({ OPENAI_API_KEY: 'k' }).settings.delegation).toEqual({
      depth: 2,
      concurrency: 10,
      rounds: 3,
      messages: 5,
    });
    const set = loadConfig({
      OPENAI_API_KEY: 'k',
      STEWARD_DELEGATION_DEPTH: '9',
      STEWARD_DELEGATION_CONCURRENCY: '4',
      STEWARD_DELEGATION_ROUNDS: '1',
      STEWARD_DELEGATION_MESSAGES: '12',
    });
    expect(set.settings.delegation).toEqual({ depth: 5, concurrency: 4, rounds: 1, messages: 12 });
    for (const name of ['STEWARD_DELEGATION_DEPTH', 'STEWARD_DELEGATION_CONCURRENCY', 'STEWARD_DELEGATION_ROUNDS']) {
      expect(() => loadConfig({ OPENAI_API_KEY: 'k', [name]: '0' }), name).toThrow(`Configuration error: ${name} is `);
    }
  });
});
