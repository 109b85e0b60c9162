// `promptenc parse`, the built CLI (dist/cli/main.js) run as a real subprocess; `npm test` runs tsc first.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTokenizer, parseAssistantOutput } from '../src/index.js';
import { GLM_CASES } from './helpers/output-cases.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');

function run(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [cli, 'parse', ...args], { cwd: root, env: { ...process.env, PROMPTENC_QUIET: '1' } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
    child.stdin!.end(input ?? '');
  });
}

const tmp = mkdtempSync(path.join(tmpdir(), 'promptenc-parse-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const write = (name: string, content: string) => {
  const p = path.join(tmp, name);
  writeFileSync(p, content);
  return p;
};

const seed1 = GLM_CASES[0]!;
const seed3 = GLM_CASES[1]!;

describe('promptenc parse', () => {
  it('prints what the user receives (seed example 1), from stdin, - and a FILE', async () => {
    const r = await run(['--format', 'glm47'], seed1.text);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(`${seed1.content}\n`);
    expect((await run(['--format', 'glm47', '-'], seed1.text)).stdout).toBe(`${seed1.content}\n`);
    const file = write('out.txt', seed1.text);
    expect((await run(['--format', 'glm47', file])).stdout).toBe(`${seed1.content}\n`);
    expect((await run(['--format', 'glm47', '--file', file])).stdout).toBe(`${seed1.content}\n`);
  });

  it('--json with --tools: the seed example 3 call and its assistant message', async () => {
    const tools = write('tools.json', JSON.stringify(seed3.tools));
    const r = await run(['--format', 'glm47', '--tools', tools, '--json', '--start-in-reasoning'], seed3.text);
    expect(r.code).toBe(0);
    const got = JSON.parse(r.stdout);
    const want = parseAssistantOutput(seed3.text, { format: 'glm47', tools: seed3.tools, startInReasoning: true });
    expect(got).toMatchObject({ format: 'glm47', ...want });
    expect(got.message).toEqual({
      role: 'assistant',
      content: null,
      reasoning_content: 'I need to run du to inspect the results.',
      tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'run_shell', arguments: '{"cmd": "du -ah . | sort -rh | head -n 5"}' } }],
    });
  });

  it('--stream prints events as JSON lines that fold to the one-shot parse', async () => {
    const r = await run(['--format', 'glm47', '--stream'], seed3.text);
    expect(r.code).toBe(0);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e) => e.type)).toEqual(['reasoning', 'tool_call_start', 'tool_call_delta', 'tool_call_end']);
    expect(events[3].arguments).toEqual({ cmd: 'du -ah . | sort -rh | head -n 5' });
  });

  it('--model: the format from the template, --ids decodes first, --prompt opens reasoning', async () => {
    const tok = await loadTokenizer('qwen3');
    const output = 'hmm\n</think>\n\n<tool_call>\n{"name": "f", "arguments": {"a": "👋"}}\n</tool_call><|im_end|>';
    const ids = Array.from(tok.encode(output, { addSpecialTokens: false }));
    const prompt = write('prompt.txt', `${tok.renderChat([{ role: 'user', content: 'hi' }])}<think>\n`);
    const r = await run(['--model', 'qwen3', '--ids', '--json', '--prompt', prompt], ids.join(','));
    expect(r.code).toBe(0);
    const got = JSON.parse(r.stdout);
    expect(got).toMatchObject({ format: 'qwen3', reasoning: 'hmm', content: null, warnings: [] });
    expect(got.toolCalls[0]).toMatchObject({ name: 'f', arguments: { a: '👋' } });
    const s = await run(['--model', 'qwen3', '--ids', '--stream', '--start-in-reasoning'], ids.join(' '));
    // One id at a time: the reasoning comes in pieces; the call whole at its end.
    const types = s.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).type as string);
    expect(types.filter((t, i) => t !== types[i - 1])).toEqual(['reasoning', 'tool_call_start', 'tool_call_delta', 'tool_call_end']);
    expect(types.filter((t) => t === 'reasoning').length).toBeGreaterThan(1);
  });

  it('warnings go to stderr; bad usage exits 2, an unknown format is refused, E_ARGUMENT exits 1', async () => {
    const w = await run(['--format', 'qwen3'], 'x<tool_call>\n{"name": ');
    expect(w.code).toBe(0);
    expect(w.stdout).toBe('x<tool_call>\n{"name":\n');
    expect(w.stderr).toContain('warning: an unfinished tool call');
    expect((await run([], 'x')).code).toBe(2);
    expect((await run(['--format', 'nope'], 'x')).code).toBe(2);
    const noFormat = await run(['--model', 'llama3'], 'x');
    expect(noFormat.code).toBe(2);
    expect(noFormat.stderr).toContain('pass --format');
    const badTools = await run(['--format', 'glm47', '--tools', write('bad.json', '{"x": 1}')], 'x');
    expect(badTools.code).toBe(1);
    expect(badTools.stderr).toContain('E_ARGUMENT');
  });
});
