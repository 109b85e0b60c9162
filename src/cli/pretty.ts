import type { PromptTokenizer } from '../tokenizer.js';

export interface TokenPiece {
  ids: number[];
  text: string;
  special: boolean;
}

/**
 * Split IDs into displayable pieces. A byte-level token can end inside a UTF-8
 * character, so ordinary tokens are grouped (at most 4) until the group decodes
 * without a trailing U+FFFD; added tokens always stand alone.
 */
export function tokenPieces(tok: PromptTokenizer, ids: Uint32Array): TokenPiece[] {
  const out: TokenPiece[] = [];
  let i = 0;
  while (i < ids.length) {
    const id = ids[i]!;
    const added = tok.addedTokens.get(id);
    if (added) {
      out.push({ ids: [id], text: added.content, special: true });
      i++;
      continue;
    }
    let end = i + 1;
    let text = tok.decode(ids.subarray(i, end));
    while (text.endsWith('\uFFFD') && end < ids.length && end - i < 4 && !tok.addedTokens.has(ids[end]!)) {
      const longer = tok.decode(ids.subarray(i, end + 1));
      if (longer.endsWith('\uFFFD') && end + 1 - i >= 4) break;
      end++;
      text = longer;
    }
    out.push({ ids: Array.from(ids.subarray(i, end)), text, special: false });
    i = end;
  }
  return out;
}

const ESC = '\u001b[';
const BG = [`${ESC}48;5;236m`, `${ESC}48;5;238m`];
const SPECIAL = `${ESC}1;30;43m`;
const RESET = `${ESC}0m`;

function visible(text: string): string {
  return text.replace(/\n/g, '↵\n').replace(/\t/g, '→');
}

/**
 * The prompt with token boundaries shown. With colour, ordinary tokens alternate two
 * backgrounds and special tokens are bold on yellow; without, ordinary tokens are
 * separated by `|` and special tokens are wrapped in `⟦ ⟧`.
 */
export function formatPretty(tok: PromptTokenizer, ids: Uint32Array, colour: boolean): string {
  const pieces = tokenPieces(tok, ids);
  let body = '';
  let n = 0;
  for (const p of pieces) {
    if (colour) {
      body += p.special ? `${SPECIAL}${visible(p.text)}${RESET}` : `${BG[n++ % 2]}${visible(p.text)}${RESET}`;
    } else {
      body += p.special ? `⟦${visible(p.text)}⟧` : `${visible(p.text)}|`;
    }
  }
  const specials = pieces.filter((p) => p.special).length;
  return `${body}\n\n${ids.length} tokens (${specials} special), backend ${tok.backend}\n`;
}
