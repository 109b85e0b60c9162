import { Command } from 'commander';
import { PromptencError } from '../errors.js';
import type { PromptTokenizer } from '../tokenizer.js';
import { addModelOptions, loadFromFlags, readStdin, readTextFile, writeOut, UsageError, type ModelFlags } from './common.js';

interface DecodeFlags extends ModelFlags {
  ids?: string;
  file?: string;
  skipSpecialTokens?: boolean;
}

/** IDs as "1,2,3", "1 2 3", or a JSON array / {"ids": [...]} (what `encode --format json` prints). */
export function parseIds(text: string, where: string): number[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (err) {
      throw new PromptencError('E_IDS_INVALID', `${where}: not valid JSON: ${(err as Error).message}`);
    }
    const list = Array.isArray(parsed) ? parsed : (parsed as { ids?: unknown }).ids;
    if (!Array.isArray(list)) throw new PromptencError('E_IDS_INVALID', `${where}: expected a JSON array of ids or {"ids": [...]}`);
    return list as number[];
  }
  if (trimmed === '') return [];
  return trimmed.split(/[\s,]+/).map((s, i) => {
    if (!/^\d+$/.test(s)) throw new PromptencError('E_IDS_INVALID', `${where}[${i}]: expected a non-negative integer token id, received ${JSON.stringify(s)}`);
    return Number(s);
  });
}

/**
 * Every id must name a token: the library's decode skips unknown ids as HF does, which on the
 * command line printed an empty line for a typo. Models without a vocabulary table are not checked.
 */
export function checkIdsInRange(tok: PromptTokenizer, ids: readonly number[], where: string): void {
  const size = tok.impl.vocabulary?.size;
  if (size === undefined) return;
  const maxAdded = Math.max(-1, ...tok.addedTokens.keys());
  ids.forEach((id, i) => {
    if (id < size || tok.addedTokens.has(id)) return;
    throw new PromptencError(
      'E_IDS_INVALID',
      `${where}[${i}]: ${id} is not a token id of this tokenizer (the vocabulary is 0-${size - 1}${maxAdded >= size ? `, added tokens up to ${maxAdded}` : ''})`,
    );
  });
}

export function decodeCommand(): Command {
  return addModelOptions(new Command('decode').description('decode token ids into text'))
    .option('--ids <list>', 'comma-separated token ids, e.g. 1,2,3')
    .option('--file <path>', 'read ids from a file (default: stdin)')
    .option('--skip-special-tokens', 'drop special tokens')
    .action(async (flags: DecodeFlags) => {
      if (flags.ids !== undefined && flags.file !== undefined) throw new UsageError('use either --ids or --file, not both');
      const tok = await loadFromFlags(flags);
      const raw = flags.ids ?? (flags.file !== undefined ? await readTextFile(flags.file, '--file') : await readStdin());
      const where = flags.ids !== undefined ? '--ids' : 'ids';
      const ids = parseIds(raw, where);
      checkIdsInRange(tok, ids, where);
      writeOut(tok.decode(ids, { skipSpecialTokens: flags.skipSpecialTokens === true }));
    });
}
