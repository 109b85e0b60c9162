/**
 * Starts the built CLI's `promptenc serve` as a real subprocess on an ephemeral loopback port
 * (127.0.0.1, --port 0) and talks HTTP to it with node's fetch. `npm test` runs tsc first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = path.join(root, 'dist', 'cli', 'main.js');

export interface TestServer {
  url: string;
  child: ChildProcess;
  /** Log lines (stderr) so far, parsed where they are JSON. */
  logs(): Array<Record<string, unknown>>;
  post(pathname: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  get(pathname: string): Promise<{ status: number; body: any }>;
  /** SIGTERM, then the exit code (bounded: SIGKILL after 20 s). */
  stop(): Promise<number | null>;
}

export async function startServer(args: string[], timeoutMs = 60_000): Promise<TestServer> {
  const child = spawn(process.execPath, [CLI, 'serve', '--host', '127.0.0.1', '--port', '0', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start in ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening: ${stderr}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const parse = async (r: Response) => {
    const text = await r.text();
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  };
  return {
    url,
    child,
    logs: () =>
      stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    async post(pathname, body, headers = {}) {
      const r = await fetch(url + pathname, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: r.status, body: await parse(r), headers: r.headers };
    },
    async get(pathname) {
      const r = await fetch(url + pathname);
      return { status: r.status, body: await parse(r) };
    },
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(killer);
      return code;
    },
  };
}
