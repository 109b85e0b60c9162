/**
 * The oracle's Unicode classes for the JS backend's pre-tokenizer regexes. @huggingface/tokenizers
 * compiles a Split regex with V8, whose `\p{L}`, `\p{N}`, ... follow Node's ICU (Unicode 17 here)
 * and whose `\s` is ECMAScript's (U+FEFF in, U+0085 out); the oracle's Oniguruma has older
 * Unicode data and `\s` = White_Space. So a CJK Ext H letter (U+32407, Unicode 15) split
 * differently: `"𲐇#include"` gave [..., 2165] on GPT-4o, the oracle [..., 2, 1981] (found by
 * `npm run fuzz`). Each class is replaced by the explicit ranges the oracle matches
 * (./oracle-classes-table.ts, generated from the oracle by scripts/gen-oracle-classes.mjs),
 * exactly as the native core takes its classes from the oracle (scripts/gen-unicode-tables.mjs).
 * A class the table lacks, and `\P{..}` / `\S` inside a bracket class (not expressible as ranges
 * there), are left as they are.
 */
import { ORACLE_CLASSES } from './oracle-classes-table.js';

/** `regex` (Oniguruma syntax) with `\p{X}`, `\P{X}`, `\s`, `\S` spelled as the oracle's ranges. */
export function withOracleClasses(regex: string): string {
  let out = '';
  let inClass = 0;
  for (let i = 0; i < regex.length; i++) {
    const c = regex[i]!;
    if (c === '\\') {
      const next = regex[i + 1] ?? '';
      let name: string | undefined;
      let negated = false;
      let length = 2;
      if (next === 'p' || next === 'P') {
        const m = /^\{(\^?)([A-Za-z_]+)\}/.exec(regex.slice(i + 2));
        if (m && ORACLE_CLASSES[m[2]!] !== undefined) {
          name = m[2];
          negated = (next === 'P') !== (m[1] === '^');
          length = 2 + m[0].length;
        }
      } else if (next === 's' || next === 'S') {
        name = 's';
        negated = next === 'S';
      }
      if (name !== undefined && !(negated && inClass > 0)) {
        const ranges = ORACLE_CLASSES[name]!;
        out += inClass > 0 ? ranges : negated ? `[^${ranges}]` : `[${ranges}]`;
        i += length - 1;
        continue;
      }
      out += c + next;
      i++;
      continue;
    }
    if (c === '[') inClass++;
    else if (c === ']' && inClass > 0) inClass--;
    out += c;
  }
  return out;
}
