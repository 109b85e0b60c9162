/**
 * OpenAI-shaped endpoints: GET /v1/models (the list shape vLLM's ModelList also has) and
 * POST /v1/responses/input_tokens, the Responses API preflight count: `{object:
 * "response.input_tokens", input_tokens}` (openai-node src/resources/responses/input-tokens.ts).
 * A Responses request (`input`, `instructions`, flat function `tools`) is turned into the chat
 * messages the model's template reads; a chat request (`messages`) is taken as it is.
 */
import { PromptencError, describeValue } from '../errors.js';
import type { ChatMessage, ToolDefinition } from '../template/messages.js';
import { CHAT_PROPERTIES, encodeChat, sessionFields, type ChatFields } from './chat.js';
import { objectSchema, type Endpoint, type HandlerContext, type Outcome } from './endpoint.js';

const TEXT_PARTS = new Set(['input_text', 'output_text', 'text']);

/**
 * An item's text. Parts are joined with "\n", as vLLM flattens text-only content for a template
 * that reads content as a string (chat_template_content_format "string"): most templates call
 * string methods on content, which a list of parts would fail.
 */
function textOf(content: unknown, where: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content))
    throw new PromptencError('E_REQUEST_INVALID', `${where}: expected a string or a list of content parts, received ${describeValue(content)}`);
  return content
    .map((part, i) => {
      const p = part as { type?: unknown; text?: unknown };
      if (!p || typeof p !== 'object' || !TEXT_PARTS.has(p.type as string) || typeof p.text !== 'string') {
        throw new PromptencError(
          'E_REQUEST_INVALID',
          `${where}[${i}]: only text parts (input_text, output_text) can be counted, received ${describeValue((p as { type?: unknown })?.type ?? p)}`,
        );
      }
      return p.text;
    })
    .join('\n');
}

/** Responses input items → chat messages: messages, function calls (grouped into one assistant turn) and their outputs. */
export function responsesInputToMessages(input: unknown, instructions: unknown): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (typeof instructions === 'string') messages.push({ role: 'system', content: instructions });
  if (input === undefined || input === null) return messages;
  // A string input is "equivalent to a text input with the user role" (the API reference).
  if (typeof input === 'string') return [...messages, { role: 'user', content: input }];
  if (!Array.isArray(input))
    throw new PromptencError('E_REQUEST_INVALID', `input: expected a string or a list of input items, received ${describeValue(input)}`);
  input.forEach((raw, i) => {
    const item = raw as Record<string, unknown>;
    const where = `input[${i}]`;
    if (!item || typeof item !== 'object')
      throw new PromptencError('E_REQUEST_INVALID', `${where}: expected an input item object, received ${describeValue(raw)}`);
    const type = item.type ?? 'message';
    if (type === 'message') {
      if (typeof item.role !== 'string')
        throw new PromptencError('E_REQUEST_INVALID', `${where}.role: expected a string, received ${describeValue(item.role)}`);
      messages.push({ role: item.role, content: textOf(item.content, `${where}.content`) });
    } else if (type === 'function_call') {
      const call = { id: item.call_id as string, type: 'function', function: { name: item.name as string, arguments: item.arguments as string } };
      const last = messages[messages.length - 1];
      if (last && last.role === 'assistant' && Array.isArray(last.tool_calls)) last.tool_calls.push(call);
      // Content "" rather than null: vLLM's string content format also gives "" for no parts,
      // and templates test content with `in` or string methods, which fail on null.
      else messages.push({ role: 'assistant', content: '', tool_calls: [call] });
    } else if (type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.call_id as string, content: textOf(item.output, `${where}.output`) });
    } else {
      throw new PromptencError('E_REQUEST_INVALID', `${where}.type: expected message, function_call or function_call_output, received ${describeValue(type)}`);
    }
  });
  return messages;
}

/** Responses tools are flat (`{type: "function", name, parameters}`); chat templates read the chat shape. */
export function responsesTools(tools: unknown): ToolDefinition[] | undefined {
  if (tools === undefined || tools === null) return undefined;
  if (!Array.isArray(tools)) throw new PromptencError('E_REQUEST_INVALID', `tools: expected a list, received ${describeValue(tools)}`);
  return tools.map((t, i) => {
    const tool = t as Record<string, unknown>;
    if (tool?.function && typeof tool.function === 'object') return tool as ToolDefinition;
    if (tool?.type !== 'function')
      throw new PromptencError('E_REQUEST_INVALID', `tools[${i}].type: only function tools can be counted, received ${describeValue(tool?.type)}`);
    const { type: _type, strict: _strict, ...fn } = tool;
    return { type: 'function', function: fn as { name: string } };
  });
}

const INPUT_TOKENS_SCHEMA = objectSchema({
  ...CHAT_PROPERTIES,
  instructions: { type: ['string', 'null'] },
  input: { type: ['string', 'array', 'null'] },
  reasoning: { type: ['object', 'null'] },
});

function inputTokens(ctx: HandlerContext, body: any): Outcome {
  const model = ctx.models.resolve(body.model);
  const fields: ChatFields = { ...body };
  if (body.messages === undefined) {
    fields.messages = responsesInputToMessages(body.input, body.instructions);
    fields.tools = responsesTools(body.tools);
    const effort = body.reasoning?.effort;
    if (typeof effort === 'string') fields.chat_template_kwargs = { reasoning_effort: effort, ...(body.chat_template_kwargs ?? {}) };
  }
  const enc = encodeChat(model, fields, ctx.sessions);
  return {
    body: { object: 'response.input_tokens', input_tokens: enc.ids.length, ...sessionFields(body, enc) },
    model: model.spec.id,
    tokens: enc.ids.length,
    reused: enc.reused,
  };
}

function listModels(ctx: HandlerContext): Outcome {
  const created = Math.floor(Date.now() / 1000);
  const data = ctx.models.models.map((m) => ({
    id: m.spec.id,
    object: 'model',
    created,
    owned_by: 'promptenc',
    root: m.spec.source,
    parent: null,
    max_model_len: m.maxModelLen,
    backend: m.tok.backend,
  }));
  return { body: { object: 'list', data } };
}

export const openaiEndpoints: Endpoint[] = [
  { method: 'GET', path: '/v1/models', run: listModels },
  { method: 'POST', path: '/v1/responses/input_tokens', schema: INPUT_TOKENS_SCHEMA, run: inputTokens },
];
