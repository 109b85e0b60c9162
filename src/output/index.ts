/** The output side: streaming decoder, output parsers, the next turn's assistant message. */
export { createStreamDecoder, type DecoderOptions, type StreamDecoder } from './decoder.js';
export { createOutputParser, parseAssistantOutput, OutputCollector } from './parser.js';
export { toAssistantMessage, type AssistantMessageOptions } from './message.js';
export { outputFormatOfTemplate, outputFormatOfTokens, promptOpensReasoning } from './detect.js';
export { OUTPUT_FORMATS } from './types.js';
export type { OutputFormat, OutputEvent, OutputParser, OutputParserOptions, ParsedOutput, ParsedToolCall } from './types.js';
