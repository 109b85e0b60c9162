import { PromptencError, describeValue } from '../errors.js';
import type { ChatOptions } from '../options.js';
import type { ChatMessage } from '../template/messages.js';
import { idList } from './endpoint.js';
import type { ModelRegistry } from './models.js';
import type { Job, LinesResult } from './pool.js';

/** Options of a `--jsonl` run that apply to every record (a record's own fields win). */
export interface LinesOptions {
  count: boolean;
  addSpecialTokens: boolean;
  /** Text mode: special-token text read as text (EncodeOptions.splitSpecialTokens). */
  splitSpecialTokens?: boolean;
  chat?: ChatOptions;
}

function record(line: string, index: number): unknown {
  try {
    return JSON.parse(line);
  } catch (err) {
    throw new PromptencError('E_JSON_INVALID', `line ${index + 1}: is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * One JSONL record in, one out, in the same order: `{"text": ...}` (or a JSON string) for
 * encode, `{"messages": [...], "tools"?: [...]}` (or an array of messages) for chat. Out:
 * `{"ids": [...], "count": n}` or `{"count": n}`, with the record's "id" copied; a bad
 * record gives `{"error": {"code", "message"}}` and the run goes on.
 */
export function encodeLine(models: ModelRegistry, mode: 'text' | 'chat', line: string, index: number, opts: LinesOptions): { line: string; ok: boolean } {
  let id: unknown;
  try {
    const rec = record(line, index);
    const obj = typeof rec === 'object' && rec !== null && !Array.isArray(rec) ? (rec as Record<string, unknown>) : undefined;
    id = obj?.id;
    let ids: Uint32Array;
    if (mode === 'text') {
      const text = typeof rec === 'string' ? rec : obj?.text;
      if (typeof text !== 'string')
        throw new PromptencError('E_ARGUMENT', `line ${index + 1}: expected a JSON string or an object with "text", received ${describeValue(rec)}`);
      ids = models.default.tok.encode(text, { addSpecialTokens: opts.addSpecialTokens, splitSpecialTokens: opts.splitSpecialTokens === true });
    } else {
      const messages = Array.isArray(rec) ? rec : obj?.messages;
      if (!Array.isArray(messages))
        throw new PromptencError(
          'E_MESSAGES_INVALID',
          `line ${index + 1}: expected an array of messages or an object with "messages", received ${describeValue(rec)}`,
        );
      const chat: ChatOptions = { ...opts.chat };
      if (obj?.tools !== undefined) chat.tools = obj.tools as ChatOptions['tools'];
      if (obj?.chat_template_kwargs !== undefined) chat.kwargs = obj.chat_template_kwargs as Record<string, unknown>;
      ids = models.default.tok.encodeChat(messages as ChatMessage[], chat);
    }
    const out: Record<string, unknown> = id !== undefined ? { id } : {};
    if (!opts.count) out.ids = idList(ids);
    out.count = ids.length;
    return { line: JSON.stringify(out), ok: true };
  } catch (err) {
    const e = err instanceof PromptencError ? err : new PromptencError('E_ARGUMENT', (err as Error)?.message ?? String(err));
    return { line: JSON.stringify({ ...(id !== undefined ? { id } : {}), error: { code: e.code, message: e.message } }), ok: false };
  }
}

export function runLines(models: ModelRegistry, job: Job & { kind: 'lines' }): LinesResult {
  const opts = job.options as unknown as LinesOptions & { first: number };
  const out = job.lines.map((line, i) => encodeLine(models, job.mode, line, opts.first + i, opts));
  return { lines: out.map((o) => o.line), failed: out.filter((o) => !o.ok).length };
}
