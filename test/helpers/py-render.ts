/**
 * The rendering oracle: Python 3 + Jinja2 configured as transformers configures it
 * (test/helpers/render_chat.py). pyRender runs one request per process; Jinja2Oracle keeps one
 * process for many batched requests (test/helpers/jinja2_oracle.py).
 */
import { type ChildProcessWithoutNullStreams, execFileSync, spawn, spawnSync } from 'node:child_process';
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

const serverScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'jinja2_oracle.py');

/** A request to test/helpers/jinja2_oracle.py (see its docstring). */
export type OracleRequest =
  | ({ kind: 'chat'; now?: string; documents?: unknown[] | null; vllm_arguments?: boolean } & PyRenderRequest)
  | { kind: 'template'; template: string; context?: Record<string, unknown>; now?: string };

/** Jinja2's answer: the text, or the exception it raised (Python class name, message, line when known). */
export type OracleResult = { text: string } | { error: string; type: string; lineno?: number };

/**
 * One long-running Python process (test/helpers/jinja2_oracle.py) answering batches of
 * renders over JSON lines: starting Python per render costs ~40 ms, a batched render ~0.1 ms.
 */
export class Jinja2Oracle {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = '';
  private readonly waiting: Array<{ resolve: (r: OracleResult[]) => void; reject: (e: Error) => void }> = [];
  private exited: Error | undefined;

  constructor() {
    this.child = spawn('python3', [serverScript], { env: { ...process.env, PYTHONIOENCODING: 'utf-8' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    this.child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (let nl = this.buffer.indexOf('\n'); nl >= 0; nl = this.buffer.indexOf('\n')) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        const w = this.waiting.shift();
        if (!w) continue;
        const parsed = JSON.parse(line) as OracleResult[] | { fatal: string };
        if (Array.isArray(parsed)) w.resolve(parsed);
        else w.reject(new Error(`jinja2 oracle: ${parsed.fatal}`));
      }
    });
    this.child.on('exit', (code) => {
      this.exited = new Error(`jinja2 oracle exited with ${code}: ${stderr}`);
      for (const w of this.waiting.splice(0)) w.reject(this.exited);
    });
  }

  /** Renders every request in one round trip; results in the same order. */
  render(requests: OracleRequest[]): Promise<OracleResult[]> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.child.stdin.write(`${JSON.stringify(requests)}\n`);
    });
  }

  async renderOne(request: OracleRequest): Promise<OracleResult> {
    return (await this.render([request]))[0]!;
  }

  close(): void {
    this.child.stdin.end();
  }
}

/** Says once, visibly, why oracle tests are skipped. */
export function warnIfNoPython(what: string): void {
  if (!HAVE_PYTHON_JINJA) console.warn(`skipping ${what}: python3 with jinja2 is not available (Debian: apt-get install python3-jinja2)`);
}
