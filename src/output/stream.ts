/**
 * The streaming engine shared by the `<think>` + tool-call-region formats (glm, qwen3,
 * qwen3-coder, deepseek): a small state machine over marker strings.
 *
 * States: `lead` (the start: does a `<think>` open, or a tool call, which means no reasoning?
 * with `auto`, text is also held until a `</think>` shows it was reasoning), `reasoning`,
 * `content`, `region` (inside a tool-call
 * region, buffered until its end marker) and `done` (after an end-of-turn marker).
 *
 * Cost: O(n) in the output length overall. Text that is final is handed on at once, except a
 * suffix that could begin a marker (at most the longest marker's length) and a trailing high
 * surrogate (a delta may end inside a character). Held text (lead, region) is searched only
 * from where the previous search stopped, never from its start again.
 *
 * Invariants: for every split of the output into deltas, the events concatenate to the same
 * result (output-parse-stream.test.ts checks it); nothing is dropped without a warning: a
 * region that does not parse, or never ends, goes to content as written.
 */
import type { OutputEvent, OutputParser, RegionResult } from './types.js';

export interface RegionFormatSpec {
  /** `<think>`…`</think>` reasoning. */
  thinking: boolean;
  /** The start when OutputParserOptions.startInReasoning is undefined. */
  defaultStart: 'auto' | 'content';
  regionStart: string;
  regionEnd: string;
  /** End-of-turn markers: what follows is not part of this message. */
  stops: readonly string[];
  parseRegion(body: string): RegionResult;
}

const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';

const isSpace = (c: number): boolean =>
  c === 0x20 ||
  (c >= 0x09 && c <= 0x0d) ||
  c === 0xa0 ||
  c === 0x85 ||
  c === 0x3000 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x1680 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x1c ||
  c === 0x1d ||
  c === 0x1e ||
  c === 0x1f;

/**
 * A channel (reasoning or content) whose text is trimmed at both ends, as the templates strip
 * what they re-render: leading whitespace is dropped, whitespace is held until text follows it,
 * and whitespace still held at the end is dropped.
 */
export class TrimmedChannel {
  private started = false;
  private pending = '';
  constructor(
    private readonly type: 'reasoning' | 'content',
    private readonly out: OutputEvent[],
  ) {}

  write(text: string): void {
    if (text.length === 0) return;
    if (!this.started) {
      let i = 0;
      while (i < text.length && isSpace(text.charCodeAt(i))) i++;
      if (i === text.length) return;
      text = text.slice(i);
      this.started = true;
    }
    let k = text.length;
    while (k > 0 && isSpace(text.charCodeAt(k - 1))) k--;
    if (k === 0) {
      this.pending += text;
      return;
    }
    this.out.push({ type: this.type, text: this.pending + text.slice(0, k) });
    this.pending = text.slice(k);
  }

  get empty(): boolean {
    return !this.started;
  }
}

/**
 * Markdown fenced code blocks (``` or ~~~, three or more, after at most three spaces of
 * indentation), fed the content text in order. A tool-call marker inside a fence is text.
 */
export class FenceTracker {
  inFence = false;
  private atLineStart = true;
  private indent = 0;
  private runChar = 0;
  private runLen = 0;
  private openChar = 0;
  private openLen = 0;
  private lineDone = false;

  feed(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x0a) {
        this.atLineStart = true;
        this.indent = 0;
        this.runChar = 0;
        this.runLen = 0;
        this.lineDone = false;
        continue;
      }
      if (this.lineDone) continue;
      if (this.atLineStart && c === 0x20 && this.runLen === 0 && this.indent < 3) {
        this.indent++;
        continue;
      }
      if ((c === 0x60 || c === 0x7e) && (this.runLen === 0 || c === this.runChar)) {
        this.runChar = c;
        this.runLen++;
        const closes = this.inFence && c === this.openChar && this.runLen === this.openLen;
        const opens = !this.inFence && this.runLen === 3;
        if (opens) {
          this.inFence = true;
          this.openChar = c;
          this.openLen = 3;
        } else if (closes) {
          this.inFence = false;
          this.lineDone = true;
        } else if (this.inFence && c === this.openChar && this.runLen > 3 && this.runLen > this.openLen) {
          // a longer opening run: the fence needs as many to close
          this.openLen = this.runLen;
        }
        continue;
      }
      this.atLineStart = false;
      this.lineDone = true;
    }
  }
}

/** The length of the longest suffix of `text` that is a proper prefix of one of `markers` (plus a dangling high surrogate). */
export function holdback(text: string, markers: readonly string[]): number {
  let keep = 0;
  for (const m of markers) {
    for (let k = Math.min(m.length - 1, text.length); k > keep; k--) {
      if (text.endsWith(m.slice(0, k))) {
        keep = k;
        break;
      }
    }
  }
  const last = text.length - keep - 1;
  if (last >= 0) {
    const c = text.charCodeAt(last);
    if (c >= 0xd800 && c <= 0xdbff) keep++;
  }
  return keep;
}

/** The earliest occurrence of any of `markers` in `text` from `from`: [index, marker] or undefined. */
export function findFirst(text: string, markers: readonly string[], from = 0): [number, string] | undefined {
  let best: [number, string] | undefined;
  for (const m of markers) {
    const j = text.indexOf(m, from);
    if (j >= 0 && (!best || j < best[0] || (j === best[0] && m.length > best[1].length))) best = [j, m];
  }
  return best;
}

/** Text that may follow the end of a turn: whitespace is fine, anything else gets one warning. */
export class AfterStop {
  private warned = false;
  constructor(private readonly out: OutputEvent[]) {}
  write(text: string, marker: string): void {
    if (this.warned || /^\s*$/.test(text)) return;
    this.warned = true;
    this.out.push({ type: 'warning', message: `text after the end-of-turn marker ${marker} was ignored` });
  }
}

/**
 * Text held back while its fate is open (a region until its end marker, a lead until `</think>`).
 * Kept as a list of chunks: `buf += delta` then searching the whole buffer would flatten V8's
 * rope string on every delta, which is quadratic; only the last marker-length characters stay
 * in the searched buffer.
 */
export class Held {
  private parts: string[] = [];
  /** Move all of `buf` but its last `keep` characters into the held chunks; return what stays. */
  hold(buf: string, keep: number): string {
    if (buf.length <= keep) return buf;
    this.parts.push(buf.slice(0, buf.length - keep));
    return buf.slice(buf.length - keep);
  }
  /** The held text followed by `rest`; the chunks are emptied. */
  take(rest: string): string {
    if (this.parts.length === 0) return rest;
    this.parts.push(rest);
    const all = this.parts.join('');
    this.parts = [];
    return all;
  }
}

type State = 'lead' | 'reasoning' | 'content' | 'region' | 'done';

export class RegionParser implements OutputParser {
  private state: State;
  private auto: boolean;
  private buf = '';
  private readonly held = new Held();
  private leadDecided = false;
  private leadReasoning = false;
  private readonly out: OutputEvent[] = [];
  private readonly reasoning: TrimmedChannel;
  private readonly content: TrimmedChannel;
  private readonly fence = new FenceTracker();
  private readonly after: AfterStop;
  private stopMarker = '';
  private calls = 0;
  private reasoningTail = '';
  private warnedCallInReasoning = false;
  private warnedFence = false;
  private readonly maxMarker: number;

  constructor(
    private readonly spec: RegionFormatSpec,
    startInReasoning: boolean | undefined,
  ) {
    this.reasoning = new TrimmedChannel('reasoning', this.out);
    this.content = new TrimmedChannel('content', this.out);
    this.after = new AfterStop(this.out);
    if (!spec.thinking) {
      this.state = 'content';
      this.auto = false;
    } else if (startInReasoning === true) {
      // The lead still checks for an opening tool call: an output that opens with one has no reasoning.
      this.state = 'lead';
      this.leadReasoning = true;
      this.auto = false;
    } else {
      this.state = 'lead';
      this.auto = startInReasoning === undefined && spec.defaultStart === 'auto';
    }
    this.maxMarker = Math.max(THINK_CLOSE.length, spec.regionStart.length, spec.regionEnd.length, ...spec.stops.map((s) => s.length));
  }

  push(text: string): OutputEvent[] {
    if (typeof text !== 'string') throw new TypeError('push(text): expected a string');
    this.buf += text;
    this.run(false);
    return this.out.splice(0);
  }

  end(): OutputEvent[] {
    this.run(true);
    return this.out.splice(0);
  }

  private writeReasoning(text: string): void {
    if (!this.warnedCallInReasoning) {
      const joined = this.reasoningTail + text;
      if (joined.includes(this.spec.regionStart)) {
        this.warnedCallInReasoning = true;
        this.out.push({ type: 'warning', message: `a tool call (${this.spec.regionStart}) inside the reasoning was left in the reasoning, not called` });
      }
      this.reasoningTail = joined.slice(-(this.spec.regionStart.length - 1));
    }
    this.reasoning.write(text);
  }

  private writeContent(text: string): void {
    this.fence.feed(text);
    this.content.write(text);
  }

  private stop(marker: string, rest: string): void {
    this.state = 'done';
    this.stopMarker = marker;
    this.buf = '';
    this.after.write(rest, marker);
  }

  private run(final: boolean): void {
    for (;;) {
      switch (this.state) {
        case 'done':
          this.after.write(this.buf, this.stopMarker);
          this.buf = '';
          return;
        case 'lead': {
          if (!this.leadDecided) {
            let i = 0;
            while (i < this.buf.length && isSpace(this.buf.charCodeAt(i))) i++;
            const { regionStart } = this.spec;
            const head = this.buf.slice(i, i + Math.max(THINK_OPEN.length, regionStart.length));
            if (head.startsWith(THINK_OPEN)) {
              this.buf = this.buf.slice(i + THINK_OPEN.length);
              this.state = 'reasoning';
              continue;
            }
            // An output that opens with a tool call skipped the reasoning (the seeds' example 4:
            // the prompt opened <think>, the model answered with a call).
            if (head.startsWith(regionStart)) {
              this.state = 'content';
              continue;
            }
            if (!final && (THINK_OPEN.startsWith(head) || regionStart.startsWith(head))) return;
            this.leadDecided = true;
          }
          if (this.leadReasoning) {
            this.state = 'reasoning';
            continue;
          }
          if (!this.auto) {
            this.state = 'content';
            continue;
          }
          // auto: the text is reasoning if a </think> comes before the end (or an end-of-turn marker).
          const hit = findFirst(this.buf, [THINK_CLOSE, ...this.spec.stops]);
          if (hit && hit[1] === THINK_CLOSE) {
            this.writeReasoning(this.held.take(this.buf.slice(0, hit[0])));
            this.buf = this.buf.slice(hit[0] + THINK_CLOSE.length);
            this.state = 'content';
            continue;
          }
          if (hit || final) {
            this.buf = this.held.take(this.buf);
            this.state = 'content';
            continue;
          }
          this.buf = this.held.hold(this.buf, this.maxMarker - 1);
          return;
        }
        case 'reasoning': {
          const markers = [THINK_CLOSE, ...this.spec.stops];
          const hit = findFirst(this.buf, markers);
          if (hit) {
            this.writeReasoning(this.buf.slice(0, hit[0]));
            const rest = this.buf.slice(hit[0] + hit[1].length);
            if (hit[1] === THINK_CLOSE) {
              this.buf = rest;
              this.state = 'content';
              continue;
            }
            this.out.push({ type: 'warning', message: `the output ended (${hit[1]}) inside the reasoning: no ${THINK_CLOSE}` });
            this.stop(hit[1], rest);
            return;
          }
          const cut = final ? this.buf.length : this.buf.length - holdback(this.buf, markers);
          this.writeReasoning(this.buf.slice(0, cut));
          this.buf = this.buf.slice(cut);
          if (final) this.out.push({ type: 'warning', message: `the output ended inside the reasoning: no ${THINK_CLOSE}` });
          return;
        }
        case 'content': {
          const markers = [this.spec.regionStart, ...this.spec.stops];
          const hit = findFirst(this.buf, markers);
          if (!hit) {
            const cut = final ? this.buf.length : this.buf.length - holdback(this.buf, markers);
            this.writeContent(this.buf.slice(0, cut));
            this.buf = this.buf.slice(cut);
            return;
          }
          this.writeContent(this.buf.slice(0, hit[0]));
          const rest = this.buf.slice(hit[0] + hit[1].length);
          if (hit[1] !== this.spec.regionStart) {
            this.stop(hit[1], rest);
            return;
          }
          if (this.fence.inFence) {
            this.writeContent(hit[1]);
            if (!this.warnedFence) {
              this.warnedFence = true;
              this.out.push({ type: 'warning', message: `${hit[1]} inside a fenced code block was kept as text` });
            }
            this.buf = rest;
            continue;
          }
          this.buf = rest;
          this.state = 'region';
          continue;
        }
        case 'region': {
          const { regionStart, regionEnd } = this.spec;
          // Only the end marker (or the end of the turn) closes a region: a value may hold the start marker's text.
          const hit = findFirst(this.buf, [regionEnd, ...this.spec.stops]);
          if (hit && hit[1] === regionEnd) {
            const body = this.held.take(this.buf.slice(0, hit[0]));
            this.buf = this.buf.slice(hit[0] + regionEnd.length);
            this.region(body);
            this.state = 'content';
            continue;
          }
          if (hit || final) {
            // The end of the turn (or of the output) before this region ended: it stays text.
            const at = hit ? hit[0] : this.buf.length;
            this.writeContent(regionStart + this.held.take(this.buf.slice(0, at)));
            this.out.push({ type: 'warning', message: `an unfinished tool call (${regionStart} without ${regionEnd}) was kept in the content` });
            this.buf = this.buf.slice(at);
            this.state = 'content';
            if (!hit) return;
            continue;
          }
          this.buf = this.held.hold(this.buf, this.maxMarker - 1);
          return;
        }
      }
    }
  }

  private region(body: string): void {
    const r = this.spec.parseRegion(body);
    if ('error' in r) {
      this.writeContent(this.spec.regionStart + body + this.spec.regionEnd);
      this.out.push({ type: 'warning', message: `a malformed tool call was kept in the content: ${r.error}` });
      return;
    }
    for (const w of r.warnings) this.out.push({ type: 'warning', message: w });
    for (const c of r.calls) emitCall(this.out, this.calls++, c);
  }
}

/** The three events of a call: its arguments are known only at its end (see docs/semantics.md). */
export function emitCall(out: OutputEvent[], index: number, c: { name: string; arguments: Record<string, unknown>; argumentsText: string }): void {
  out.push({ type: 'tool_call_start', index, id: `call_${index}`, name: c.name });
  out.push({ type: 'tool_call_delta', index, argumentsText: c.argumentsText });
  out.push({ type: 'tool_call_end', index, arguments: c.arguments });
}
