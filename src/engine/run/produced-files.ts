/**
 * The files a run produced: image and audio blocks and binary embedded resources of its succeeded steps' outputs,
 * in plan order. They go to the report writer (images, when its model sees them) and to the chat with the report.
 */
import type { RunFile } from '../messages.ts';
import { base64Bytes, sizeText } from '../text.ts';
import type { Json } from '../types.ts';
import type { DispatchState } from './dispatch-state.ts';

/** One file a step's output carried, base64 and all. */
export type ProducedFile = RunFile;

type JsonObject = { [key: string]: Json };
const isObject = (v: Json | undefined): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);
const str = (v: Json | undefined) => (typeof v === 'string' ? v : undefined);

/** Every file of the run's succeeded steps, in plan order, then block order. */
export function producedFiles(state: DispatchState): ProducedFile[] {
  return state.plan.steps.flatMap((step) => {
    const rt = state.steps[step.id];
    return rt?.status === 'succeeded' ? outputFiles(step.id, rt.output) : [];
  });
}

/** The files of one step's output (an MCP tool result: `{ content: [...] }`). */
export function outputFiles(stepId: string, output: Json | undefined): ProducedFile[] {
  if (!isObject(output) || !Array.isArray(output.content)) return [];
  const files: ProducedFile[] = [];
  for (const block of output.content) {
    if (!isObject(block)) continue;
    const n = files.length + 1;
    if ((block.type === 'image' || block.type === 'audio') && str(block.data)) {
      const mimeType = str(block.mimeType) ?? 'application/octet-stream';
      files.push(file(stepId, `${stepId}-${n}.${extension(mimeType)}`, mimeType, str(block.data) ?? ''));
    } else if (block.type === 'resource' && isObject(block.resource) && str(block.resource.blob)) {
      const r = block.resource;
      const mimeType = str(r.mimeType) ?? 'application/octet-stream';
      const last = (str(r.uri) ?? '')
        .split(/[/\\]/)
        .pop()
        ?.replace(/[^\w.-]/g, '_');
      files.push(file(stepId, last || `${stepId}-${n}.${extension(mimeType)}`, mimeType, str(r.blob) ?? ''));
    }
  }
  return files;
}

/** `chart.png (image/png, 2.9 kB)`: a file in words. */
export function fileText(f: ProducedFile): string {
  return `${f.name} (${f.mimeType}, ${sizeText(f.bytes)})`;
}

function file(stepId: string, name: string, mimeType: string, data: string): ProducedFile {
  return { stepId, name, mimeType, data, bytes: base64Bytes(data) };
}

function extension(mimeType: string): string {
  const sub = mimeType.split('/')[1]?.split(/[;+]/)[0] ?? '';
  if (sub === 'jpeg') return 'jpg';
  if (sub === 'svg') return 'svg';
  return /^[a-z0-9-]{1,10}$/.test(sub) ? sub : 'bin';
}
