// Issue 16's CLI items, through the built CLI (dist/cli/main.js) as a real subprocess.
// Expected prompts come from Python (test/helpers/render_vllm.py), ids from the Rust oracle.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { modelPath, oracleEncode } from './helpers/oracle.js';
import { HAVE_PYTHON_JINJA } from './helpers/py-render.js';
import { pyRenderVllm } from './helpers/py-render-vllm.js';
import { SHARED_DIR } from './helpers/shared-files.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const example = path.join(root, 'examples', 'agent-chat.json');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], input?: string | Buffer): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [cli, ...args], { cwd: root, env: { ...process.env, PROMPTENC_QUIET: '1' } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
    child.stdin!.end(input ?? '');
  });
}

const tmp = mkdtempSync(path.join(tmpdir(), 'promptenc-cli16-'));
const write = (name: string, content: string | Buffer) => {
  const p = path.join(tmp, name);
  writeFileSync(p, content);
  return p;
};
const convo = JSON.parse(readFileSync(example, 'utf8')) as { messages: unknown[]; tools: unknown[] };
const qwenTemplate = (JSON.parse(readFileSync(path.join(path.dirname(modelPath('qwen3')), 'tokenizer_config.json'), 'utf8')) as { chat_template: string })
  .chat_template;

describe.skipIf(!HAVE_PYTHON_JINJA)('promptenc chat --model qwen3 --messages examples/agent-chat.json (the issue example)', () => {
  it('works, and gives Python-with-vLLM-normalization text and the oracle ids, with backend', async () => {
    const r = await run(['chat', '--model', 'qwen3', '--messages', example]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { prompt: string; ids: number[]; count: number; backend: string };
    const py = pyRenderVllm({ template: qwenTemplate, messages: convo.messages, tools: convo.tools, add_generation_prompt: true });
    expect(out.prompt).toBe(py.prompt);
    expect(out.ids).toEqual(await oracleEncode(modelPath('qwen3'), py.prompt!, false));
    expect(out.count).toBe(out.ids.length);
    expect(['native', 'js']).toContain(out.backend);
  });
  it('--messages - reads stdin, and a UTF-8 BOM is accepted (file and stdin)', async () => {
    const want = (await run(['chat', '--model', 'qwen3', '--messages', example, '--format', 'ids'])).stdout;
    const text = readFileSync(example);
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), text]);
    expect((await run(['chat', '--model', 'qwen3', '--messages', '-', '--format', 'ids'], text)).stdout).toBe(want);
    expect((await run(['chat', '--model', 'qwen3', '--messages', '-', '--format', 'ids'], bom)).stdout).toBe(want);
    expect((await run(['chat', '--model', 'qwen3', '--messages', write('bom.json', bom), '--format', 'ids'])).stdout).toBe(want);
  });
  it('--normalize none is transformers: Qwen3 fails on content null, naming the message', async () => {
    const r = await run(['chat', '--model', 'qwen3', '--messages', example, '--normalize', 'none']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^promptenc: E_TEMPLATE: messages\[1\] \(assistant\) \(content is null\): /);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
  it('--format breakdown: the tools row is the tools cost; DeepSeek-V3 says it renders none', async () => {
    const qwen = await run(['chat', '--model', 'qwen3', '--messages', example, '--format', 'breakdown']);
    const row = (out: string, name: string) => out.split('\n').find((l) => l.trimStart().startsWith(name))!;
    const withTools = pyRenderVllm({ template: qwenTemplate, messages: convo.messages, tools: convo.tools, add_generation_prompt: true }).prompt!;
    const without = pyRenderVllm({ template: qwenTemplate, messages: convo.messages, tools: null, add_generation_prompt: true }).prompt!;
    const cost = (await oracleEncode(modelPath('qwen3'), withTools, false)).length - (await oracleEncode(modelPath('qwen3'), without, false)).length;
    expect(row(qwen.stdout, 'tools')).toMatch(new RegExp(`\\s${cost}\\s`));
    const ds = await run(['chat', '--model', 'deepseek-v3', '--messages', example, '--format', 'breakdown']);
    expect(row(ds.stdout, 'tools')).toContain('the template renders none of the tools it was given');
  });
});

describe('promptenc chat: options and templates', () => {
  it('gpt-oss without a template explains --template FILE', async () => {
    const r = await run(['chat', '--model', 'gpt-oss', '--messages', example]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^promptenc: E_TEMPLATE_MISSING: .* has no chat template; pass one with --template FILE\. For gpt-oss that is the harmony template/,
    );
  });
  const shared =
    SHARED_DIR !== undefined && existsSync(path.join(SHARED_DIR, 'templates', 'gpt-oss.jinja'))
      ? path.join(SHARED_DIR, 'templates', 'gpt-oss.jinja')
      : undefined;
  if (!shared) console.warn('SKIP cli-messages.test: ../shared/templates/gpt-oss.jinja is absent (PROMPTENC_SHARED_DIR)');
  it.skipIf(!shared || !HAVE_PYTHON_JINJA)('gpt-oss with --template gpt-oss.jinja: Python text, oracle ids', async () => {
    const r = await run(['chat', '--model', 'gpt-oss', '--messages', example, '--template', shared!]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { prompt: string; ids: number[] };
    const py = pyRenderVllm({ template: readFileSync(shared!, 'utf8'), messages: convo.messages, tools: convo.tools, add_generation_prompt: true });
    // strftime_now: the harmony template prints today's date; Python and the CLI ran the same day.
    expect(out.prompt).toBe(py.prompt);
    expect(out.ids).toEqual(await oracleEncode(modelPath('gpt-oss'), py.prompt!, false));
  });
  it.each([
    ['add_generation_prompt', '--no-generation-prompt'],
    ['chat_template', '--template'],
  ])('--kwargs with "%s" collides with %s', async (key, flag) => {
    const r = await run(['chat', '--model', 'qwen3', '--messages', example, '--kwargs', JSON.stringify({ [key]: false })]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`E_ARGUMENT: --kwargs: "${key}": collides with ${flag}`);
  });
  it('--normalize takes vllm or none only', async () => {
    const r = await run(['chat', '--model', 'qwen3', '--messages', example, '--normalize', 'raw']);
    expect(r.code).toBe(2);
  });
});

describe('promptenc decode', () => {
  it('an out-of-range id is E_IDS_INVALID, not an empty line', async () => {
    const r = await run(['decode', '--model', 'qwen3', '--ids', '9707,999999']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('E_IDS_INVALID: --ids[1]: 999999 is not a token id of this tokenizer');
  });
  it('added-token ids above the vocabulary still decode', async () => {
    const r = await run(['decode', '--model', 'qwen3', '--ids', '151644,9707']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('<|im_start|>Hello\n');
  });
});
