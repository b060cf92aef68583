/** Text helpers shared by the cards, the status answers and the report. */
import type { Json } from './types.ts';

/**
 * Text of a step output, for prompts, cards and status answers: every MCP content block in words (`blockText`), else
 * the `structuredContent` as compact JSON, else the whole output as compact JSON. Never base64.
 */
export function outputText(output: Json | undefined): string {
  if (output && typeof output === 'object' && !Array.isArray(output)) {
    if (typeof output.text === 'string') return output.text;
    const content = output.content;
    if (Array.isArray(content)) {
      // Servers that send structuredContent also send it as text (the spec asks them to): the blocks are enough.
      const parts = content.map(blockText).filter((part) => part !== '');
      if (parts.length > 0) return parts.join('\n');
      if (output.structuredContent !== undefined) return JSON.stringify(output.structuredContent);
      return JSON.stringify({ ...output, content: [] });
    }
  }
  return JSON.stringify(output ?? null);
}

/**
 * One MCP content block in words: text as it is; a resource link with its title (or name), URI, type and
 * description; an embedded resource's text under its URI; an image, audio or binary resource as one line of type,
 * size and name, since base64 in a prompt costs tokens and tells a text model nothing.
 */
export function blockText(block: Json): string {
  if (!block || typeof block !== 'object' || Array.isArray(block)) return '';
  const str = (v: Json | undefined) => (typeof v === 'string' ? v : undefined);
  switch (block.type) {
    case 'text':
      return str(block.text) ?? '';
    case 'image':
    case 'audio':
      return `[${block.type}: ${describeBinary(str(block.mimeType), str(block.data))}]`;
    case 'resource_link': {
      const name = str(block.title) ?? str(block.name) ?? 'resource';
      const kind = str(block.mimeType) ? ` (${str(block.mimeType)})` : '';
      const about = str(block.description) ? ` — ${str(block.description)}` : '';
      return `[link: ${name} <${str(block.uri) ?? 'no URI'}>${kind}${about}]`;
    }
    case 'resource': {
      const r = block.resource;
      if (!r || typeof r !== 'object' || Array.isArray(r)) return '[resource]';
      const uri = str(r.uri) ?? 'no URI';
      if (typeof r.text === 'string')
        return `[resource <${uri}>${str(r.mimeType) ? ` (${str(r.mimeType)})` : ''}]\n${r.text}`;
      return `[resource <${uri}>: ${describeBinary(str(r.mimeType), str(r.blob))}]`;
    }
    default:
      return `[${str(block.type) ?? 'unknown'} block]`;
  }
}

/** `image/png, 1.2 kB` from a MIME type and base64 data (its decoded size). */
function describeBinary(mimeType: string | undefined, base64: string | undefined): string {
  return `${mimeType ?? 'unknown type'}, ${sizeText(base64Bytes(base64 ?? ''))}`;
}

/** The decoded size of base64 data, in bytes, without decoding it. */
export function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** A size as people read it: `900 bytes`, `2.9 kB`, `12.0 MB`. */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A run's id as people read it, everywhere it is shown: its first eight characters (the full id stays in links). */
export function shortRunId(runId: string): string {
  return runId.slice(0, 8);
}

/** Cuts text to `max` characters with a note saying how much was left out. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters not shown]`;
}
