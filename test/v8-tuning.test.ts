/**
 * enableFastTemplates() changes a V8 inline-cache limit for the process (see
 * src/template/v8-tuning.ts): rendering must give the same text with it as without. A
 * child process (the built package, as `npm test` runs tsc first) renders a seeded agent
 * conversation with the flag raised, this process renders it with default flags.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTokenizer } from '../src/index.js';
import { agentConversation } from '../bench/helpers/conversation.mjs';

const root = resolve(import.meta.dirname, '..');
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const CHILD = `
const { enableFastTemplates, loadTokenizer } = await import(${JSON.stringify(resolve(root, 'dist/index.js'))});
const { agentConversation } = await import(${JSON.stringify(resolve(root, 'bench/helpers/conversation.mjs'))});
enableFastTemplates();
enableFastTemplates(); // idempotent
const { createHash } = await import('node:crypto');
const out = {};
for (const model of ['deepseek-v3', 'qwen3']) {
  const tok = await loadTokenizer(model);
  const messages = agentConversation(9, 60, { bigEvery: 7, bigMin: 1000, bigMax: 3000 });
  out[model] = createHash('sha256').update(tok.renderChat(messages) + tok.renderChat(messages, { addGenerationPrompt: false })).digest('hex');
}
console.log(JSON.stringify(out));
`;

describe('enableFastTemplates', () => {
  it('renders the same text as default V8 flags (DeepSeek-V3 and Qwen3 templates, 60-turn agent conversation)', async () => {
    const child = await new Promise<string>((res, rej) =>
      execFile(process.execPath, ['--input-type=module', '-e', CHILD], { cwd: root }, (err, stdout, stderr) =>
        err ? rej(new Error(stderr || String(err))) : res(stdout),
      ),
    );
    const got = JSON.parse(child.trim().split('\n').pop()!) as Record<string, string>;
    for (const model of ['deepseek-v3', 'qwen3'] as const) {
      const tok = await loadTokenizer(model);
      const messages = agentConversation(9, 60, { bigEvery: 7, bigMin: 1000, bigMax: 3000 });
      const want = sha(tok.renderChat(messages) + tok.renderChat(messages, { addGenerationPrompt: false }));
      expect(got[model]).toBe(want);
    }
  });
});
