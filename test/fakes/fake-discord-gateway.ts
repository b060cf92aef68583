/**
 * The fake Discord's gateway: a WebSocket server (on the fake's HTTP port) speaking Discord's v10 JSON protocol as
 * @discordjs/ws expects it. HELLO on connect, heartbeats acknowledged, IDENTIFY checked (token, privileged Message
 * Content intent) and answered with READY then one GUILD_CREATE per guild, RESUME replaying what the session missed
 * then RESUMED. Every dispatch carries the session's next `s` and is kept, so a dropped connection can resume.
 */
import type { IncomingMessage, Server } from 'node:http';
import { GatewayCloseCodes, GatewayIntentBits, GatewayOpcodes } from 'discord.js';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';

/** One dispatch as it went (or will go) to a session. */
export interface GatewayDispatch {
  op: 0;
  t: string;
  s: number;
  d: unknown;
}

/** A gateway session: created by IDENTIFY, continued by RESUME. */
export interface GatewaySession {
  id: string;
  intents: number;
  seq: number;
  log: GatewayDispatch[];
  socket: WebSocket | undefined;
}

/** What the gateway needs from the rest of the fake. */
export interface GatewayHost {
  token: string;
  allowMessageContent: boolean;
  replayLastOnResume: boolean;
  heartbeatIntervalMs: number;
  resumeUrl: () => string;
  /** The READY payload (minus session_id and resume_gateway_url) and the GUILD_CREATE payloads after it. */
  readyPayload: () => Record<string, unknown>;
  guildCreates: () => unknown[];
}

/** The gateway half of the fake; `dispatch` sends to every session (or keeps the event for its resume). */
export class FakeDiscordGateway {
  readonly sessions = new Map<string, GatewaySession>();
  identifies = 0;
  resumes = 0;
  /** The query string of each connection (`v=10&encoding=json`). */
  readonly connectQueries: string[] = [];
  private current: GatewaySession | undefined;
  private readonly wss: WebSocketServer;
  private nextSession = 1;

  constructor(
    server: Server,
    private readonly host: GatewayHost,
  ) {
    this.wss = new WebSocketServer({ server });
    this.wss.on('connection', (socket, request) => this.accept(socket, request));
  }

  /** The intents of the newest session (0 before any IDENTIFY). */
  get intents(): number {
    return this.current?.intents ?? 0;
  }

  /**
   * Sends a dispatch to every session with its next sequence number (several processes on one bot token each get
   * every event, as from Discord), or keeps it for the resume where the socket is down. Returns the newest session's.
   */
  dispatch(t: string, d: unknown): GatewayDispatch | undefined {
    let newest: GatewayDispatch | undefined;
    for (const session of this.sessions.values()) {
      const payload = this.dispatchTo(session, t, d);
      if (session === this.current) newest = payload;
    }
    return newest;
  }

  /** Sends one dispatch to one session with its next sequence number, kept for its resume. */
  private dispatchTo(session: GatewaySession, t: string, d: unknown): GatewayDispatch {
    const payload: GatewayDispatch = { op: 0, t, s: ++session.seq, d };
    session.log.push(payload);
    this.send(session.socket, payload);
    return payload;
  }

  /**
   * Closes the current socket. Resumable: code 4000 (Unknown error), after which discord.js reconnects to
   * resume_gateway_url and sends RESUME. Not resumable: the session is forgotten and closed with 1000, after which
   * discord.js drops its session and identifies again.
   */
  dropConnection({ resumable = true }: { resumable?: boolean } = {}): void {
    const session = this.current;
    if (!session?.socket) return;
    const socket = session.socket;
    session.socket = undefined;
    if (!resumable) this.forget(session);
    socket.close(resumable ? GatewayCloseCodes.UnknownError : 1000, resumable ? 'Unknown error' : 'Session ended');
  }

  /** Terminates every socket and stops accepting new ones. */
  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private accept(socket: WebSocket, request: IncomingMessage): void {
    const query = new URL(request.url ?? '/', 'ws://fake').searchParams;
    this.connectQueries.push(query.toString());
    if (query.get('v') !== '10' || (query.get('encoding') ?? 'json') !== 'json') {
      socket.close(GatewayCloseCodes.InvalidAPIVersion, 'Invalid API version');
      return;
    }
    socket.on('message', (raw) => this.receive(socket, raw));
    socket.on('close', (code) => {
      for (const s of this.sessions.values()) {
        if (s.socket !== socket) continue;
        s.socket = undefined;
        // "If you close with 1000 or 1001, your session will be invalidated" (Discord, Gateway: Disconnections):
        // a client that closed so (discord.js's destroy) can no longer resume it, and it gets no more events.
        if (code === 1000 || code === 1001) this.forget(s);
      }
    });
    this.send(socket, { op: GatewayOpcodes.Hello, d: { heartbeat_interval: this.host.heartbeatIntervalMs } });
  }

  private receive(socket: WebSocket, raw: RawData): void {
    let payload: { op?: number; d?: Record<string, unknown> | number | null };
    try {
      const text = (Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(new Uint8Array(raw))).toString('utf8');
      payload = JSON.parse(text) as typeof payload;
    } catch {
      return void socket.close(GatewayCloseCodes.DecodeError, 'Error while decoding payload.');
    }
    const d = typeof payload.d === 'object' && payload.d !== null ? payload.d : {};
    switch (payload.op) {
      case GatewayOpcodes.Heartbeat:
        return this.send(socket, { op: GatewayOpcodes.HeartbeatAck });
      case GatewayOpcodes.Identify:
        return this.identify(socket, d);
      case GatewayOpcodes.Resume:
        return this.resume(socket, d);
      case GatewayOpcodes.PresenceUpdate:
      case GatewayOpcodes.RequestGuildMembers:
        return;
      default:
        socket.close(GatewayCloseCodes.UnknownOpcode, 'Unknown opcode.');
    }
  }

  private identify(socket: WebSocket, d: Record<string, unknown>): void {
    if (d.token !== this.host.token)
      return void socket.close(GatewayCloseCodes.AuthenticationFailed, 'Authentication failed.');
    const intents = Number(d.intents ?? 0);
    if (intents & GatewayIntentBits.MessageContent && !this.host.allowMessageContent)
      return void socket.close(GatewayCloseCodes.DisallowedIntents, 'Disallowed intent(s).');
    this.identifies += 1;
    const session: GatewaySession = { id: `session-${this.nextSession++}`, intents, seq: 0, log: [], socket };
    this.sessions.set(session.id, session);
    this.current = session;
    // READY and the guilds after it go to the session that identified, never to the others on the token.
    this.dispatchTo(session, 'READY', {
      ...this.host.readyPayload(),
      session_id: session.id,
      resume_gateway_url: this.host.resumeUrl(),
    });
    for (const guild of this.host.guildCreates()) this.dispatchTo(session, 'GUILD_CREATE', guild);
  }

  private resume(socket: WebSocket, d: Record<string, unknown>): void {
    if (d.token !== this.host.token)
      return void socket.close(GatewayCloseCodes.AuthenticationFailed, 'Authentication failed.');
    const session = this.sessions.get(String(d.session_id));
    if (!session) return this.send(socket, { op: GatewayOpcodes.InvalidSession, d: false });
    this.resumes += 1;
    session.socket = socket;
    this.current = session;
    const seq = Number(d.seq ?? 0);
    // Discord replays what the client has not acknowledged by sequence; the option also replays the last event the
    // client did see, as happens when a socket dies between Discord sending and the client's heartbeat.
    const from = this.host.replayLastOnResume ? seq : seq + 1;
    for (const event of session.log) if (event.s >= from) this.send(socket, event);
    this.send(socket, { op: 0, t: 'RESUMED', s: ++session.seq, d: {} });
  }

  /** Ends a session for good; the newest one left (another process on the token) becomes the current one. */
  private forget(session: GatewaySession): void {
    this.sessions.delete(session.id);
    if (this.current === session) this.current = [...this.sessions.values()].at(-1);
  }

  private send(socket: WebSocket | undefined, payload: unknown): void {
    if (socket && socket.readyState === socket.OPEN) socket.send(JSON.stringify(payload));
  }
}
