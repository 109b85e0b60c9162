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

const KNOWN_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function', 'ipython']);

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

function checkContent(path: string, content: unknown, nullable: boolean): void {
  if (typeof content === 'string') return;
  if (content === null || content === undefined) {
    if (nullable) return;
    fail(path, 'string or array', content);
  }
  if (!Array.isArray(content)) fail(path, nullable ? 'string, array or null' : 'string or array', content);
  eachSlot(content, (part, i) => {
    if (!isPlainObject(part)) fail(`${path}[${i}]`, 'an object with a "type"', part);
    if (typeof part.type !== 'string') fail(`${path}[${i}].type`, 'string', part.type);
    if (part.type === 'text' && typeof part.text !== 'string') fail(`${path}[${i}].text`, 'string', part.text);
  });
}

/**
 * Check messages against the OpenAI chat shape. Only structure is checked:
 * templates decide what a role means, so unknown extra keys pass through.
 * Throws E_MESSAGES_INVALID naming the first bad path.
 */
export function validateMessages(messages: unknown): ChatMessage[] {
  if (!Array.isArray(messages)) fail('messages', 'an array of messages', messages);
  eachSlot(messages, (m, i) => {
    const at = `messages[${i}]`;
    if (!isPlainObject(m)) fail(at, 'an object', m);
    if (typeof m.role !== 'string') fail(`${at}.role`, 'string', m.role);
    if (!KNOWN_ROLES.has(m.role)) {
      fail(`${at}.role`, `one of ${[...KNOWN_ROLES].join(', ')}`, m.role);
    }
    const hasToolCalls = m.role === 'assistant' && m.tool_calls !== undefined && m.tool_calls !== null;
    // An assistant turn that only calls tools may carry content null, as OpenAI sends it.
    checkContent(`${at}.content`, m.content, m.role === 'assistant');
    if (m.reasoning_content !== undefined && m.reasoning_content !== null && typeof m.reasoning_content !== 'string') {
      fail(`${at}.reasoning_content`, 'string', m.reasoning_content);
    }
    if (m.tool_calls !== undefined && m.tool_calls !== null) {
      if (m.role !== 'assistant') fail(`${at}.tool_calls`, 'no tool_calls on a non-assistant message', m.tool_calls);
      if (!Array.isArray(m.tool_calls)) fail(`${at}.tool_calls`, 'array', m.tool_calls);
      eachSlot(m.tool_calls, (tc, j) => {
        const tp = `${at}.tool_calls[${j}]`;
        if (!isPlainObject(tc)) fail(tp, 'an object', tc);
        if (!isPlainObject(tc.function)) fail(`${tp}.function`, 'an object with name and arguments', tc.function);
        if (typeof tc.function.name !== 'string' || tc.function.name === '') {
          fail(`${tp}.function.name`, 'a non-empty string', tc.function.name);
        }
        const args = tc.function.arguments;
        if (args !== undefined && args !== null && typeof args !== 'string' && !isPlainObject(args)) {
          fail(`${tp}.function.arguments`, 'a JSON string or an object', args);
        }
      });
    }
    if (m.role === 'tool' && m.tool_call_id !== undefined && typeof m.tool_call_id !== 'string') {
      fail(`${at}.tool_call_id`, 'string', m.tool_call_id);
    }
    if (!hasToolCalls && m.role === 'assistant' && m.content === undefined && m.reasoning_content === undefined) {
      fail(`${at}.content`, 'string or array (or tool_calls)', m.content);
    }
  });
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
