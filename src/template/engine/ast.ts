/** The syntax tree (the shape of jinja2/nodes.py, reduced to what chat templates use). */
export type Expr =
  | { t: 'const'; v: unknown; line: number }
  | { t: 'name'; name: string; line: number }
  | { t: 'list'; items: Expr[]; line: number }
  | { t: 'tuple'; items: Expr[]; line: number }
  | { t: 'dict'; keys: Expr[]; values: Expr[]; line: number }
  | { t: 'getattr'; obj: Expr; name: string; line: number }
  | { t: 'getitem'; obj: Expr; key: Expr; line: number }
  | { t: 'slice'; obj: Expr; start: Expr | null; stop: Expr | null; step: Expr | null; line: number }
  | { t: 'call'; fn: Expr; args: Expr[]; kwargs: Array<[string, Expr]>; star?: Expr; dstar?: Expr; line: number }
  | { t: 'filter'; name: string; arg: Expr | null; args: Expr[]; kwargs: Array<[string, Expr]>; line: number }
  | { t: 'test'; name: string; arg: Expr; args: Expr[]; kwargs: Array<[string, Expr]>; negated: boolean; line: number }
  | { t: 'bin'; op: string; left: Expr; right: Expr; line: number }
  | { t: 'compare'; first: Expr; ops: Array<[string, Expr]>; line: number }
  | { t: 'and' | 'or'; left: Expr; right: Expr; line: number }
  | { t: 'not' | 'neg' | 'pos'; arg: Expr; line: number }
  | { t: 'cond'; test: Expr; yes: Expr; no: Expr | null; line: number };

export type Target = { t: 'name'; name: string } | { t: 'tuple'; items: Target[] } | { t: 'attr'; obj: string; name: string };

export interface MacroArg {
  name: string;
  default: Expr | null;
}

export type Stmt =
  | { t: 'text'; v: string; line: number }
  | { t: 'output'; e: Expr; line: number }
  | { t: 'if'; test: Expr; body: Stmt[]; else: Stmt[]; line: number }
  | {
      t: 'for';
      target: Target;
      iter: Expr;
      cond: Expr | null;
      recursive: boolean;
      body: Stmt[];
      else: Stmt[];
      line: number;
      /** Set by the compiler: a top-level loop over `messages`, rendered incrementally. */
      id: number;
    }
  | { t: 'set'; target: Target; e: Expr; line: number }
  | { t: 'setblock'; target: Target; filters: Expr[]; body: Stmt[]; line: number }
  | { t: 'macro'; name: string; args: MacroArg[]; body: Stmt[]; line: number; id: number }
  | { t: 'callblock'; call: Expr; args: MacroArg[]; body: Stmt[]; line: number; id: number }
  | { t: 'filterblock'; filters: Expr[]; body: Stmt[]; line: number }
  | { t: 'with'; targets: Target[]; values: Expr[]; body: Stmt[]; line: number }
  | { t: 'break' | 'continue'; line: number }
  | { t: 'generation'; body: Stmt[]; line: number };
