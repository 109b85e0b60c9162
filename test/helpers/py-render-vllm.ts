/** Runs test/helpers/render_vllm.py: vLLM's message normalization and content-format detection in Python, then Jinja2 as transformers configures it. */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'render_vllm.py');

export interface VllmRenderRequest {
  template: string;
  messages: unknown[];
  tools?: unknown[] | null;
  add_generation_prompt?: boolean;
  special_tokens?: Record<string, unknown>;
  kwargs?: Record<string, unknown>;
  normalize?: 'vllm' | 'none';
  /** An ISO time that pins strftime_now. */
  now?: string;
}

export interface VllmRenderResult {
  prompt?: string;
  error?: string;
  format: 'string' | 'openai';
}

export function pyRenderVllm(req: VllmRenderRequest): VllmRenderResult {
  return JSON.parse(execFileSync('python3', [script], { input: JSON.stringify(req), maxBuffer: 256 * 1024 * 1024 }).toString('utf8')) as VllmRenderResult;
}

/** Many requests in one Python process (each spawn costs ~0.2 s). */
export function pyRenderVllmBatch(reqs: readonly VllmRenderRequest[]): VllmRenderResult[] {
  return JSON.parse(execFileSync('python3', [script], { input: JSON.stringify(reqs), maxBuffer: 256 * 1024 * 1024 }).toString('utf8')) as VllmRenderResult[];
}

export function pyDetectFormats(templates: readonly string[]): Array<'string' | 'openai'> {
  return pyRenderVllmBatch(templates.map((template) => ({ template, messages: [], detect_only: true }) as VllmRenderRequest)).map((r) => r.format);
}
