/**
 * promptenc's POST /v1/parse: model output (text, or the generated token ids) → the assistant
 * message in OpenAI's chat-completion shape (`choices[0].message` with `content`,
 * `reasoning_content` as vLLM names it, `tool_calls` with JSON-string arguments), plus the
 * format used and the parser's warnings. See src/output/ and docs/server.md.
 */
import { PromptencError } from '../errors.js';
import { promptOpensReasoning } from '../output/detect.js';
import { toAssistantMessage } from '../output/message.js';
import { parseAssistantOutput } from '../output/parser.js';
import { OUTPUT_FORMATS } from '../output/types.js';
import { objectSchema, TOKEN_IDS, type Endpoint, type HandlerContext, type Outcome } from './endpoint.js';

export const PARSE_SCHEMA = objectSchema(
  {
    model: { type: ['string', 'null'] },
    text: { type: 'string' },
    tokens: TOKEN_IDS,
    format: { enum: [...OUTPUT_FORMATS, null] },
    tools: { type: ['array', 'null'] },
    prompt: { type: ['string', 'null'] },
    start_in_reasoning: { type: ['boolean', 'null'] },
  },
  [],
  { oneOf: [{ required: ['text'] }, { required: ['tokens'] }] },
);

function parse(ctx: HandlerContext, body: any): Outcome {
  const model = ctx.models.resolve(body.model);
  const format = body.format ?? model.tok.outputFormat;
  if (format === undefined) {
    throw new PromptencError(
      'E_ARGUMENT',
      `format: the output format of model ${model.spec.id} cannot be told from its chat template; pass one of ${OUTPUT_FORMATS.join(', ')}`,
    );
  }
  const text: string = body.tokens !== undefined ? model.tok.decode(body.tokens) : body.text;
  const startInReasoning = body.start_in_reasoning ?? (typeof body.prompt === 'string' ? promptOpensReasoning(body.prompt) : undefined);
  const parsed = parseAssistantOutput(text, { format, tools: body.tools ?? undefined, startInReasoning });
  const message = toAssistantMessage(parsed);
  const out = {
    object: 'promptenc.parse',
    model: model.spec.id,
    format,
    message: { ...message, reasoning_content: parsed.reasoning, tool_calls: message.tool_calls ?? [] },
    finish_reason: parsed.toolCalls.length > 0 ? 'tool_calls' : 'stop',
    warnings: parsed.warnings,
  };
  return { body: out, model: model.spec.id, tokens: body.tokens?.length };
}

export const parseEndpoints: Endpoint[] = [{ method: 'POST', path: '/v1/parse', schema: PARSE_SCHEMA, run: parse }];
