import type { TokenizerJson } from './tokenizer-json.js';

/**
 * The pre-tokenizer families promptenc knows exactly, recognised by the exact regex
 * strings that real tokenizer.json files carry (never by a loose pattern match).
 */
export type PreTokenizerFamily = 'gpt2' | 'cl100k' | 'qwen2' | 'o200k' | 'deepseek_v3';

const CONTRACTIONS = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
/** Llama 3 and GLM-4: digits in runs of up to three. */
export const CL100K_REGEX = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
/** Qwen2/2.5/3: single digits. */
export const QWEN2_REGEX = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
/** GPT-4o and gpt-oss. */
export const O200K_REGEX =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/** DeepSeek-V3: three Splits applied in turn. */
export const DEEPSEEK_V3_REGEXES = [
  '\\p{N}{1,3}',
  '[一-龥぀-ゟ゠-ヿ]+',
  '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',
];

type Json = Record<string, unknown>;

function splitRegex(p: Json): string | undefined {
  if (p.type !== 'Split' || p.invert === undefined) return undefined;
  const pattern = p.pattern as { Regex?: string } | undefined;
  return pattern?.Regex;
}

function isIsolated(p: Json): boolean {
  return p.behavior === 'Isolated' && p.invert === false;
}

/** ByteLevel after the splits, with its own regex off and no prefix space. */
function isPlainByteLevel(p: Json | undefined): boolean {
  return !!p && p.type === 'ByteLevel' && p.use_regex === false && p.add_prefix_space === false;
}

export function preTokenizerFamily(json: TokenizerJson): PreTokenizerFamily | undefined {
  const pre = json.pre_tokenizer as Json | null | undefined;
  if (!pre) return undefined;
  if (pre.type === 'ByteLevel' && pre.use_regex !== false && pre.add_prefix_space === false) return 'gpt2';
  if (pre.type !== 'Sequence' || !Array.isArray(pre.pretokenizers)) return undefined;
  const list = pre.pretokenizers as Json[];
  const last = list[list.length - 1];
  if (!isPlainByteLevel(last)) return undefined;
  const splits = list.slice(0, -1);
  if (splits.length === 1) {
    const s = splits[0]!;
    const re = splitRegex(s);
    // o200k in GPT-4o is written as Removed + invert; its regex matches every character, so it equals Isolated.
    const o200kShape = isIsolated(s) || (s.behavior === 'Removed' && s.invert === true);
    if (re === CL100K_REGEX && isIsolated(s)) return 'cl100k';
    if (re === QWEN2_REGEX && isIsolated(s)) return 'qwen2';
    if (re === O200K_REGEX && o200kShape) return 'o200k';
    return undefined;
  }
  if (splits.length === 3 && splits.every((s, i) => isIsolated(s) && splitRegex(s) === DEEPSEEK_V3_REGEXES[i])) return 'deepseek_v3';
  return undefined;
}
