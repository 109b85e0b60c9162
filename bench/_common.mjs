// Shared helpers of the bench suite (not a benchmark itself). Every bench file imports the
// built library from ../dist, so run `npx tsc -p tsconfig.json` first (run-all.mjs does).
import { spawn } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const benchDir = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(benchDir, '..');

/** `--json-out FILE` → FILE; other flags are ignored. */
export function jsonOutPath(argv = process.argv) {
  const i = argv.indexOf('--json-out');
  return i >= 0 ? argv[i + 1] : undefined;
}

export function writeJson(file, data) {
  if (!file) return;
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}

export function envNumber(name, fallback) {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}: expected a positive number, received ${JSON.stringify(v)}`);
  return n;
}

export function machine() {
  return {
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.cpus().length,
    node: process.version,
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

export function table(headers, rows) {
  const esc = (c) => String(c ?? '').replace(/\|/g, '\\|');
  return [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n');
}

/** The middle element (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

export const f = (x, d = 1) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '–');

/**
 * Run `node script args…` and collect its JSON lines on stdout. When no line arrives for
 * `timeoutMs`, the child (and only it, by pid) is killed and the result says so. This is how
 * peers that go quadratic are capped without hanging the suite.
 */
export function runChild(script, args, { timeoutMs = 10_000, firstTimeoutMs = timeoutMs, env = {} } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: root,
      env: { ...process.env, PROMPTENC_QUIET: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines = [];
    let buf = '';
    let stderr = '';
    let timedOut = false;
    let timer;
    const arm = (ms = timeoutMs) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, ms);
    };
    arm(firstTimeoutMs);
    child.stdout.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line.startsWith('{')) {
          lines.push(JSON.parse(line));
          arm();
        }
      }
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ lines, timedOut, code, stderr: stderr.trim() });
    });
  });
}
