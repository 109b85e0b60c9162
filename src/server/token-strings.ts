import { readFile } from 'node:fs/promises';
import { BYTE_OF_BYTE_LEVEL_CHAR } from '../offsets.js';

/**
 * Per-token strings, as two peers show them:
 * - vLLM's `token_strs` are `tokenizer.convert_ids_to_tokens(ids)`: the vocabulary key
 *   (`Ġworld` in byte-level BPE), or the added token's content;
 * - llama.cpp's `piece` is the token's bytes (`common_token_to_piece`), given as a string when
 *   they are valid UTF-8 and as an array of bytes otherwise (tools/server README, /tokenize).
 */
export interface TokenStrings {
  /** The vocabulary key of an id, or null for an id outside the vocabulary (HF returns None). */
  token(id: number): string | null;
  /** The bytes a token stands for. */
  bytes(id: number): Uint8Array;
}

interface ParsedTokenizer {
  model?: { vocab?: unknown; byte_fallback?: boolean };
  decoder?: { type?: string; decoders?: Array<{ type?: string }> } | null;
  added_tokens?: Array<{ id: number; content: string }>;
}

const BYTE_TOKEN = /^<0x([0-9A-Fa-f]{2})>$/;

function decoderTypes(d: ParsedTokenizer['decoder']): string[] {
  if (!d) return [];
  return d.type === 'Sequence' ? (d.decoders ?? []).map((x) => x.type ?? '') : [d.type ?? ''];
}

/**
 * Reads tokenizer.json's vocabulary once: O(vocab) time and one string per id. Byte-level
 * keys map back to bytes through the GPT-2 alphabet; others (SentencePiece-style) turn "▁"
 * into a space and `<0xNN>` byte-fallback tokens into their byte, as llama.cpp's SPM
 * token_to_piece does.
 */
export async function tokenStrings(tokenizerPath: string): Promise<TokenStrings> {
  const json = JSON.parse(await readFile(tokenizerPath, 'utf8')) as ParsedTokenizer;
  const keys: string[] = [];
  const vocab = json.model?.vocab;
  if (Array.isArray(vocab)) {
    // Unigram: [[piece, score], ...] in id order.
    vocab.forEach((entry, id) => {
      keys[id] = Array.isArray(entry) ? String(entry[0]) : String(entry);
    });
  } else if (vocab && typeof vocab === 'object') {
    for (const [key, id] of Object.entries(vocab as Record<string, number>)) keys[id] = key;
  }
  const added = new Map<number, string>();
  for (const t of json.added_tokens ?? []) {
    keys[t.id] = t.content;
    added.set(t.id, t.content);
  }
  const byteLevel = decoderTypes(json.decoder).includes('ByteLevel');
  const encoder = new TextEncoder();
  return {
    token: (id) => keys[id] ?? null,
    bytes(id) {
      const key = keys[id];
      if (key === undefined) return new Uint8Array(0);
      const content = added.get(id);
      if (content !== undefined) return encoder.encode(content);
      if (byteLevel) {
        const out = new Uint8Array(key.length);
        for (let i = 0; i < key.length; i++) {
          const b = BYTE_OF_BYTE_LEVEL_CHAR[key.charCodeAt(i)];
          // A key outside the alphabet cannot come from ByteLevel; keep its UTF-8 then.
          if (b === undefined || b < 0) return encoder.encode(key);
          out[i] = b;
        }
        return out;
      }
      const byte = BYTE_TOKEN.exec(key);
      if (byte) return Uint8Array.of(parseInt(byte[1]!, 16));
      return encoder.encode(key.replaceAll('\u2581', ' '));
    },
  };
}
