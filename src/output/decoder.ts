/**
 * Streaming detokenization: ids arrive a few at a time (one per decode step, or many with
 * speculative decoding) and text goes out as soon as it is final.
 *
 * Invariant: for every split of an id stream into pushes, the concatenation of the outputs of
 * push(...) and flush() equals decode(all ids) with the same skipSpecialTokens. With a prompt
 * `prefix`, it equals the part of decode(prefix ++ ids) after the prompt's complete characters:
 * the bytes of a character that the prompt started and the output finishes are emitted with the
 * output, and none of the prompt's own text leaks into the first delta (vLLM issue #48853, where
 * offsets into a prompt that ended inside a UTF-8 sequence made the first delta repeat or lose
 * text).
 *
 * Two paths:
 * - Byte path, when the backend has decodeBytes (a ByteLevel decoder, JS or native): decode is a
 *   per-id byte concatenation read as UTF-8 with U+FFFD for each maximal invalid subsequence.
 *   A streaming UTF-8 decoder (WHATWG's, Utf8Stream below) keeps the (at most 3) bytes of an
 *   unfinished sequence and replaces invalid ones by the same rule as Rust's
 *   String::from_utf8_lossy (both follow Unicode's "maximal subpart" practice), so the outputs
 *   concatenate to decode exactly. Cost: O(1) amortized per id; each id's bytes are asked of the
 *   backend once per process (memo below), larger pushes in one call.
 * - Window path, for other decoders (SentencePiece-style Replace/ByteFallback/Fuse): the method
 *   of Hugging Face tokenizers' DecodeStream and vLLM's detokenize_incrementally: decode the ids
 *   since the last emission with the previous emission's ids as left context, and emit the new
 *   text once it does not end in U+FFFD. Cost: O(window) per push, where the window is the ids
 *   since the last emission plus the ones before it; amortized O(1) per id while text keeps
 *   completing, but a run of k ids whose text keeps ending in U+FFFD (invalid byte-fallback
 *   tokens) costs O(k^2): cutting it short would break stream == decode, because the JS
 *   library's ByteFallback gives one U+FFFD per invalid group, not per byte. Limitation: a prompt
 *   whose decoded text really ends in U+FFFD has that character repeated in the first delta on
 *   this path (it cannot be told from an unfinished sequence). Every bundled model takes the byte
 *   path.
 */
import type { Backend } from '../backend/types.js';
import { toIdArray } from '../options.js';
import { PromptencError, describeValue } from '../errors.js';

export interface DecoderOptions {
  /** Drop special added tokens, as decode({ skipSpecialTokens: true }). Default false: output parsers need the markers. */
  skipSpecialTokens?: boolean;
  /** The prompt's ids (or its last few): an unfinished UTF-8 sequence at its end is completed by the output. */
  prefix?: Uint32Array | readonly number[];
}

export interface StreamDecoder {
  /** Take the next ids; return the text that became final (possibly ''). */
  push(ids: Uint32Array | readonly number[]): string;
  /** End of stream: return what is left (an unfinished sequence becomes U+FFFD, as decode does). */
  flush(): string;
}

/** The prompt ids whose bytes hold any unfinished sequence at its end: a UTF-8 sequence has at most 4 bytes. */
const PREFIX_BYTES = 4;
/** Ids of left context for the window path: enough for a byte-fallback character (4 byte tokens) plus a space. */
const PREFIX_IDS = 6;

export function createStreamDecoder(backend: Backend, opts: DecoderOptions = {}): StreamDecoder {
  if (opts === null || typeof opts !== 'object') throw new PromptencError('E_ARGUMENT', `options: expected an object, received ${describeValue(opts)}`);
  const skip = opts.skipSpecialTokens === true;
  const prefix = opts.prefix === undefined ? new Uint32Array(0) : toIdArray(opts.prefix, 'options.prefix');
  return backend.decodeBytes ? byteDecoder(backend, skip, prefix) : windowDecoder(backend, skip, prefix);
}

/**
 * Per backend and skip flag, each id's bytes as decodeBytes gave them, filled as ids are met:
 * crossing into the native core (and building its Uint8Array) costs far more than the lookup,
 * and a generation meets the same few thousand ids again and again. Bounded by the vocabulary.
 */
const idBytes = new WeakMap<Backend, [Array<Uint8Array | undefined>, Array<Uint8Array | undefined>]>();
/** A push of more ids than this asks the backend once for all of them. */
const BATCH_IDS = 16;

function byteDecoder(backend: Backend, skip: boolean, prefix: Uint32Array): StreamDecoder {
  const bytesOf = backend.decodeBytes!.bind(backend);
  let memo = idBytes.get(backend);
  if (!memo) idBytes.set(backend, (memo = [[], []]));
  const table = memo[skip ? 1 : 0];
  const one = new Uint32Array(1);
  const bytesOfId = (id: number): Uint8Array => {
    let b = table[id];
    if (b === undefined) {
      one[0] = id;
      b = table[id] = bytesOf(one, skip);
    }
    return b;
  };
  const utf8 = new Utf8Stream();
  if (prefix.length > 0) {
    // Read the prompt's last bytes and drop the text: the decoder keeps only an unfinished tail.
    let from = prefix.length;
    let bytes = 0;
    while (from > 0 && bytes < PREFIX_BYTES) {
      from--;
      bytes += bytesOfId(prefix[from]!).length;
    }
    for (let i = from; i < prefix.length; i++) utf8.write(bytesOfId(prefix[i]!));
    utf8.take();
  }
  let ended = false;
  return {
    push(ids) {
      if (ended) throw new PromptencError('E_ARGUMENT', 'decoder.push: the decoder was flushed; create a new one');
      const list = toIdArray(ids);
      if (list.length > BATCH_IDS) utf8.write(bytesOf(list, skip));
      else for (let i = 0; i < list.length; i++) utf8.write(bytesOfId(list[i]!));
      return utf8.take();
    },
    flush() {
      if (ended) return '';
      ended = true;
      utf8.end();
      return utf8.take();
    },
  };
}

/**
 * The WHATWG Encoding standard's UTF-8 decoder, in stream mode: U+FFFD for each maximal invalid
 * subsequence, the rule of Rust's String::from_utf8_lossy too (both follow Unicode's "U+FFFD
 * substitution of maximal subparts"). TextDecoder does the same but costs ~0.7 us per call here,
 * more than the rest of a one-id push.
 */
export class Utf8Stream {
  private cp = 0;
  private seen = 0;
  private needed = 0;
  private lower = 0x80;
  private upper = 0xbf;
  private units: number[] = [];
  private out = '';

  write(bytes: Uint8Array): void {
    const u = this.units;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (this.needed === 0) {
        if (b <= 0x7f) u.push(b);
        else if (b >= 0xc2 && b <= 0xdf) {
          this.needed = 1;
          this.cp = b & 0x1f;
        } else if (b >= 0xe0 && b <= 0xef) {
          if (b === 0xe0) this.lower = 0xa0;
          else if (b === 0xed) this.upper = 0x9f;
          this.needed = 2;
          this.cp = b & 0x0f;
        } else if (b >= 0xf0 && b <= 0xf4) {
          if (b === 0xf0) this.lower = 0x90;
          else if (b === 0xf4) this.upper = 0x8f;
          this.needed = 3;
          this.cp = b & 0x07;
        } else u.push(0xfffd);
        continue;
      }
      if (b < this.lower || b > this.upper) {
        // The sequence so far is one maximal invalid subpart; this byte starts afresh.
        this.reset();
        u.push(0xfffd);
        i--;
        continue;
      }
      this.lower = 0x80;
      this.upper = 0xbf;
      this.cp = (this.cp << 6) | (b & 0x3f);
      if (++this.seen === this.needed) {
        const cp = this.cp;
        if (cp >= 0x10000) u.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
        else u.push(cp);
        this.reset();
      }
    }
    if (u.length > 4096) this.spill();
  }

  /** End of stream: an unfinished sequence is one U+FFFD. */
  end(): void {
    if (this.needed !== 0) {
      this.reset();
      this.units.push(0xfffd);
    }
  }

  /** The text decoded so far and not yet taken. */
  take(): string {
    this.spill();
    const s = this.out;
    this.out = '';
    return s;
  }

  private spill(): void {
    const u = this.units;
    if (u.length === 0) return;
    if (u.length <= 8192) this.out += String.fromCharCode.apply(null, u);
    else for (let i = 0; i < u.length; i += 8192) this.out += String.fromCharCode.apply(null, u.slice(i, i + 8192));
    u.length = 0;
  }

  private reset(): void {
    this.cp = 0;
    this.seen = 0;
    this.needed = 0;
    this.lower = 0x80;
    this.upper = 0xbf;
  }
}

const REPLACEMENT = '\ufffd';

function windowDecoder(backend: Backend, skip: boolean, prefix: Uint32Array): StreamDecoder {
  // window[0, read) was emitted already (it is left context); window[read, ...) is pending.
  let window: number[] = Array.from(prefix.subarray(Math.max(0, prefix.length - PREFIX_IDS)));
  let read = window.length;
  const decode = (ids: number[]): string => (ids.length === 0 ? '' : backend.decode(Uint32Array.from(ids), skip));
  // The length of the context's text that was emitted: a trailing U+FFFD of the prompt is an
  // unfinished sequence that the output may finish.
  const contextLength = (): number => {
    const text = decode(window.slice(0, read));
    let end = text.length;
    if (read === window.length && prefix.length > 0) while (end > 0 && text[end - 1] === REPLACEMENT) end--;
    return end;
  };
  let emittedLength = contextLength();
  let ended = false;
  const take = (final: boolean): string => {
    if (read === window.length) return '';
    const text = decode(window);
    if (!final && (text.length <= emittedLength || text.endsWith(REPLACEMENT))) return '';
    const out = text.slice(emittedLength);
    // The new context: the ids just emitted (their text is what the next decode is measured against).
    window = window.slice(read);
    read = window.length;
    emittedLength = decode(window).length;
    return out;
  };
  return {
    push(ids) {
      if (ended) throw new PromptencError('E_ARGUMENT', 'decoder.push: the decoder was flushed; create a new one');
      for (const id of toIdArray(ids)) window.push(id);
      return take(false);
    },
    flush() {
      if (ended) return '';
      ended = true;
      return take(true);
    },
  };
}
