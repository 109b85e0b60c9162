/**
 * Oniguruma's inline case-insensitive groups for the JS backend. @huggingface/tokenizers turns
 * `(?i:...)` into ASCII-only classes (`s` → `[sS]`), but the oracle's Oniguruma folds with
 * Unicode case folding, under which two non-ASCII code points fold to ASCII letters
 * (CaseFolding.txt: `017F; C; 0073` LATIN SMALL LETTER LONG S, `212A; C; 006B` KELVIN SIGN).
 * So `(?i:'s|'t|...)` also matches `'ſ`, and the library split "ا'ſ'dd" differently from HF.
 * test/case-fold.test.ts derives the folding class from V8's /iu and checks it against the oracle.
 */
import type { TokenizerJson } from '../tokenizer-json.js';
import { withOracleClasses } from './oracle-classes.js';

/** The non-ASCII code points whose simple case folding is an ASCII letter. */
const NON_ASCII_FOLDS: Readonly<Record<string, string>> = { s: '\u017f', k: '\u212a' };

/** `(?i:...)` groups (without nested groups) rewritten as plain groups with explicit classes. */
export function expandInlineCaseInsensitive(regex: string): string {
  return regex.replace(/\(\?i:([^()]*)\)/g, (_m, body: string) => {
    let out = '';
    for (const ch of body) {
      const lower = ch.toLowerCase();
      out += /^[a-z]$/i.test(ch) ? `[${lower}${lower.toUpperCase()}${NON_ASCII_FOLDS[lower] ?? ''}]` : ch;
    }
    return `(?:${out})`;
  });
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * HF's ByteLevel split pattern (byte_level.rs). The library hard-codes it as a JS regex whose
 * `\s` adds U+FEFF and lacks U+0085, unlike the regex crate's White_Space; as a Split pattern
 * the library translates `\s` to `\p{White_Space}`.
 */
const BYTE_LEVEL_REGEX = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

function rewritePreTokenizer(pre: unknown): unknown {
  if (!isObj(pre)) return pre;
  // ByteLevel with its regex = Split(that regex, Isolated) then ByteLevel without it; only
  // without add_prefix_space, which HF applies to each piece before the split.
  if (pre.type === 'ByteLevel' && pre.use_regex !== false && pre.add_prefix_space !== true) {
    return {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: BYTE_LEVEL_REGEX }, behavior: 'Isolated', invert: false },
        { ...pre, use_regex: false },
      ],
    };
  }
  if (pre.type === 'Sequence' && Array.isArray(pre.pretokenizers)) return { ...pre, pretokenizers: pre.pretokenizers.map(rewritePreTokenizer) };
  const pattern = pre.pattern;
  if (pre.type === 'Split' && isObj(pattern) && typeof pattern.Regex === 'string') {
    // And the oracle's Unicode classes in place of V8's (./oracle-classes.ts).
    const regex = withOracleClasses(pattern.Regex.includes('(?i:') ? expandInlineCaseInsensitive(pattern.Regex) : pattern.Regex);
    return regex === pattern.Regex ? pre : { ...pre, pattern: { ...pattern, Regex: regex } };
  }
  return pre;
}

/** tokenizer.json for the library: the same, with Split regexes folded as Oniguruma folds them and ByteLevel's regex as a Split. */
export function withOnigurumaCaseFolding(json: TokenizerJson): TokenizerJson {
  const pre = rewritePreTokenizer(json.pre_tokenizer);
  return pre === json.pre_tokenizer ? json : { ...json, pre_tokenizer: pre };
}
