import { PromptencError, describeValue } from '../errors.js';
import type { ChatOptions } from '../options.js';
import type { ChatMessage, ToolDefinition } from '../template/messages.js';
import type { ServedModel } from './models.js';
import type { SessionStore } from './sessions.js';

/** The chat fields vLLM's TokenizeChatRequest / ChatCompletionRequest and llama.cpp's /apply-template share. */
export interface ChatFields {
  messages: ChatMessage[];
  tools?: ToolDefinition[] | null;
  documents?: unknown[] | null;
  add_generation_prompt?: boolean;
  continue_final_message?: boolean;
  add_special_tokens?: boolean;
  chat_template?: string | null;
  chat_template_kwargs?: Record<string, unknown> | null;
  session_id?: string;
  /** promptenc's: 'vllm' (default) normalizes messages as vLLM does, 'none' passes them as given (transformers). */
  normalize?: 'vllm' | 'none';
}

const NULLABLE_OBJECT = { type: ['object', 'null'] };

/** JSON-schema properties of ChatFields (vLLM's protocol.py field list; the message shape itself is the library's to check). */
export const CHAT_PROPERTIES = {
  model: { type: ['string', 'null'] },
  messages: { type: 'array', items: { type: 'object', required: ['role'], properties: { role: { type: 'string' } } } },
  tools: { type: ['array', 'null'], items: { type: 'object' } },
  documents: { type: ['array', 'null'], items: { type: 'object' } },
  add_generation_prompt: { type: 'boolean' },
  continue_final_message: { type: 'boolean' },
  add_special_tokens: { type: 'boolean' },
  chat_template: { type: ['string', 'null'] },
  chat_template_kwargs: NULLABLE_OBJECT,
  session_id: { type: 'string', minLength: 1, maxLength: 256 },
  normalize: { enum: ['vllm', 'none'] },
} as const;

/** Python's str.isspace() set, which str.strip() removes (JS trim() differs on \x1c-\x1f and \x85). */
const PY_SPACE = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const LEADING = new RegExp(`^[${PY_SPACE}]+`);
const TRAILING = new RegExp(`[${PY_SPACE}]+$`);

/**
 * transformers' continue_final_message (render_jinja_template in chat_template_utils.py): cut
 * the rendered prompt right after the final message's text, so the model continues that
 * message. The text is the message's string content or its last text part.
 */
export function cutAfterFinalMessage(rendered: string, messages: ChatMessage[]): string {
  const last = messages[messages.length - 1];
  let final: unknown = last?.content;
  if (Array.isArray(final)) {
    const part = [...final].reverse().find((p) => p && typeof p === 'object' && 'text' in p);
    if (!part) throw new PromptencError('E_ARGUMENT', 'continue_final_message: the final message has no text to continue');
    final = (part as { text: unknown }).text;
  }
  if (typeof final !== 'string')
    throw new PromptencError('E_ARGUMENT', `continue_final_message: expected the final message's content to be text, received ${describeValue(final)}`);
  const stripped = final.replace(LEADING, '').replace(TRAILING, '');
  const at = rendered.lastIndexOf(stripped);
  if (at < 0) {
    throw new PromptencError(
      'E_TEMPLATE',
      'continue_final_message: the final message does not appear in the rendered chat (the template changed or dropped part of it)',
    );
  }
  const lstripped = final.replace(LEADING, '');
  return rendered.slice(at, at + lstripped.length) === final ? rendered.slice(0, at + lstripped.length) : rendered.slice(0, at + stripped.length);
}

export function chatOptions(model: ServedModel, f: ChatFields): ChatOptions {
  const addGenerationPrompt = f.add_generation_prompt ?? true;
  if (f.continue_final_message === true && addGenerationPrompt) {
    // vLLM's TokenizeChatRequest.check_generation_prompt, and transformers refuses the pair too.
    throw new PromptencError(
      'E_ARGUMENT',
      'continue_final_message: cannot set both `continue_final_message` and `add_generation_prompt` to true (add_generation_prompt defaults to true)',
    );
  }
  const kwargs = { ...(f.chat_template_kwargs ?? {}) };
  if (f.documents != null) kwargs.documents = f.documents;
  return {
    tools: f.tools ?? undefined,
    addGenerationPrompt,
    chatTemplate: f.chat_template ?? model.spec.chatTemplate,
    kwargs,
    ...(f.normalize !== undefined ? { normalize: f.normalize } : {}),
  };
}

export interface ChatEncoding {
  ids: Uint32Array;
  prompt: string;
  /** How many leading ids were kept from an earlier request (session_id or a recognized prefix; 0 on a miss). */
  reused?: number;
}

/**
 * The ids of a chat request: `encode(render(messages), add_special_tokens)`, as vLLM tokenizes
 * a chat prompt. With a session_id (and no options that a session does not cover) the
 * conversation is encoded incrementally from that session's previous request; without one, from
 * a kept conversation whose messages begin this request's. A miss is a full encode, so the ids
 * never depend on which process holds the session.
 */
export function encodeChat(model: ServedModel, f: ChatFields, sessions: SessionStore | undefined): ChatEncoding {
  const opts = chatOptions(model, f);
  const sessionable = sessions !== undefined && f.continue_final_message !== true && f.add_special_tokens !== true;
  if (sessionable && f.session_id !== undefined) return sessions.encodeChat(model, f.session_id, f.messages, opts);
  if (sessionable && f.session_id === undefined && sessions.prefixCache) return sessions.encodeChatByPrefix(model, f.messages, opts);
  let prompt = model.tok.renderChat(f.messages, opts);
  if (f.continue_final_message === true) prompt = cutAfterFinalMessage(prompt, f.messages);
  const ids = model.tok.encode(prompt, { addSpecialTokens: f.add_special_tokens === true });
  return f.session_id !== undefined ? { ids, prompt, reused: 0 } : { ids, prompt };
}

/** The session fields of a response: present only when the request sent a session_id. */
export function sessionFields(f: { session_id?: string }, enc: ChatEncoding): Record<string, unknown> {
  return f.session_id === undefined ? {} : { session_id: f.session_id, reused_tokens: enc.reused ?? 0 };
}
