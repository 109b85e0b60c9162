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
 *   A WHATWG TextDecoder in stream mode keeps the (at most 3) bytes of an unfinished sequence
 *   and replaces invalid ones by the same rule as Rust's String::from_utf8_lossy (both follow
 *   Unicode's "maximal subpart" practice), so the outputs concatenate to decode exactly.
 *   Cost: O(1) amortized per id (each id's bytes are produced and read once).
 * - Window path, for other decoders (SentencePiece-style Replace/ByteFallback/Fuse): the method
 *   of Hugging Face tokenizers' DecodeStream and vLLM's detokenize_incrementally: decode the ids
 *   since the last emission with the previous emission's ids as left context, and emit the new
 *   text once it does not end in U+FFFD. Cost: O(window) per push, where the window is the ids
 *   since the last emission plus the ones before it; amortized O(1) per id while text keeps
 *   completing. Limitation: a prompt whose decoded text really ends in U+FFFD has that character
 *   repeated in the first delta on this path (it cannot be told from an unfinished sequence).
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

function byteDecoder(backend: Backend, skip: boolean, prefix: Uint32Array): StreamDecoder {
  const bytesOf = backend.decodeBytes!.bind(backend);
  let utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  if (prefix.length > 0) {
    // Read the prompt's last bytes and drop the text: the decoder keeps only an unfinished tail.
    let from = prefix.length;
    let bytes = 0;
    while (from > 0 && bytes < PREFIX_BYTES) {
      bytes += bytesOf(prefix.subarray(from - 1, from), skip).length;
      from--;
    }
    utf8.decode(bytesOf(prefix.subarray(from), skip), { stream: true });
  }
  let ended = false;
  return {
    push(ids) {
      if (ended) throw new PromptencError('E_ARGUMENT', 'decoder.push: the decoder was flushed; create a new one');
      const list = toIdArray(ids);
      return list.length === 0 ? '' : utf8.decode(bytesOf(list, skip), { stream: true });
    },
    flush() {
      if (ended) return '';
      ended = true;
      const rest = utf8.decode();
      utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
      return rest;
    },
  };
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
