/**
 * Where tiktoken rank files come from and what they mean: OpenAI's encodings by name, and a
 * Hugging Face model directory whose tokenizer.model is a rank file (GLM-4's
 * ChatGLM4Tokenizer). Each becomes the TokenizerFiles that every other layer already reads
 * (see ./tiktoken-model.ts for the conversion).
 */
import { open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { describeValue, PromptencError } from './errors.js';
import { CL100K_REGEX, O200K_REGEX } from './families.js';
import { looksLikeTiktokenRanks, parseTiktokenRanks, tiktokenTokenizerJson, type TiktokenModelSpec, type TiktokenSplit } from './tiktoken-model.js';
import type { TokenizerJson } from './tokenizer-json.js';

/** GPT-2's pattern = HF ByteLevel's own regex (r50k_base, p50k_base, p50k_edit). */
const GPT2: TiktokenSplit = { kind: 'gpt2' };

/**
 * OpenAI's encodings as tiktoken defines them (tiktoken_ext/openai_public.py: pat_str,
 * special_tokens, and the sha256 of each published rank file). The patterns are the exact
 * strings both backends know (./families.ts): cl100k_base's is GLM-4's, o200k_base's is
 * GPT-4o's; tiktoken's newer spelling of cl100k (possessive quantifiers, `\s++$`) matches
 * the same pieces.
 */
export const TIKTOKEN_ENCODINGS: Readonly<Record<string, { split: TiktokenSplit; specials: Readonly<Record<string, number>>; sha256: string }>> = {
  r50k_base: {
    split: GPT2,
    specials: { '<|endoftext|>': 50256 },
    sha256: '306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930',
  },
  p50k_base: {
    split: GPT2,
    specials: { '<|endoftext|>': 50256 },
    sha256: '94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069',
  },
  p50k_edit: {
    split: GPT2,
    specials: { '<|endoftext|>': 50256, '<|fim_prefix|>': 50281, '<|fim_middle|>': 50282, '<|fim_suffix|>': 50283 },
    sha256: '94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069',
  },
  cl100k_base: {
    split: { kind: 'split', regex: CL100K_REGEX },
    specials: { '<|endoftext|>': 100257, '<|fim_prefix|>': 100258, '<|fim_middle|>': 100259, '<|fim_suffix|>': 100260, '<|endofprompt|>': 100276 },
    sha256: '223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7',
  },
  o200k_base: {
    split: { kind: 'split', regex: O200K_REGEX },
    specials: { '<|endoftext|>': 199999, '<|endofprompt|>': 200018 },
    sha256: '446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d',
  },
};

/** What readTokenizerFiles returns for a rank file (the fields of load.ts TokenizerFiles). */
export interface TiktokenFiles {
  source: string;
  tokenizerPath: string;
  tokenizerJson: TokenizerJson;
  tokenizerConfig: Record<string, unknown>;
  chatTemplate?: string | Array<{ name: string; template: string }>;
}

/**
 * tokenizer.json objects built from rank files. Their added-token ids are tiktoken's (or
 * transformers' slow tokenizer's) and are kept as given, so load.ts checkAddedTokenIds, which
 * models Hugging Face `tokenizers` renumbering a tokenizer.json, does not apply to them.
 */
export const FROM_RANK_FILE = new WeakSet<object>();

async function readRankFile(file: string): Promise<Buffer> {
  try {
    const s = await stat(file);
    if (s.size > 64 * 1024 * 1024) throw new PromptencError('E_TOKENIZER_INVALID', `${file}: rank file is ${s.size} bytes, above the limit of 67108864`);
    return await readFile(file);
  } catch (err) {
    if (err instanceof PromptencError) throw err;
    throw new PromptencError('E_TOKENIZER_NOT_FOUND', `cannot read the rank file at ${file}: ${(err as Error).message}`, { cause: err });
  }
}

function build(file: string, bytes: Buffer, spec: TiktokenModelSpec): TokenizerJson {
  const json = tiktokenTokenizerJson(parseTiktokenRanks(bytes, file), spec, file);
  FROM_RANK_FILE.add(json);
  return json;
}

/** The encoding a `.tiktoken` file name says (`o200k_base.tiktoken` → o200k_base), if it names one. */
export function encodingFromFileName(file: string): string | undefined {
  const base = path.basename(file).replace(/\.tiktoken$/, '');
  return base in TIKTOKEN_ENCODINGS ? base : undefined;
}

/**
 * An OpenAI rank file with its encoding (given, or read from the file name). The ids are
 * tiktoken's `encode(text, allowed_special="all")`: the encoding's special tokens in the text
 * are one id each, as added tokens are for every other model.
 */
export async function readTiktokenFile(file: string, encoding: string | undefined): Promise<TiktokenFiles> {
  const name = encoding ?? encodingFromFileName(file);
  const names = Object.keys(TIKTOKEN_ENCODINGS).join(', ');
  if (name === undefined) {
    throw new PromptencError(
      'E_ARGUMENT',
      `options.encoding: ${file} is a tiktoken rank file and its name names no encoding; pass one of ${names} (CLI: --encoding NAME)`,
    );
  }
  const enc = TIKTOKEN_ENCODINGS[name];
  if (!enc) throw new PromptencError('E_ARGUMENT', `options.encoding: expected one of ${names}, received ${describeValue(name)}`);
  const tokenizerPath = path.resolve(file);
  const bytes = await readRankFile(tokenizerPath);
  const added = Object.entries(enc.specials).map(([content, id]) => ({ content, id }));
  return {
    source: file,
    tokenizerPath,
    tokenizerJson: build(tokenizerPath, bytes, { split: enc.split, added }),
    tokenizerConfig: {},
  };
}

/**
 * The tokenizer classes whose tokenizer.model is a rank file and whose encode promptenc knows.
 * ChatGLM4Tokenizer (THUDM glm-4-9b-chat tokenization_chatglm.py): tiktoken.Encoding with
 * this pattern over the ranks and no special tokens of its own; transformers' slow tokenizer
 * splits out the added tokens of added_tokens_decoder first; `tokenizer(text)` puts
 * get_prefix_tokens() = [gMASK]<sop> before the ids (build_inputs_with_special_tokens), and
 * apply_chat_template(tokenize=True) adds nothing (the template writes [gMASK]<sop>).
 */
const RANK_FILE_CLASSES: Readonly<Record<string, { split: TiktokenSplit; prefix: readonly string[] }>> = {
  ChatGLM4Tokenizer: { split: { kind: 'split', regex: CL100K_REGEX }, prefix: ['[gMASK]', '<sop>'] },
};

/** Whether dir/tokenizer.model is a rank file (not SentencePiece); reads at most its first line. */
export async function hasRankFileModel(dir: string): Promise<boolean> {
  try {
    const fh = await open(path.join(dir, 'tokenizer.model'), 'r');
    try {
      const head = Buffer.alloc(4200);
      const { bytesRead } = await fh.read(head, 0, head.length, 0);
      return looksLikeTiktokenRanks(head.subarray(0, bytesRead));
    } finally {
      await fh.close();
    }
  } catch {
    return false;
  }
}

/**
 * A model directory with tokenizer.model (a rank file) and tokenizer_config.json naming a
 * class of RANK_FILE_CLASSES; `config` is that file, `chatTemplate` what load.ts found.
 */
export async function readRankFileDirectory(dir: string, source: string, config: Record<string, unknown>): Promise<TiktokenFiles> {
  const tokenizerPath = path.join(dir, 'tokenizer.model');
  const cls = config.tokenizer_class;
  const known = typeof cls === 'string' ? RANK_FILE_CLASSES[cls] : undefined;
  if (!known) {
    throw new PromptencError(
      'E_TOKENIZER_INVALID',
      `directory ${dir} has no tokenizer.json, and its tokenizer.model is a tiktoken rank file of tokenizer_class ${describeValue(cls)}: promptenc knows the pattern and special tokens of ${Object.keys(RANK_FILE_CLASSES).join(', ')} only`,
    );
  }
  const decoder = config.added_tokens_decoder;
  if (typeof decoder !== 'object' || decoder === null || Array.isArray(decoder)) {
    throw new PromptencError(
      'E_TOKENIZER_INVALID',
      `${path.join(dir, 'tokenizer_config.json')}: added_tokens_decoder: expected an object, received ${describeValue(decoder)}`,
    );
  }
  const added = Object.entries(decoder as Record<string, unknown>)
    .map(([key, v]) => {
      const t = v as Record<string, unknown> | null;
      const id = Number(key);
      if (!/^\d+$/.test(key) || !Number.isSafeInteger(id) || typeof t !== 'object' || t === null || typeof t.content !== 'string' || t.content === '') {
        throw new PromptencError(
          'E_TOKENIZER_INVALID',
          `${path.join(dir, 'tokenizer_config.json')}: added_tokens_decoder[${JSON.stringify(key)}]: expected an id key and an object with a non-empty content`,
        );
      }
      return {
        id,
        content: t.content,
        special: t.special !== false,
        lstrip: t.lstrip === true,
        rstrip: t.rstrip === true,
        single_word: t.single_word === true,
        normalized: t.normalized === true,
      };
    })
    .sort((a, b) => a.id - b.id);
  const bytes = await readRankFile(tokenizerPath);
  return {
    source,
    tokenizerPath,
    tokenizerJson: build(tokenizerPath, bytes, { split: known.split, added, prefix: known.prefix }),
    tokenizerConfig: config,
  };
}
