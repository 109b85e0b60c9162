import type { Expr, MacroArg, Stmt, Target } from './ast.js';
import { tokenize } from './lexer.js';
import { ExprParser } from './parser-expr.js';

/**
 * Jinja2's parser (jinja2/parser.py): the statements chat templates use (expressions are
 * parser-expr.ts), plus transformers' `{% generation %}` and the loopcontrols
 * extension's break/continue. include/import/extends/block need a loader: a syntax error here.
 */
export function parse(source: string, maxDepth: number): Stmt[] {
  return new Parser(tokenize(source), maxDepth).template();
}

const END_TAGS = new Set(['endblock', 'endfor', 'endif', 'elif', 'else', 'endset', 'endmacro', 'endcall', 'endfilter', 'endwith', 'endgeneration']);

class Parser extends ExprParser {
  /** Loops open around the current statement (break/continue need one; a macro body starts afresh). */
  private loops = 0;
  private ids = 0;

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
}
