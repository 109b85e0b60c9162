/** `encode --jsonl` and `chat --jsonl` as real subprocesses: records in, ids or counts out, in order. */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTokenizer } from '../src/index.js';
import { bigText, rng } from '../bench/helpers/conversation.mjs';
import { modelPath, oracleEncode } from './helpers/oracle.js';
import { CLI } from './helpers/server.js';

function run(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
    child.stdin!.end(input ?? '');
  });
}

const tmp = mkdtempSync(path.join(tmpdir(), 'promptenc-jsonl-'));
const parseLines = (s: string) =>
  s
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe('encode --jsonl', () => {
  it('2,000 records through 2 threads: ids from the oracle, in input order, ids copied', async () => {
    const r = rng(21);
    const texts = Array.from({ length: 2000 }, (_, i) => bigText(r, 20 + (i % 50) * 20));
    const file = path.join(tmp, 'texts.jsonl');
    writeFileSync(file, texts.map((text, i) => JSON.stringify({ id: i, text })).join('\n') + '\n');
    const out = await run(['encode', '--model', 'qwen3', '--jsonl', file, '--threads', '2']);
    expect(out.code).toBe(0);
    const lines = parseLines(out.stdout);
    expect(lines).toHaveLength(2000);
    for (const i of [0, 1, 777, 1999]) {
      expect(lines[i].id).toBe(i);
      expect(lines[i].ids).toEqual(await oracleEncode(modelPath('qwen3'), texts[i]!, true));
      expect(lines[i].count).toBe(lines[i].ids.length);
    }
    expect(lines.map((l) => l.id)).toEqual(texts.map((_, i) => i));
  });

  it('reads stdin with "-"; --format count; a bad record is an error line and exit 1', async () => {
    const input = ['"a JSON string"', '{"text": 5}', 'not json', '{"text": "ok"}'].join('\n');
    const out = await run(['encode', '--model', 'deepseek-v3', '--jsonl', '-', '--format', 'count', '--no-special-tokens'], input);
    expect(out.code).toBe(1);
    const lines = parseLines(out.stdout);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toEqual({ count: (await oracleEncode(modelPath('deepseek-v3'), 'a JSON string', false)).length });
    expect(lines[1].error.code).toBe('E_ARGUMENT');
    expect(lines[2].error.code).toBe('E_JSON_INVALID');
    expect(lines[3]).toEqual({ count: (await oracleEncode(modelPath('deepseek-v3'), 'ok', false)).length });
    expect(out.stderr).toMatch(/2 of 4 records failed/);
  });
  it('a model the worker threads cannot load: exit 1 with its error code, without hanging', async () => {
    const missing = path.join(tmp, 'no-such-dir', 'tokenizer.json');
    const out = await run(['encode', '--tokenizer', missing, '--jsonl', '-', '--threads', '2'], '{"text": "hi"}\n');
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/E_TOKENIZER_NOT_FOUND/);
    expect(out.stderr).not.toMatch(/internal error/);
  }, 60_000);
});

describe('chat --jsonl', () => {
  it('conversations in, encodeChat ids out; --no-generation-prompt applies to every record', async () => {
    const tok = await loadTokenizer('qwen3');
    const convos = Array.from({ length: 300 }, (_, i) => [
      { role: 'system', content: `s${i}` },
      { role: 'user', content: `question ${i}` },
    ]);
    const input = convos.map((m, i) => (i % 2 === 0 ? JSON.stringify(m) : JSON.stringify({ id: `c${i}`, messages: m }))).join('\n');
    const out = await run(['chat', '--model', 'qwen3', '--jsonl', '-', '--no-generation-prompt', '--threads', '2'], input);
    expect(out.code).toBe(0);
    const lines = parseLines(out.stdout);
    expect(lines).toHaveLength(300);
    lines.forEach((l, i) => {
      expect(l.ids).toEqual(Array.from(tok.encodeChat(convos[i]!, { addGenerationPrompt: false })));
      if (i % 2 === 1) expect(l.id).toBe(`c${i}`);
    });
  });

  it('--messages and --jsonl together, or neither, is a usage error', async () => {
    expect((await run(['chat', '--model', 'qwen3'])).code).toBe(2);
    expect((await run(['chat', '--model', 'qwen3', '--jsonl', '-', '--messages', 'x.json'])).code).toBe(2);
  });
});
