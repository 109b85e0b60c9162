import type { Expr, MacroArg, Stmt, Target } from './ast.js';
import { SyntaxErr, tokenize, type Token } from './lexer.js';
import { LimitError, PyFloat } from './values.js';

/**
 * Jinja2's parser (jinja2/parser.py): the same precedence (or < and < not < comparisons <
 * + - < ~ < * / // % < ** < unary, with filters and tests binding to the unary operand) and the
 * statements chat templates use, plus transformers' `{% generation %}` and the loopcontrols
 * extension's break/continue. include/import/extends/block need a loader: a syntax error here.
 */
export function parse(source: string, maxDepth: number): Stmt[] {
  return new Parser(tokenize(source), maxDepth).template();
}

const END_TAGS = new Set(['endblock', 'endfor', 'endif', 'elif', 'else', 'endset', 'endmacro', 'endcall', 'endfilter', 'endwith', 'endgeneration']);

class Parser {
  private i = 0;
  private depth = 0;
  /** Loops open around the current statement (break/continue need one; a macro body starts afresh). */
  private loops = 0;
  private ids = 0;
  constructor(
    private readonly toks: Token[],
    private readonly maxDepth: number,
  ) {}

  private get cur(): Token {
    return this.toks[this.i]!;
  }
  private peek(k = 1): Token {
    return this.toks[Math.min(this.i + k, this.toks.length - 1)]!;
  }
  private next(): Token {
    return this.toks[this.i++]!;
  }
  private err(msg: string, tok = this.cur): never {
    throw new SyntaxErr(msg, tok.line);
  }
  private isOp(v: string): boolean {
    return this.cur.type === 'op' && this.cur.value === v;
  }
  private isName(v: string): boolean {
    return this.cur.type === 'name' && this.cur.value === v;
  }
  private expectOp(v: string): Token {
    if (!this.isOp(v)) this.err(`expected '${v}', got '${this.cur.value || this.cur.type}'`);
    return this.next();
  }
  private expectName(v?: string): string {
    if (this.cur.type !== 'name' || (v !== undefined && this.cur.value !== v)) this.err(`expected ${v ?? 'a name'}, got '${this.cur.value || this.cur.type}'`);
    return this.next().value;
  }
  private expectBlockEnd(): void {
    if (this.cur.type !== 'block_end') this.err(`expected end of statement block, got '${this.cur.value || this.cur.type}'`);
    this.next();
  }

  template(): Stmt[] {
    const body = this.subparse(null);
    if (this.cur.type !== 'eof') this.err(`unexpected '${this.peek().value}'`);
    return body;
  }

  /** Statements up to one of `ends` (the tag name is left as the current token). */
  private subparse(ends: readonly string[] | null): Stmt[] {
    const out: Stmt[] = [];
    for (;;) {
      const t = this.cur;
      if (t.type === 'eof') {
        if (ends) this.err(`unexpected end of template, expected ${ends.join(' or ')}`);
        return out;
      }
      if (t.type === 'text') {
        this.next();
        out.push({ t: 'text', v: t.value, line: t.line });
      } else if (t.type === 'var_begin') {
        this.next();
        const e = this.tupleExpr();
        if (this.cur.type !== 'var_end') this.err(`expected end of print statement, got '${this.cur.value || this.cur.type}'`);
        this.next();
        out.push({ t: 'output', e, line: t.line });
      } else if (t.type === 'block_begin') {
        const name = this.peek();
        if (name.type !== 'name') this.err('tag name expected', name);
        if (ends?.includes(name.value)) {
          this.next();
          return out;
        }
        if (END_TAGS.has(name.value)) this.err(`unexpected '${name.value}'`, name);
        this.next();
        out.push(this.statement());
      } else this.err(`unexpected '${t.value}'`);
    }
  }

  private enter(): void {
    if (++this.depth > this.maxDepth) throw new LimitError(`template nested more than ${this.maxDepth} levels deep`);
  }

  private statement(): Stmt {
    const tok = this.next();
    const line = tok.line;
    this.enter();
    try {
      switch (tok.value) {
        case 'for':
          return this.forStmt(line);
        case 'if':
          return this.ifStmt(line);
        case 'set':
          return this.setStmt(line);
        case 'macro': {
          const name = this.expectName();
          const args = this.signature();
          this.expectBlockEnd();
          const outer = this.loops;
          this.loops = 0;
          const body = this.body(['endmacro']);
          this.loops = outer;
          return { t: 'macro', name, args, body, line, id: this.ids++ };
        }
        case 'call': {
          const args = this.isOp('(') ? this.signature() : [];
          const call = this.expr();
          if (call.t !== 'call') this.err('expected call');
          this.expectBlockEnd();
          const body = this.body(['endcall']);
          return { t: 'callblock', call, args, body, line, id: this.ids++ };
        }
        case 'filter': {
          const filters = this.filterChain(null);
          this.expectBlockEnd();
          return { t: 'filterblock', filters, body: this.body(['endfilter']), line };
        }
        case 'with': {
          const targets: Target[] = [];
          const values: Expr[] = [];
          while (this.cur.type !== 'block_end') {
            if (targets.length) this.expectOp(',');
            targets.push(this.target(false));
            this.expectOp('=');
            values.push(this.expr());
          }
          this.expectBlockEnd();
          return { t: 'with', targets, values, body: this.body(['endwith']), line };
        }
        case 'break':
        case 'continue':
          if (this.loops === 0) this.err(`'${tok.value}' outside of a loop`, tok);
          this.expectBlockEnd();
          return { t: tok.value, line };
        case 'block': {
          // No inheritance without a loader: a block renders its body in place.
          this.expectName();
          this.expectBlockEnd();
          const b = this.subparse(['endblock']);
          this.next();
          if (this.cur.type === 'name') this.next();
          this.expectBlockEnd();
          return { t: 'generation', body: b, line };
        }
        case 'generation':
          this.expectBlockEnd();
          return { t: 'generation', body: this.body(['endgeneration']), line };
        default:
          return this.err(`Encountered unknown tag '${tok.value}'.`, tok);
      }
    } finally {
      this.depth--;
    }
  }

  /** Statements up to the end tag, which is consumed with its block end. */
  private body(ends: string[]): Stmt[] {
    const b = this.subparse(ends);
    this.next();
    this.expectBlockEnd();
    return b;
  }

  private forStmt(line: number): Stmt {
    const target = this.target(true);
    this.expectName('in');
    const iter = this.tupleExpr(false, true);
    let cond: Expr | null = null;
    if (this.isName('if')) {
      this.next();
      cond = this.expr();
    }
    let recursive = false;
    if (this.isName('recursive')) {
      this.next();
      recursive = true;
    }
    this.expectBlockEnd();
    this.loops++;
    const body = this.subparse(['endfor', 'else']);
    this.loops--;
    let els: Stmt[] = [];
    if (this.next().value === 'else') {
      this.expectBlockEnd();
      els = this.subparse(['endfor']);
      this.next();
    }
    this.expectBlockEnd();
    return { t: 'for', target, iter, cond, recursive, body, else: els, line, id: -1 };
  }

  private ifStmt(line: number): Stmt {
    const test = this.tupleExpr();
    this.expectBlockEnd();
    const body = this.subparse(['elif', 'else', 'endif']);
    const tag = this.next().value;
    let els: Stmt[] = [];
    if (tag === 'elif') els = [this.ifStmt(this.cur.line)];
    else if (tag === 'else') {
      this.expectBlockEnd();
      els = this.subparse(['endif']);
      this.next();
      this.expectBlockEnd();
    } else this.expectBlockEnd();
    return { t: 'if', test, body, else: els, line };
  }

  private setStmt(line: number): Stmt {
    const target = this.target(true, true);
    if (this.isOp('=')) {
      this.next();
      const e = this.tupleExpr();
      this.expectBlockEnd();
      return { t: 'set', target, e, line };
    }
    let filters: Expr[] = [];
    if (this.isOp('|')) {
      this.next();
      filters = this.filterChain(null);
    }
    this.expectBlockEnd();
    return { t: 'setblock', target, filters, body: this.body(['endset']), line };
  }

  /** Assignment targets: names, tuples of names, and (for set) `ns.attr`. */
  private target(tuples: boolean, attr = false): Target {
    const one = (): Target => {
      if (this.isOp('(')) {
        this.next();
        const t = this.target(true);
        this.expectOp(')');
        return t;
      }
      const name = this.expectName();
      if (attr && this.isOp('.')) {
        this.next();
        return { t: 'attr', obj: name, name: this.expectName() };
      }
      if (['true', 'false', 'none', 'True', 'False', 'None'].includes(name)) this.err(`can't assign to '${name}'`);
      return { t: 'name', name };
    };
    const first = one();
    if (!tuples || !this.isOp(',')) return first;
    const items = [first];
    while (this.isOp(',')) {
      this.next();
      if (this.isName('in') || this.isOp('=') || this.cur.type === 'block_end') break;
      items.push(one());
    }
    return { t: 'tuple', items };
  }

  private signature(): MacroArg[] {
    this.expectOp('(');
    const args: MacroArg[] = [];
    while (!this.isOp(')')) {
      if (args.length) this.expectOp(',');
      if (this.isOp(')')) break;
      const name = this.expectName();
      let def: Expr | null = null;
      if (this.isOp('=')) {
        this.next();
        def = this.expr();
      } else if (args.some((a) => a.default !== null)) this.err('non-default argument follows default argument');
      args.push({ name, default: def });
    }
    this.next();
    return args;
  }

  /** An expression, or a tuple of them without parentheses (`{{ a, b }}`, `for x in a, b`). */
  private tupleExpr(simplified = false, noCond = false): Expr {
    const line = this.cur.line;
    const items: Expr[] = [];
    let comma = false;
    for (;;) {
      if (items.length) this.expectOp(',');
      if (this.cur.type === 'block_end' || this.cur.type === 'var_end' || this.isOp(')') || this.isName('if') || this.isName('recursive')) break;
      items.push(simplified ? this.primary() : noCond ? this.orExpr() : this.expr());
      if (this.isOp(',')) comma = true;
      else break;
    }
    if (!comma && items.length === 1) return items[0]!;
    if (items.length === 0 && !comma) this.err('expected an expression');
    return { t: 'tuple', items, line };
  }

  expr(): Expr {
    this.enter();
    try {
      const line = this.cur.line;
      const e = this.orExpr();
      if (this.isName('if')) {
        this.next();
        const test = this.orExpr();
        let els: Expr | null = null;
        if (this.isName('else')) {
          this.next();
          els = this.expr();
        }
        return { t: 'cond', test, yes: e, no: els, line };
      }
      return e;
    } finally {
      this.depth--;
    }
  }

  private orExpr(): Expr {
    let left = this.andExpr();
    while (this.isName('or')) {
      const line = this.next().line;
      left = { t: 'or', left, right: this.andExpr(), line };
    }
    return left;
  }

  private andExpr(): Expr {
    let left = this.notExpr();
    while (this.isName('and')) {
      const line = this.next().line;
      left = { t: 'and', left, right: this.notExpr(), line };
    }
    return left;
  }

  private notExpr(): Expr {
    if (this.isName('not')) {
      const line = this.next().line;
      this.enter();
      try {
        return { t: 'not', arg: this.notExpr(), line };
      } finally {
        this.depth--;
      }
    }
    return this.compareExpr();
  }

  private compareExpr(): Expr {
    const line = this.cur.line;
    const first = this.math1();
    const ops: Array<[string, Expr]> = [];
    for (;;) {
      const c = this.cur;
      if (c.type === 'op' && ['==', '!=', '<', '>', '<=', '>='].includes(c.value)) {
        this.next();
        ops.push([c.value, this.math1()]);
      } else if (this.isName('in')) {
        this.next();
        ops.push(['in', this.math1()]);
      } else if (this.isName('not') && this.peek().type === 'name' && this.peek().value === 'in') {
        this.next();
        this.next();
        ops.push(['notin', this.math1()]);
      } else break;
    }
    return ops.length ? { t: 'compare', first, ops, line } : first;
  }

  private binary(next: () => Expr, ops: string[]): Expr {
    let left = next();
    while (this.cur.type === 'op' && ops.includes(this.cur.value)) {
      const t = this.next();
      left = { t: 'bin', op: t.value, left, right: next(), line: t.line };
    }
    return left;
  }
  private math1 = (): Expr => this.binary(this.concat, ['+', '-']);
  private concat = (): Expr => this.binary(this.math2, ['~']);
  private math2 = (): Expr => this.binary(this.pow, ['*', '/', '//', '%']);
  private pow = (): Expr => this.binary(() => this.unary(true), ['**']);

  private unary(withFilter: boolean): Expr {
    this.enter();
    try {
      const line = this.cur.line;
      let node: Expr;
      if (this.isOp('-')) {
        this.next();
        node = { t: 'neg', arg: this.unary(false), line };
      } else if (this.isOp('+')) {
        this.next();
        node = { t: 'pos', arg: this.unary(false), line };
      } else node = this.primary();
      node = this.postfix(node);
      return withFilter ? this.filterExpr(node) : node;
    } finally {
      this.depth--;
    }
  }

  private primary(): Expr {
    const t = this.next();
    const line = t.line;
    switch (t.type) {
      case 'name':
        switch (t.value) {
          case 'true':
          case 'True':
            return { t: 'const', v: true, line };
          case 'false':
          case 'False':
            return { t: 'const', v: false, line };
          case 'none':
          case 'None':
            return { t: 'const', v: null, line };
          default:
            return { t: 'name', name: t.value, line };
        }
      case 'string': {
        let v = t.value;
        while (this.cur.type === 'string') v += this.next().value;
        return { t: 'const', v, line };
      }
      case 'int': {
        const s = t.value.toLowerCase();
        const big = s.startsWith('0b') || s.startsWith('0o') || s.startsWith('0x') ? BigInt(s) : BigInt(s);
        const n = Number(big);
        return { t: 'const', v: Number.isSafeInteger(n) ? n : big, line };
      }
      case 'float': {
        const n = Number(t.value);
        return { t: 'const', v: Number.isInteger(n) ? new PyFloat(n) : n, line };
      }
      case 'op':
        if (t.value === '(') {
          if (this.isOp(')')) {
            this.next();
            return { t: 'tuple', items: [], line };
          }
          const first = this.expr();
          if (this.isOp(')')) {
            this.next();
            return first;
          }
          const items = [first];
          while (this.isOp(',')) {
            this.next();
            if (this.isOp(')')) break;
            items.push(this.expr());
          }
          this.expectOp(')');
          return { t: 'tuple', items, line };
        }
        if (t.value === '[') {
          const items: Expr[] = [];
          while (!this.isOp(']')) {
            if (items.length) this.expectOp(',');
            if (this.isOp(']')) break;
            items.push(this.expr());
          }
          this.next();
          return { t: 'list', items, line };
        }
        if (t.value === '{') {
          const keys: Expr[] = [];
          const values: Expr[] = [];
          while (!this.isOp('}')) {
            if (keys.length) this.expectOp(',');
            if (this.isOp('}')) break;
            keys.push(this.expr());
            this.expectOp(':');
            values.push(this.expr());
          }
          this.next();
          return { t: 'dict', keys, values, line };
        }
        break;
      default:
        break;
    }
    return this.err(`unexpected '${t.value || t.type}'`, t);
  }

  private postfix(node: Expr): Expr {
    for (;;) {
      const line = this.cur.line;
      if (this.isOp('.')) {
        this.next();
        const t = this.next();
        if (t.type === 'name') node = { t: 'getattr', obj: node, name: t.value, line };
        else if (t.type === 'int') node = { t: 'getitem', obj: node, key: { t: 'const', v: Number(t.value), line }, line };
        else this.err('expected name or number', t);
      } else if (this.isOp('[')) {
        this.next();
        node = this.subscript(node, line);
      } else if (this.isOp('(')) {
        node = this.call(node);
      } else return node;
    }
  }

  private subscript(obj: Expr, line: number): Expr {
    const part = (): Expr | null => (this.isOp(':') || this.isOp(']') || this.isOp(',') ? null : this.expr());
    const start = part();
    if (this.isOp(':')) {
      this.next();
      const stop = part();
      let step: Expr | null = null;
      if (this.isOp(':')) {
        this.next();
        step = part();
      }
      this.expectOp(']');
      return { t: 'slice', obj, start, stop, step, line };
    }
    if (start === null) this.err('expected subscript');
    if (this.isOp(',')) {
      const items = [start];
      while (this.isOp(',')) {
        this.next();
        if (this.isOp(']')) break;
        items.push(this.expr());
      }
      this.expectOp(']');
      return { t: 'getitem', obj, key: { t: 'tuple', items, line }, line };
    }
    this.expectOp(']');
    return { t: 'getitem', obj, key: start, line };
  }

  private callArgs(): { args: Expr[]; kwargs: Array<[string, Expr]>; star?: Expr; dstar?: Expr } {
    this.expectOp('(');
    const args: Expr[] = [];
    const kwargs: Array<[string, Expr]> = [];
    let star: Expr | undefined;
    let dstar: Expr | undefined;
    while (!this.isOp(')')) {
      if (args.length || kwargs.length || star || dstar) this.expectOp(',');
      if (this.isOp(')')) break;
      // *args and **kwargs (Jinja2's parse_call_args).
      if (this.isOp('*') || this.isOp('**')) {
        const two = this.next().value === '**';
        if (two) dstar = this.expr();
        else star = this.expr();
        continue;
      }
      if (this.cur.type === 'name' && this.peek().type === 'op' && this.peek().value === '=') {
        const kt = this.next();
        const k = kt.value;
        if (kwargs.some(([x]) => x === k)) this.err(`keyword argument repeated: ${k}`, kt);
        this.next();
        kwargs.push([k, this.expr()]);
      } else {
        if (kwargs.length) this.err('positional argument follows keyword argument');
        args.push(this.expr());
      }
    }
    this.next();
    return { args, kwargs, star, dstar };
  }

  private call(fn: Expr): Expr {
    const line = this.cur.line;
    return { t: 'call', fn, ...this.callArgs(), line };
  }

  private filterChain(arg: Expr | null): Expr[] {
    const out: Expr[] = [];
    for (;;) {
      const line = this.cur.line;
      let name = this.expectName();
      while (this.isOp('.')) {
        this.next();
        name += `.${this.expectName()}`;
      }
      const { args, kwargs } = this.isOp('(') ? this.callArgs() : { args: [], kwargs: [] };
      out.push({ t: 'filter', name, arg, args, kwargs, line });
      if (!this.isOp('|')) return out;
      this.next();
    }
  }

  private filterExpr(node: Expr): Expr {
    for (;;) {
      if (this.isOp('|')) {
        this.next();
        const line = this.cur.line;
        const name = this.expectName();
        const { args, kwargs } = this.isOp('(') ? this.callArgs() : { args: [], kwargs: [] };
        node = { t: 'filter', name, arg: node, args, kwargs, line };
      } else if (this.isName('is')) {
        const line = this.next().line;
        let negated = false;
        if (this.isName('not')) {
          this.next();
          negated = true;
        }
        let name = this.expectName();
        while (this.isOp('.')) {
          this.next();
          name += `.${this.expectName()}`;
        }
        let args: Expr[] = [];
        let kwargs: Array<[string, Expr]> = [];
        const c = this.cur;
        if (this.isOp('(')) ({ args, kwargs } = this.callArgs());
        else if (
          (['name', 'string', 'int', 'float'].includes(c.type) || (c.type === 'op' && (c.value === '[' || c.value === '{' || c.value === '-'))) &&
          !(c.type === 'name' && ['else', 'or', 'and', 'if'].includes(c.value))
        ) {
          if (this.isName('is')) this.err('You cannot chain multiple tests with is');
          args = [this.postfix(this.primary())];
        }
        node = { t: 'test', name, arg: node, args, kwargs, negated, line };
      } else if (this.isOp('(')) {
        node = this.call(node);
      } else return node;
    }
  }
}
