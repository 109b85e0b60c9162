import { TemplateError } from './values.js';

/**
 * Jinja2's lexer (jinja2/lexer.py) with transformers' settings: trim_blocks and lstrip_blocks on,
 * keep_trailing_newline off. Newlines are normalised to "\n" first and one trailing newline is
 * dropped, as Lexer.tokeniter does; `{%-`/`-%}` strip all whitespace on that side, `{%+` turns
 * lstrip_blocks off for one tag, `+%}` trim_blocks.
 */
export type TokType = 'text' | 'var_begin' | 'var_end' | 'block_begin' | 'block_end' | 'name' | 'string' | 'int' | 'float' | 'op' | 'eof';

export interface Token {
  type: TokType;
  value: string;
  line: number;
}

export class SyntaxErr extends TemplateError {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

const OPS = ['//', '**', '==', '!=', '<=', '>=', '+', '-', '/', '*', '%', '~', '[', ']', '(', ')', '{', '}', '<', '>', '=', '.', ':', '|', ',', ';'];

function lineAt(src: string, pos: number, from: number, line: number): number {
  for (let i = from; i < pos; i++) if (src.charCodeAt(i) === 10) line++;
  return line;
}

/** Python string literal escapes ("unicode-escape" after Jinja2's backslashreplace). */
function pyUnescape(body: string, line: number): string {
  if (!body.includes('\\')) return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== '\\' || i + 1 >= body.length) {
      out += ch;
      continue;
    }
    const n = body[++i]!;
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', b: '\b', f: '\f', v: '\v', a: '\x07', '\n': '' };
    if (n in simple) out += simple[n];
    else if (n === 'x' || n === 'u' || n === 'U') {
      const len = n === 'x' ? 2 : n === 'u' ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + len);
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) throw new SyntaxErr(`truncated \\${n} escape`, line);
      out += String.fromCodePoint(parseInt(hex, 16));
      i += len;
    } else if (n >= '0' && n <= '7') {
      let oct = n;
      while (oct.length < 3 && body[i + 1]! >= '0' && body[i + 1]! <= '7') oct += body[++i];
      out += String.fromCharCode(parseInt(oct, 8));
    } else if (n === 'N') {
      // unicode-escape's \N{NAME} needs the Unicode character name database, which the engine
      // does not carry: refused, rather than printed as the wrong text.
      throw new SyntaxErr('\\N{...} escapes (Unicode character names) are not supported', line);
    } else out += `\\${n}`;
  }
  return out;
}

export function tokenize(source: string): Token[] {
  let src = source.replace(/\r\n|\r/g, '\n');
  if (src.endsWith('\n')) src = src.slice(0, -1);
  const toks: Token[] = [];
  let pos = 0;
  let line = 1;
  let lineStarting = true;
  /** The previous tag ended with `-`: strip leading whitespace of the next text. */
  let stripNext = false;
  const n = src.length;
  while (pos < n) {
    // Text up to the next tag start.
    let next = pos;
    let kind = '';
    for (;;) {
      next = src.indexOf('{', next);
      if (next < 0 || next + 1 >= n) {
        next = n;
        break;
      }
      const c = src[next + 1];
      if (c === '{' || c === '%' || c === '#') {
        kind = c;
        break;
      }
      next++;
    }
    let text = src.slice(pos, next);
    if (stripNext) text = text.replace(/^\s+/, '');
    stripNext = false;
    if (kind !== '') {
      const sign = src[next + 2];
      if (sign === '-') text = text.replace(/\s+$/, '');
      else if (sign !== '+' && kind !== '{') {
        // lstrip_blocks: only spaces and tabs between the line start and the tag.
        const lpos = text.lastIndexOf('\n') + 1;
        if ((lpos > 0 || lineStarting) && /^[ \t]*$/.test(text.slice(lpos))) text = text.slice(0, lpos);
      }
    }
    if (text !== '') toks.push({ type: 'text', value: text, line });
    line = lineAt(src, next, pos, line);
    if (kind === '') break;
    pos = next + 2;
    if (src[pos] === '-' || src[pos] === '+') pos++;
    if (kind === '#') {
      const end = src.indexOf('#}', pos);
      if (end < 0) throw new SyntaxErr('missing end of comment tag', line);
      const minus = src[end - 1] === '-' && end - 1 >= pos;
      const plus = src[end - 1] === '+' && end - 1 >= pos;
      line = lineAt(src, end, pos, line);
      pos = end + 2;
      if (minus) stripNext = true;
      else if (!plus && src[pos] === '\n') {
        pos++;
        line++;
      }
      lineStarting = src[pos - 1] === '\n';
      continue;
    }
    const isBlock = kind === '%';
    // raw blocks
    if (isBlock) {
      const m = /^\s*raw\s*([-+]?)%\}/.exec(src.slice(pos, pos + 40));
      if (m) {
        pos += m[0].length;
        // Jinja2's raw_begin has no block suffix: the newline after {% raw %} stays.
        if (m[1] === '-') pos = skipWs(src, pos);
        const endRe = /\{%([-+]?)\s*endraw\s*([-+]?)%\}/g;
        endRe.lastIndex = pos;
        const e = endRe.exec(src);
        if (!e) throw new SyntaxErr('missing endraw', line);
        let body = src.slice(pos, e.index);
        if (e[1] === '-') body = body.replace(/\s+$/, '');
        else if (e[1] !== '+') {
          const lpos = body.lastIndexOf('\n') + 1;
          if (/^[ \t]*$/.test(body.slice(lpos))) body = body.slice(0, lpos);
        }
        if (body !== '') toks.push({ type: 'text', value: body, line });
        line = lineAt(src, e.index + e[0].length, pos, line);
        pos = e.index + e[0].length;
        if (e[2] === '-') stripNext = true;
        else if (e[2] !== '+' && src[pos] === '\n') {
          pos++;
          line++;
        }
        lineStarting = src[pos - 1] === '\n';
        continue;
      }
    }
    toks.push({ type: isBlock ? 'block_begin' : 'var_begin', value: '', line });
    // Tokens inside the tag.
    const close = isBlock ? '%}' : '}}';
    let depth = 0;
    // The end token's line is the line of its `%}` (before trim_blocks eats the newline after it).
    let endLine = line;
    for (;;) {
      while (pos < n && /\s/.test(src[pos]!)) {
        if (src[pos] === '\n') line++;
        pos++;
      }
      if (pos >= n) throw new SyntaxErr(`unexpected end of template, expected '${close}'`, line);
      const c = src[pos]!;
      if (depth === 0) {
        if ((c === '-' || c === '+') && src.startsWith(close, pos + 1)) {
          endLine = line;
          pos += 3;
          if (c === '-') stripNext = true;
          break;
        }
        if (src.startsWith(close, pos)) {
          endLine = line;
          pos += 2;
          if (isBlock && src[pos] === '\n') {
            pos++;
            line++;
          }
          break;
        }
      }
      if (/[A-Za-z_]/.test(c)) {
        const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(pos, pos + 256))!;
        toks.push({ type: 'name', value: m[0], line });
        pos += m[0].length;
        continue;
      }
      if (c >= '0' && c <= '9') {
        const rest = src.slice(pos, pos + 400);
        const f = /^(\d(_?\d)*)?\.\d(_?\d)*([eE][+-]?\d(_?\d)*)?|^\d(_?\d)*[eE][+-]?\d(_?\d)*/.exec(rest);
        const i = /^(0[bB][01_]+|0[oO][0-7_]+|0[xX][0-9a-fA-F_]+|\d(_?\d)*)/.exec(rest)!;
        if (f && f[0].length > i[0].length) {
          toks.push({ type: 'float', value: f[0].replace(/_/g, ''), line });
          pos += f[0].length;
        } else {
          toks.push({ type: 'int', value: i[0].replace(/_/g, ''), line });
          pos += i[0].length;
        }
        continue;
      }
      if (c === "'" || c === '"') {
        let j = pos + 1;
        while (j < n && src[j] !== c) j += src[j] === '\\' ? 2 : 1;
        if (j >= n) throw new SyntaxErr('unterminated string', line);
        toks.push({ type: 'string', value: pyUnescape(src.slice(pos + 1, j), line), line });
        line = lineAt(src, j, pos, line);
        pos = j + 1;
        continue;
      }
      const op = OPS.find((o) => src.startsWith(o, pos));
      if (op === undefined) throw new SyntaxErr(`unexpected char '${c}'`, line);
      if (op === '(' || op === '[' || op === '{') depth++;
      else if (op === ')' || op === ']' || op === '}') depth = Math.max(0, depth - 1);
      toks.push({ type: 'op', value: op, line });
      pos += op.length;
    }
    toks.push({ type: isBlock ? 'block_end' : 'var_end', value: '', line: endLine });
    lineStarting = src[pos - 1] === '\n';
  }
  toks.push({ type: 'eof', value: '', line });
  return toks;
}

function skipWs(src: string, pos: number): number {
  while (pos < src.length && /\s/.test(src[pos]!)) pos++;
  return pos;
}
