import { Command, Option } from 'commander';
import { PromptencError, describeValue } from '../errors.js';
import { createOutputParser, parseAssistantOutput } from '../output/parser.js';
import { OUTPUT_FORMATS, type OutputFormat, type OutputParserOptions } from '../output/types.js';
import { toAssistantMessage } from '../output/message.js';
import { promptOpensReasoning } from '../output/detect.js';
import { addModelOptions, loadFromFlags, readJsonFile, readStdin, readTextFile, writeOut, UsageError, type ModelFlags } from './common.js';
import { parseIds } from './decode.js';

interface ParseFlags extends ModelFlags {
  format?: OutputFormat;
  tools?: string;
  file?: string;
  json?: boolean;
  stream?: boolean;
  ids?: boolean;
  prompt?: string;
  startInReasoning?: boolean;
}

/** The tools file: an OpenAI tools array, or a request body with `tools`. */
async function readTools(path: string): Promise<unknown[]> {
  const v = await readJsonFile(path, '--tools');
  const list = Array.isArray(v) ? v : v !== null && typeof v === 'object' ? (v as { tools?: unknown }).tools : undefined;
  if (!Array.isArray(list))
    throw new PromptencError('E_ARGUMENT', `--tools: expected a JSON array of tools (or an object with "tools"), received ${describeValue(v)}`);
  return list;
}

/**
 * promptenc parse: model output → what the user receives (default), the parsed JSON (--json),
 * or the stream's events as JSON lines as the input arrives (--stream).
 */
export function parseCommand(): Command {
  return addModelOptions(new Command('parse').description('parse model output into reasoning, content and tool calls'))
    .addOption(new Option('--format <format>', 'the output format (default: from the model)').choices([...OUTPUT_FORMATS]))
    .option('--tools <file>', 'the request tools (JSON): their schemas type argument values')
    .option('--file <path>', 'read the output from a file (default: stdin, or the FILE argument)')
    .option('--json', 'print the parsed result as JSON: reasoning, content, tool calls, warnings, and the assistant message')
    .option('--stream', 'read stdin as it comes and print the parser events, one JSON object per line')
    .option('--ids', 'the input is token ids (as `decode` takes them); needs --model or --tokenizer')
    .option('--prompt <file>', 'the rendered prompt: when it ends with <think>, the output starts in reasoning')
    .option('--start-in-reasoning', 'the output starts inside reasoning (the prompt opened <think>)')
    .argument('[file]', 'the output file, or - for stdin')
    .action(async (file: string | undefined, flags: ParseFlags) => {
      if (file !== undefined && flags.file !== undefined) throw new UsageError('use either --file or a FILE argument, not both');
      const path = flags.file ?? (file === '-' ? undefined : file);
      const hasModel = flags.model !== undefined || flags.tokenizer !== undefined;
      if (!hasModel && flags.format === undefined) throw new UsageError('one of --model NAME, --tokenizer PATH or --format FORMAT is required');
      if (flags.ids && !hasModel) throw new UsageError('--ids needs --model or --tokenizer (to decode the ids)');
      if (flags.stream && path !== undefined) throw new UsageError('--stream reads stdin');
      const tok = hasModel ? await loadFromFlags(flags) : undefined;
      const format = flags.format ?? tok?.outputFormat;
      if (format === undefined)
        throw new UsageError(`the output format cannot be told from this model's chat template; pass --format (${OUTPUT_FORMATS.join(', ')})`);
      const tools = flags.tools !== undefined ? await readTools(flags.tools) : undefined;
      const prompt = flags.prompt !== undefined ? await readTextFile(flags.prompt, '--prompt') : undefined;
      const startInReasoning = flags.startInReasoning === true ? true : prompt !== undefined ? promptOpensReasoning(prompt) : undefined;
      const opts: OutputParserOptions = { format, tools, startInReasoning };

      if (flags.stream) {
        const parser = createOutputParser(opts);
        const decoder = flags.ids ? undefined : new TextDecoder('utf-8');
        const out = (events: unknown[]) => {
          for (const e of events) process.stdout.write(`${JSON.stringify(e)}\n`);
        };
        if (flags.ids) {
          const ids = parseIds(await readStdin(), 'ids');
          const d = tok!.createDecoder();
          for (const id of ids) out(parser.push(d.push([id])));
          out(parser.push(d.flush()));
        } else {
          for await (const chunk of process.stdin) out(parser.push(decoder!.decode(chunk as Buffer, { stream: true })));
          out(parser.push(decoder!.decode()));
        }
        out(parser.end());
        return;
      }

      const raw = path !== undefined ? await readTextFile(path, '--file') : await readStdin();
      const text = flags.ids ? tok!.decode(parseIds(raw, 'ids')) : raw;
      const parsed = parseAssistantOutput(text, opts);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ format, ...parsed, message: toAssistantMessage(parsed, { format }) }, null, 2)}\n`);
        return;
      }
      for (const w of parsed.warnings) process.stderr.write(`promptenc: warning: ${w}\n`);
      writeOut(parsed.content ?? '');
    });
}
