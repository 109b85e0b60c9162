/**
 * The TypeScript added-token scanner (src/split.ts), which sessions, the segment cache and
 * token accounting use to place cuts, finds the same added tokens, in the same order, as
 * the Rust oracle's encode. (Those users check it against the backend's ids and degrade to
 * a full encode on disagreement, so a scanner bug would only cost speed there: this test
 * is what catches one.) Random strings over added-token text, partial tokens, whitespace
 * and plain text, for tokenizers with raw and normalized tokens.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AddedTokenScanner } from '../src/split.js';
import type { TokenizerJson } from '../src/backend/types.js';
import { rng } from './helpers/conversation.mjs';
import { modelPath, oracleEncode, type ModelName } from './helpers/oracle.js';

const FILLER = ['hello', ' ', '  ', '\n', 'x<', '<', '>', '|', '｜', '中文', 'é', '😀', '<|', '<｜', '▁', 'end', 'of', 'text'];

describe('AddedTokenScanner finds what the oracle finds', () => {
  for (const model of ['deepseek-v3', 'qwen3', 'llama3', 'gpt-4o'] as ModelName[]) {
    it(model, async () => {
      const path = modelPath(model);
      const json = JSON.parse(readFileSync(path, 'utf8')) as TokenizerJson;
      const scanner = new AddedTokenScanner(json);
      const added = json.added_tokens ?? [];
      const contents = added.map((t) => t.content);
      const r = rng(model.length * 7919);
      let found = 0;
      for (let k = 0; k < 250; k++) {
        let text = '';
        const parts = 1 + Math.floor(r() * 12);
        for (let i = 0; i < parts; i++) {
          const u = r();
          if (u < 0.35) text += contents[Math.floor(r() * contents.length)]!;
          else if (u < 0.45) {
            const c = contents[Math.floor(r() * contents.length)]!;
            text += c.slice(0, Math.max(1, Math.floor(r() * c.length))); // a partial token
          } else text += FILLER[Math.floor(r() * FILLER.length)]!;
        }
        const want = (await oracleEncode(path, text, false)).filter((id) => scanner.ids.has(id));
        const got = scanner.scan(text).map((m) => m.id);
        if (got.join() !== want.join()) expect({ text, got }).toEqual({ text, got: want });
        found += want.length;
      }
      expect(found).toBeGreaterThan(200);
    });
  }
});
