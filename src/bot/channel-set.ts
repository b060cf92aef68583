/**
 * Several chat platforms served by one process (Slack and Discord): the engine sees one channel, and each message
 * goes to the adapter whose conversations it is (a conversation's `channel` names its adapter).
 */
import type { ChannelAdapter, InboundHandler } from '../engine/channel.ts';
import type { OutboundMessage, ReportStream } from '../engine/messages.ts';
import type { Conversation } from '../engine/ports.ts';
import type { Actor, RunStatus } from '../engine/types.ts';

/** The adapters of one process, as one channel. */
export class ChannelSet implements ChannelAdapter {
  readonly name: string;

  constructor(
    readonly adapters: readonly ChannelAdapter[],
    private readonly log: (level: 'warn', message: string) => void,
  ) {
    if (adapters.length === 0) throw new Error('ChannelSet needs at least one adapter');
    this.name = adapters.map((a) => a.name).join('+');
  }

  /** Starts every adapter; if one fails, those already started are stopped and the failure is thrown. */
  async start(handler: InboundHandler): Promise<void> {
    const started: ChannelAdapter[] = [];
    try {
      for (const adapter of this.adapters) {
        await adapter.start(handler);
        started.push(adapter);
      }
    } catch (err) {
      await Promise.allSettled(started.map((a) => a.stop()));
      throw err;
    }
  }

  async stop(): Promise<void> {
    const results = await Promise.allSettled(this.adapters.map((a) => a.stop()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  send(conversation: Conversation, message: OutboundMessage): Promise<void> {
    const adapter = this.adapterOf(conversation);
    if (adapter) return adapter.send(conversation, message);
    this.log('warn', `no channel serves conversations of '${conversation.channel}'; a ${message.kind} was not shown`);
    return Promise.resolve();
  }

  openReport(
    conversation: Conversation,
    report: { runId: string; status: RunStatus; requester: Actor },
  ): ReportStream | null {
    return this.adapterOf(conversation)?.openReport?.(conversation, report) ?? null;
  }

  private adapterOf(conversation: Conversation): ChannelAdapter | undefined {
    return this.adapters.find((a) => a.name === conversation.channel);
  }
}
