/** Runs test/helpers/render_chat.py (Python 3 + Jinja2, configured as transformers): the rendering oracle. */
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'render_chat.py');

export const HAVE_PYTHON_JINJA = spawnSync('python3', ['-c', 'import jinja2'], { stdio: 'ignore' }).status === 0;

export interface PyRenderRequest {
  template: string;
  messages: unknown[];
  tools?: unknown[] | null;
  add_generation_prompt?: boolean;
  continue_final_message?: boolean;
  special_tokens?: Record<string, string>;
  kwargs?: Record<string, unknown>;
}

export function pyRender(req: PyRenderRequest): string {
  const out = JSON.parse(execFileSync('python3', [script], { input: JSON.stringify(req), maxBuffer: 256 * 1024 * 1024 }).toString('utf8')) as {
    prompt?: string;
    error?: string;
  };
  if (out.error !== undefined) throw new Error(`python render failed: ${out.error}`);
  return out.prompt!;
}
