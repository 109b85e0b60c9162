// The built CLI (dist/cli/main.js) run as a real subprocess; `npm test` runs tsc first.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { oracleEncode, MODELS } from './helpers/oracle.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [cli, ...args], { cwd: root, env: { ...process.env, PROMPTENC_QUIET: '1' } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
    else child.stdin!.end();
  });
}

const tmp = mkdtempSync(path.join(tmpdir(), 'promptenc-cli-'));
const write = (name: string, content: string) => {
  const p = path.join(tmp, name);
  writeFileSync(p, content);
  return p;
};
const deepseekPath = MODELS.find((m) => m.name === 'deepseek-v3')!.path;
const qwenPath = MODELS.find((m) => m.name === 'qwen3')!.path;

describe('promptenc encode / count / decode', () => {
  it('encode --format json prints ids, count and backend; ids match the oracle plus transformers BOS', async () => {
    const text = 'Hello <｜User｜> 世界 12345';
    const r = await run(['encode', '--model', 'deepseek-v3', '--text', text]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    // transformers prepends BOS 0 for DeepSeek-V3 (add_bos_token: true); the tokenizer.json post-processor does not.
    expect(out.ids).toEqual([0, ...(await oracleEncode(deepseekPath, text, false))]);
    expect(out.count).toBe(out.ids.length);
    expect(['native', 'js']).toContain(out.backend);
  });

  it('reads stdin, honours --no-special-tokens and --format ids', async () => {
    const text = 'stdin text\nwith two lines';
    const r = await run(['encode', '--model', 'deepseek-v3', '--no-special-tokens', '--format', 'ids'], text);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split(' ').map(Number)).toEqual(await oracleEncode(deepseekPath, text, false));
  });

  it('reads --file and --tokenizer PATH', async () => {
    const text = 'from a file <|im_start|>user';
    const f = write('in.txt', text);
    const r = await run(['encode', '--tokenizer', qwenPath, '--file', f, '--format', 'json', '--backend', 'js']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.ids).toEqual(await oracleEncode(qwenPath, text, true));
    expect(out.backend).toBe('js');
  });

  it('count equals encode --format count', async () => {
    const text = 'count me please, 你好';
    const a = await run(['count', '--model', 'qwen3', '--text', text]);
    const b = await run(['encode', '--model', 'qwen3', '--text', text, '--format', 'count']);
    expect(a.code).toBe(0);
    expect(a.stdout.trim()).toBe(String((await oracleEncode(qwenPath, text, true)).length));
    expect(b.stdout).toBe(a.stdout);
  });

  it('decode --ids and --skip-special-tokens', async () => {
    const text = 'Hi <|im_start|>there';
    const ids = await oracleEncode(qwenPath, text, false);
    const r = await run(['decode', '--model', 'qwen3', '--ids', ids.join(',')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${text}\n`);
    const s = await run(['decode', '--model', 'qwen3', '--ids', ids.join(','), '--skip-special-tokens']);
    expect(s.stdout).toBe('Hi there\n');
  });

  it('pretty marks special tokens and token boundaries without a TTY', async () => {
    const r = await run(['encode', '--model', 'qwen3', '--text', 'a<|im_start|>b', '--format', 'pretty', '--no-special-tokens']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('⟦<|im_start|>⟧');
    expect(r.stdout).not.toContain('\u001b[');
    expect(r.stdout).toMatch(/3 tokens \(1 special\)/);
  });
});

describe('promptenc chat', () => {
  const convo = {
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'What is 2+2?' },
    ],
  };
  const messagesFile = write('convo.json', JSON.stringify(convo));

  it('--format prompt prints exactly the rendered DeepSeek-V3 prompt', async () => {
    const r = await run(['chat', '--model', 'deepseek-v3', '--messages', messagesFile, '--format', 'prompt']);
    expect(r.code).toBe(0);
    // Written out by hand from the DeepSeek-V3 chat_template in tokenizer_config.json.
    expect(r.stdout).toBe('<｜begin▁of▁sentence｜>You are terse.<｜User｜>What is 2+2?<｜Assistant｜>');
  });

  it('--format json has prompt, ids (oracle, no extra BOS) and count; --no-generation-prompt drops the tail', async () => {
    const r = await run(['chat', '--model', 'deepseek-v3', '--messages', messagesFile, '--format', 'json', '--no-generation-prompt']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.prompt).toBe('<｜begin▁of▁sentence｜>You are terse.<｜User｜>What is 2+2?');
    expect(out.ids).toEqual(await oracleEncode(deepseekPath, out.prompt, false));
    expect(out.ids.filter((x: number) => x === 0)).toHaveLength(1);
    expect(out.count).toBe(out.ids.length);
  });

  it('--template, --kwargs and --tools are passed to the template', async () => {
    const tpl = write(
      't.jinja',
      '{{ greeting }}|{{ tools | length }}|{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}{% if add_generation_prompt %}GO{% endif %}',
    );
    const tools = write('tools.json', JSON.stringify([{ type: 'function', function: { name: 'ls', parameters: {} } }]));
    const r = await run([
      'chat',
      '--model',
      'qwen3',
      '--messages',
      messagesFile,
      '--template',
      tpl,
      '--kwargs',
      '{"greeting":"hey"}',
      '--tools',
      tools,
      '--format',
      'prompt',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('hey|1|system:You are terse.;user:What is 2+2?;GO');
  });

  it('bad messages exit 1 with the error code on one line', async () => {
    const bad = write(
      'bad.json',
      JSON.stringify([
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        { role: 'user', content: 3 },
      ]),
    );
    const r = await run(['chat', '--model', 'deepseek-v3', '--messages', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('E_MESSAGES_INVALID');
    expect(r.stderr).toContain('messages[2].content: expected string or array, received 3 of type number');
  });
});

describe('usage and input errors', () => {
  it.each([
    [['encode', '--text', 'x'], 'missing model'],
    [['encode', '--model', 'qwen3', '--tokenizer', qwenPath, '--text', 'x'], 'both model flags'],
    [['encode', '--model', 'qwen3', '--bogus'], 'unknown flag'],
    [['encode', '--model', 'qwen3', '--format', 'xml', '--text', 'x'], 'bad format'],
    [['chat', '--model', 'qwen3'], 'missing --messages'],
    [['frobnicate'], 'unknown command'],
  ])('%j exits 2 with usage (%s)', async (args) => {
    const r = await run(args as string[]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Usage: promptenc/);
  });

  it.each([
    [['encode', '--model', 'no-such-model', '--text', 'x'], 'E_TOKENIZER_NOT_FOUND'],
    [['decode', '--model', 'qwen3', '--ids', '1,x,3'], 'E_IDS_INVALID'],
    [['encode', '--model', 'qwen3', '--file', '/nonexistent/file.txt'], 'E_IO'],
    [['chat', '--model', 'gpt-4o', '--messages', '__MSG__'], 'E_TEMPLATE_MISSING'],
  ])('%j exits 1 with %s', async (args, code) => {
    const argv = (args as string[]).map((a) => (a === '__MSG__' ? write('ok.json', '[{"role":"user","content":"x"}]') : a));
    const r = await run(argv);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(code as string);
  });
});
