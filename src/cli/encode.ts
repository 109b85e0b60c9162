import { Command, Option } from 'commander';
import { addModelOptions, loadFromFlags, sourceFromFlags, readStdin, readTextFile, writeOut, UsageError, type ModelFlags } from './common.js';
import { formatPretty } from './pretty.js';
import { runJsonl } from './jsonl.js';

interface EncodeFlags extends ModelFlags {
  text?: string;
  file?: string;
  specialTokens: boolean;
  splitSpecialTokens?: boolean;
  format: 'json' | 'ids' | 'count' | 'pretty';
  jsonl?: string;
  threads?: string;
}

export async function runEncode(flags: EncodeFlags): Promise<void> {
  if (flags.text !== undefined && flags.file !== undefined) throw new UsageError('use either --text or --file, not both');
  if (flags.jsonl !== undefined) {
    if (flags.text !== undefined || flags.file !== undefined) throw new UsageError('use --jsonl alone, without --text or --file');
    return runJsonl({
      input: flags.jsonl,
      mode: 'text',
      source: sourceFromFlags(flags),
      backend: flags.backend ?? 'auto',
      encoding: flags.encoding,
      count: flags.format === 'count',
      addSpecialTokens: flags.specialTokens,
      splitSpecialTokens: flags.splitSpecialTokens === true,
      threads: flags.threads,
    });
  }
  const tok = await loadFromFlags(flags);
  const text = flags.text ?? (flags.file !== undefined ? await readTextFile(flags.file, '--file') : await readStdin());
  const opts = { addSpecialTokens: flags.specialTokens, splitSpecialTokens: flags.splitSpecialTokens === true };
  switch (flags.format) {
    case 'count':
      writeOut(String(tok.count(text, opts)));
      return;
    case 'ids':
      writeOut(Array.from(tok.encode(text, opts)).join(' '));
      return;
    case 'pretty':
      process.stdout.write(formatPretty(tok, tok.encode(text, opts), Boolean(process.stdout.isTTY)));
      return;
    default: {
      const ids = tok.encode(text, opts);
      writeOut(JSON.stringify({ ids: Array.from(ids), count: ids.length, backend: tok.backend }));
    }
  }
}

function textOptions(cmd: Command): Command {
  return addModelOptions(cmd)
    .option('--text <str>', 'the text to encode')
    .option('--file <path>', 'read the text from a file (default: stdin)')
    .option('--no-special-tokens', 'do not add BOS/EOS (as tokenizer(text, add_special_tokens=False))')
    .option('--split-special-tokens', "read special-token text in the input as text (transformers' split_special_tokens=True)")
    .option('--jsonl <file>', 'JSONL records in ("-" for stdin), one {"ids","count"} line out per record, on worker threads')
    .option('--threads <n>', 'worker threads for --jsonl (default: cores - 1, at least 1)');
}

export function encodeCommand(): Command {
  return textOptions(new Command('encode').description('encode text into token ids'))
    .addOption(new Option('--format <fmt>', 'output format').choices(['json', 'ids', 'count', 'pretty']).default('json'))
    .action((flags: EncodeFlags) => runEncode(flags));
}

export function countCommand(): Command {
  return textOptions(new Command('count').description('count the tokens of a text (encode --format count)')).action((flags: EncodeFlags) =>
    runEncode({ ...flags, format: 'count' }),
  );
}
