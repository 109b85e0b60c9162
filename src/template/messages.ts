import { PromptencError, describeValue } from '../errors.js';

/** OpenAI-shaped chat messages, as agent runtimes and inference servers hold them. */
export interface ToolCall {
  id?: string;
  type?: string;
  function: { name: string; arguments?: string | Record<string, unknown> };
  [key: string]: unknown;
}

export type ContentPart = { type: string; text?: string; [key: string]: unknown };

export interface ChatMessage {
  role: string;
  content?: string | ContentPart[] | null;
  reasoning_content?: string | null;
  /** vLLM's name for reasoning_content (docs/semantics.md). */
  reasoning?: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
  [key: string]: unknown;
}

export interface ToolDefinition {
  type?: string;
  function?: { name: string; description?: string; parameters?: unknown; [key: string]: unknown };
  [key: string]: unknown;
}

function fail(path: string, expected: string, value: unknown): never {
  throw new PromptencError('E_MESSAGES_INVALID', `${path}: expected ${expected}, received ${describeValue(value)}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** forEach that also visits the holes of a sparse array (as undefined), so a hole fails validation. */
function eachSlot<T>(list: readonly T[], fn: (item: T, i: number) => void): void {
  for (let i = 0; i < list.length; i++) fn(list[i] as T, i);
}

/** messages[i].content, when it is not a string. */
function checkContent(i: number, content: unknown, nullable: boolean): void {
  const path = `messages[${i}].content`;
  if (content === null || content === undefined) return;
  if (!Array.isArray(content)) fail(path, nullable ? 'string, array or null' : 'string or array', content);
  eachSlot(content, (part, k) => {
    if (!isPlainObject(part)) fail(`${path}[${k}]`, 'an object with a "type"', part);
    if (typeof part.type !== 'string') fail(`${path}[${k}].type`, 'string', part.type);
    if (part.type === 'text' && typeof part.text !== 'string') fail(`${path}[${k}].text`, 'string', part.text);
  });
}

/**
 * Check messages against the OpenAI chat shape. Only structure is checked:
 * templates decide what a role means, so unknown extra keys pass through.
 * Throws E_MESSAGES_INVALID naming the first bad path.
 * Runs on every render of a session, over the whole conversation: paths are built only on failure
 * (a path string or two per message was ~11 % of an incremental render's allocation at 200 k tokens).
 */
export function validateMessages(messages: unknown): ChatMessage[] {
  if (!Array.isArray(messages)) fail('messages', 'an array of messages', messages);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as unknown;
    if (!isPlainObject(m)) fail(`messages[${i}]`, 'an object', m);
    if (typeof m.role !== 'string') fail(`messages[${i}].role`, 'string', m.role);
    // Any role: transformers and vLLM pass custom roles through (ipython, functions, observation, ...).
    // Content may be null or absent on any role (OpenAI sends null next to tool_calls; vLLM reads it as no parts).
    if (typeof m.content !== 'string') checkContent(i, m.content, m.role === 'assistant');
    for (const key of ['reasoning_content', 'reasoning'] as const) {
      const r = m[key];
      if (r !== undefined && r !== null && typeof r !== 'string') fail(`messages[${i}].${key}`, 'string', r);
    }
    if (m.tool_calls !== undefined && m.tool_calls !== null) {
      if (!Array.isArray(m.tool_calls)) fail(`messages[${i}].tool_calls`, 'array', m.tool_calls);
      const calls = m.tool_calls as unknown[];
      for (let j = 0; j < calls.length; j++) {
        const tc = calls[j];
        if (!isPlainObject(tc)) fail(`messages[${i}].tool_calls[${j}]`, 'an object', tc);
        if (!isPlainObject(tc.function)) fail(`messages[${i}].tool_calls[${j}].function`, 'an object with name and arguments', tc.function);
        if (typeof tc.function.name !== 'string' || tc.function.name === '') {
          fail(`messages[${i}].tool_calls[${j}].function.name`, 'a non-empty string', tc.function.name);
        }
        const args = tc.function.arguments;
        if (args !== undefined && args !== null && typeof args !== 'string' && !isPlainObject(args)) {
          fail(`messages[${i}].tool_calls[${j}].function.arguments`, 'a JSON string or an object', args);
        }
      }
    }
    if (m.role === 'tool' && m.tool_call_id !== undefined && typeof m.tool_call_id !== 'string') {
      fail(`messages[${i}].tool_call_id`, 'string', m.tool_call_id);
    }
  }
  return messages as ChatMessage[];
}

export function validateTools(tools: unknown): ToolDefinition[] | undefined {
  if (tools === undefined || tools === null) return undefined;
  if (!Array.isArray(tools)) fail('tools', 'an array of tool definitions', tools);
  eachSlot(tools, (t, i) => {
    if (!isPlainObject(t)) fail(`tools[${i}]`, 'an object', t);
    if (t.function !== undefined) {
      if (!isPlainObject(t.function)) fail(`tools[${i}].function`, 'an object', t.function);
      if (typeof t.function.name !== 'string') fail(`tools[${i}].function.name`, 'string', t.function.name);
    }
  });
  return tools as ToolDefinition[];
}
