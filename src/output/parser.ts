/**
 * parseAssistantOutput and createOutputParser: model output text → reasoning, content and tool
 * calls, one-shot or streaming. The one-shot parse is the stream fed the whole text, so the two
 * agree by construction; output-parse-stream.test.ts checks every split anyway.
 */
import { PromptencError, describeValue } from '../errors.js';
import { deepSeekSpec } from './deepseek.js';
import { glmSpec } from './glm.js';
import { HarmonyParser } from './harmony.js';
import { coderSpec, hermesSpec } from './qwen.js';
import { RegionParser } from './stream.js';
import { OUTPUT_FORMATS, type OutputEvent, type OutputFormat, type OutputParser, type OutputParserOptions, type ParsedOutput } from './types.js';

function checkOptions(opts: unknown, where: string): OutputParserOptions {
  if (opts === null || typeof opts !== 'object')
    throw new PromptencError('E_ARGUMENT', `${where}: expected an object with a format, received ${describeValue(opts)}`);
  const o = opts as Record<string, unknown>;
  if (!OUTPUT_FORMATS.includes(o.format as OutputFormat)) {
    throw new PromptencError('E_ARGUMENT', `${where}.format: expected one of ${OUTPUT_FORMATS.join(', ')}, received ${describeValue(o.format)}`);
  }
  if (o.tools !== undefined && o.tools !== null && !Array.isArray(o.tools)) {
    throw new PromptencError('E_ARGUMENT', `${where}.tools: expected an array of tool definitions, received ${describeValue(o.tools)}`);
  }
  if (o.startInReasoning !== undefined && typeof o.startInReasoning !== 'boolean') {
    throw new PromptencError('E_ARGUMENT', `${where}.startInReasoning: expected a boolean, received ${describeValue(o.startInReasoning)}`);
  }
  return o as unknown as OutputParserOptions;
}

/** A streaming parser: push(textDelta) → events, end() → the last events. */
export function createOutputParser(opts: OutputParserOptions): OutputParser {
  const o = checkOptions(opts, 'options');
  const tools = o.tools ?? undefined;
  const inner = ((): OutputParser => {
    switch (o.format) {
      case 'gpt-oss':
        return new HarmonyParser();
      case 'glm45':
      case 'glm47':
        return new RegionParser(glmSpec(tools), o.startInReasoning);
      case 'qwen3':
        return new RegionParser(hermesSpec(), o.startInReasoning);
      case 'qwen3-coder':
        return new RegionParser(coderSpec(tools), o.startInReasoning);
      case 'deepseek-v3':
      case 'deepseek-v3.1':
      case 'deepseek-r1':
        return new RegionParser(deepSeekSpec(o.format), o.startInReasoning);
    }
  })();
  let ended = false;
  return {
    push(text: string): OutputEvent[] {
      if (ended) throw new PromptencError('E_ARGUMENT', 'parser.push: the parser has ended; create a new one');
      if (typeof text !== 'string') throw new PromptencError('E_ARGUMENT', `parser.push(text): expected a string, received ${describeValue(text)}`);
      return inner.push(text);
    },
    end(): OutputEvent[] {
      if (ended) return [];
      ended = true;
      return inner.end();
    },
  };
}

/** Fold events into a ParsedOutput (what a client does with the stream). */
export class OutputCollector {
  private reasoning: string | null = null;
  private content: string | null = null;
  private readonly calls: ParsedOutput['toolCalls'] = [];
  private readonly warnings: string[] = [];

  add(events: readonly OutputEvent[]): this {
    for (const e of events) {
      switch (e.type) {
        case 'reasoning':
          this.reasoning = (this.reasoning ?? '') + e.text;
          break;
        case 'content':
          this.content = (this.content ?? '') + e.text;
          break;
        case 'tool_call_start':
          this.calls[e.index] = { id: e.id, name: e.name, arguments: {}, argumentsText: '' };
          break;
        case 'tool_call_delta':
          this.calls[e.index]!.argumentsText += e.argumentsText;
          break;
        case 'tool_call_end':
          this.calls[e.index]!.arguments = e.arguments;
          break;
        case 'warning':
          this.warnings.push(e.message);
          break;
      }
    }
    return this;
  }

  result(): ParsedOutput {
    return { reasoning: this.reasoning, content: this.content, toolCalls: this.calls.slice(), warnings: this.warnings.slice() };
  }
}

/** Model output (decoded with special tokens kept) → reasoning, content, tool calls and warnings. */
export function parseAssistantOutput(text: string, opts: OutputParserOptions): ParsedOutput {
  if (typeof text !== 'string') throw new PromptencError('E_ARGUMENT', `text: expected the model output as a string, received ${describeValue(text)}`);
  const parser = createOutputParser(opts);
  return new OutputCollector().add(parser.push(text)).add(parser.end()).result();
}
