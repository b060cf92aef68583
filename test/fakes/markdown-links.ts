/**
 * The links a Markdown text shows, as a CommonMark renderer finds them (the reference parser, `commonmark`): what
 * Slack's `markdown_text` would turn into a link or an image. Slack documents its streamed text as standard Markdown
 * (https://docs.slack.dev/reference/methods/chat.startStream), so a link CommonMark sees is one a reader could click
 * without seeing where it goes. Bare URLs are not counted: they show their own address.
 */
import { Parser } from 'commonmark';

export interface MarkdownLink {
  kind: 'link' | 'image';
  destination: string;
}

export function markdownLinks(markdown: string): MarkdownLink[] {
  const found: MarkdownLink[] = [];
  const walker = new Parser().parse(markdown).walker();
  for (let e = walker.next(); e; e = walker.next()) {
    const { node } = e;
    if (e.entering && (node.type === 'link' || node.type === 'image'))
      found.push({ kind: node.type, destination: node.destination ?? '' });
  }
  return found;
}
