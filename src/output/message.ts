/**
 * toAssistantMessage: a parse result → the OpenAI-format assistant message an agent puts back
 * into `messages`, so that the next render shows the model what it wrote (as far as the
 * template keeps it: GLM and Qwen3 templates drop the reasoning of turns before the last user
 * message, DeepSeek's drop it always; see docs/semantics.md).
 */
import type { ChatMessage } from '../template/messages.js';
import type { OutputFormat, ParsedOutput } from './types.js';

export interface AssistantMessageOptions {
  /**
   * `function.arguments` as OpenAI's JSON string (default), or as an object: templates that
   * iterate the arguments (GLM, Qwen3-Coder, gpt-oss's `tojson`) need the object, the way vLLM
   * hands them to the template.
   */
  arguments?: 'string' | 'object';
  /**
   * gpt-oss's template reads the reasoning from `thinking` (which reaches it with renderChat's
   * `normalize: 'none'`: vLLM's preprocessing does not pass it on); the others read `reasoning_content`.
   */
  format?: OutputFormat;
}

export function toAssistantMessage(parsed: ParsedOutput, opts: AssistantMessageOptions = {}): ChatMessage {
  // gpt-oss's template tests `"content" in message` and then searches it, which fails on null.
  const msg: ChatMessage = opts.format === 'gpt-oss' && parsed.content === null ? { role: 'assistant' } : { role: 'assistant', content: parsed.content };
  if (parsed.reasoning !== null) {
    if (opts.format === 'gpt-oss') msg.thinking = parsed.reasoning;
    else msg.reasoning_content = parsed.reasoning;
  }
  if (parsed.toolCalls.length > 0) {
    msg.tool_calls = parsed.toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: opts.arguments === 'object' ? c.arguments : c.argumentsText },
    }));
  }
  return msg;
}
