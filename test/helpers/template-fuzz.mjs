// Differential fuzzing of incremental rendering (src/template/engine/memo.ts via render.ts): random templates
// built from blocks that stress the reuse rule (loop-scope variables set in some iterations or
// first set late, namespaces, recorded comparisons, loop.* and messages[...] reads, identity
// tests, tool calls) against random edit scripts; every step's incremental render must equal a
// full render (or both must throw the same message). A stale loop-scope snapshot fails 13
// seeds in 3,000 (see incremental-fuzz.test).
import { rng } from '../../bench/helpers/conversation.mjs';

const PRELUDE = [
  `{% set ns = namespace(c=0, last='none', lu=-1, flag=false, s='') %}{% macro show(mm) %}{{ mm.role }}/{{ ns.c }}{% endmacro %}`,
  `{% set g = messages|length %}`,
  `{% set first = messages[0].content if messages else '' %}`,
];
const PREPASS = `{% for m in messages %}{% if m.role == 'user' %}{% set ns.lu = loop.index0 %}{% endif %}{% endfor %}`;
const BODY = [
  `{{ m.role }}:{{ m.content }};`,
  `{% set x = m.role %}`,
  `[x={{ x }}]`,
  `{% if m.role == 'user' %}{% set u = loop.index0 %}{% endif %}`,
  `(u{{ u }})`,
  `{% if loop.index0 == K %}{% set late = m.content %}{% endif %}`,
  `{% if late is defined %}[late={{ late }}]{% endif %}`,
  `{% set ns.c = ns.c + 1 %}`,
  `#{{ ns.c }}`,
  `{% if loop.previtem is defined %}<{{ loop.previtem.role }}{% endif %}`,
  `{% if loop.nextitem is defined %}>{{ loop.nextitem.content }}{% endif %}`,
  `{% if loop.last %}LAST{% endif %}`,
  `{{ loop.length }}`,
  `{% if not loop.first %}{{ messages[loop.index0 - 1].role }}{% endif %}`,
  `{% if loop.index0 > ns.lu %}AFTER{% endif %}`,
  `{% if ns.last == m.role %}same{% endif %}{% set ns.last = m.role %}`,
  `{% if m.role == 'assistant' %}{% set a = 1 %}{% else %}{% set b = m.content %}{% endif %}`,
  `{{ a }}{{ b }}`,
  `{% if m == loop.previtem %}DUP{% endif %}`,
  `{% if m == messages[0] %}FIRST{% endif %}`,
  `{% if loop.previtem is defined and loop.previtem.content == m.content %}EQ{% endif %}`,
  `{% set cnt = (cnt if cnt is defined else 0) + 1 %}{{ cnt }}`,
  `{% set acc = (acc if acc is defined else '') ~ m.role[0] %}{{ acc }}`,
  `{{ g }}`,
  `{% if m.content == first %}F{% endif %}`,
  `{% if loop.revindex0 == 1 %}PEN{% endif %}`,
  `{% if m.role == 'tool' %}{% set t = true %}{% endif %}{% if t %}T{% endif %}`,
  `{% set f = loop.index / 2 %}{{ f }}`,
  `{% if m.role == 'system' %}{% set nn = none %}{% else %}{% set nn = loop.index %}{% endif %}{{ nn }}`,
  `{% set ns.flag = (m.role == 'tool') or ns.flag %}{{ ns.flag }}`,
  `{% if m.content == 'x' %}{% set z = loop.index0 %}{% endif %}{% if z is defined %}z{{ z }}{% endif %}`,
  `{{ messages[loop.index0 + 1].role if not loop.last else '' }}`,
  `{% if loop.index0 == 0 %}{% set k0 = 'k' %}{% elif loop.index0 == 1 %}{% set k1 = 'k' %}{% else %}{% set k2 = m.role %}{% endif %}{{ k0 }}{{ k1 }}{{ k2 }}`,
  `{% if m.role == 'user' %}{% set x = loop.index %}{% endif %}`,
  `{{ add_generation_prompt }}`,
  `{% if m.tool_calls %}{% for tc in m.tool_calls %}<{{ tc.function.name }} {{ tc.function.arguments | tojson }}>{% endfor %}{% endif %}`,
  `{% if m.tool_calls %}{% set tcn = m.tool_calls[0].function.name %}{% endif %}{{ tcn }}`,
  `{% if m == loop.nextitem %}NDUP{% endif %}`,
  `{% if loop.index0 > 0 and m == messages[loop.index0 - 1] %}PDUP{% endif %}`,
  `{% if m.content is string %}{% set cl = m.content|length %}{% endif %}{{ cl }}`,
  `{% set ns.c = ns.c + (1 if m.role == 'user' else 0) %}{% if ns.c == 2 %}TWO{% endif %}`,
  `{% if m.role == 'assistant' and loop.index0 > ns.lu %}LIVE{% endif %}`,
  `{% if loop.index0 == K %}{% set ns.last = 'K' %}{% endif %}`,
  `{% set y %}{{ m.role }}{{ loop.index }}{% endset %}{{ y }}`,
  `{{ loop.revindex }}{{ loop.first }}`,
  `{% if loop.nextitem is defined and loop.nextitem.role == m.role %}SAME-NEXT{% endif %}`,
  `{{ messages|length }}`,
  `{{ (messages[loop.index0 + 1].content if loop.index0 + 1 < messages|length else 'END') }}`,
  `{{ (messages|last).role }}`,
  `{% if m == messages[-1] %}ISLAST{% endif %}`,
  `{% if m == (messages|last) %}ISLAST2{% endif %}`,
  `{% if loop.nextitem is defined and loop.nextitem == messages[-1] %}NL{% endif %}`,
  `{% if m in [messages[0], messages[-1]] %}END{% endif %}`,
  `{{ (messages|first).content }}`,
  `{% if m.content in ['a', 'b'] %}AB{% endif %}`,
  `{% for c in m.content %}{% set cc = c %}{% endfor %}{{ cc }}`,
  `{% filter upper %}{{ m.content }}{% endfilter %}`,
  `{% if m.role == 'tool' %}{% set ns.later = m.content %}{% endif %}{{ ns.later }}`,
  `{% if ns.later is defined %}NL{% endif %}`,
  `{% if ns.c == cnt %}NC{% endif %}`,
  `{{ show(m) }}`,
  `{% set ns.s = ns.s ~ m.role[0] %}{{ ns.s }}`,
  `{% if loop.index % 2 == 0 %}E{% endif %}`,
  `{% if m is mapping and m.content is defined %}M{% endif %}`,
  `{{ m.content ~ (late if late is defined else '') }}`,
  `{% if x is defined and x == m.role %}XR{% endif %}`,
  `{{ m|tojson }}`,
  `{% if messages[loop.index0 - 1] is defined %}{{ messages[loop.index0 - 1].content }}{% endif %}`,
  `{{ messages[loop.index0].role }}`,
  `{% if m.role == 'user' %}{% set ns.lastuser = m.content %}{% endif %}{% if m.role == 'assistant' %}{{ ns.lastuser }}{% endif %}`,
];
/**
 * Blocks only in templates made with `extra` (added later: the original list keeps its seeds):
 * reads of later messages by position, and a namespace read whole; such templates may also
 * print something before the loops only with add_generation_prompt or while the list is short.
 */
const EXTRA = [
  `{% if messages[loop.index0 + 2] is defined %}+{{ messages[loop.index0 + 2].role }}{% endif %}`,
  `{% if messages[3] is defined %}{{ messages[3].content }}{% endif %}`,
  `{{ ns|tojson }}`,
];
const POST = [`|{{ ns.c }}|{{ ns.last }}|{{ ns.lu }}|{{ ns.later }}|{{ ns.s }}`, `{% if add_generation_prompt %}<gen>{% endif %}`];

/**
 * The namespace family (for the loop's reused prefix; a rule that ignores key order fails
 * it): keys created mid-loop, read or compared before their first write,
 * created before the loop in an order that depends on the list, printed whole, a second namespace.
 */
const NS_PRELUDES = [
  `{% set ns = namespace(c=0, last='none', lu=-1) %}`,
  `{% set ns = namespace() %}`,
  `{% set ns = namespace(c=0) %}{% set ns2 = namespace() %}`,
];
const NS_PRE = [
  `{% for m in messages %}{% if m.role == 'user' %}{% set ns.lu = loop.index0 %}{% endif %}{% endfor %}`,
  `{% for m in messages %}{% if m.role == 'tool' %}{% set ns.t = 1 %}{% endif %}{% if m.role == 'system' %}{% set ns.s = 1 %}{% endif %}{% endfor %}`,
  `{% if messages|length > 2 %}{% set ns.p = 1 %}{% set ns.q = 1 %}{% else %}{% set ns.q = 1 %}{% set ns.p = 1 %}{% endif %}`,
  `{% if messages|length % 2 == 0 %}{% set ns.e = 'even' %}{% endif %}`,
  `{% for m in messages %}{% set ns.r = m.role %}{% endfor %}`,
  `{% set ns.n = messages|length %}`,
];
const NS_BODY = [
  `{{ m.role }}:{{ m.content }};`,
  `{{ ns|tojson }}`,
  `{{ ns }}`,
  `{{ ns.v }}{% set ns.v = m.role %}`,
  `{% if m.role == 'user' %}{% set ns.u = loop.index0 %}{% endif %}`,
  `{% if ns.u is defined %}U{{ ns.u }}{% endif %}`,
  `{% if ns.w == 'user' %}W{% endif %}{% if m.role == 'tool' %}{% set ns.w = m.role %}{% endif %}`,
  `{% if loop.index0 == K %}{% set ns.k = loop.index0 %}{% endif %}`,
  `{% if loop.index0 > ns.lu %}AFTER{% endif %}`,
  `{% if ns.c == K %}CK{% endif %}`,
  `{% set ns.c = ns.c + 1 %}`,
  `{% if ns.r == m.role %}R{% endif %}`,
  `{% if ns.t %}T{% endif %}`,
  `{% if ns.e is defined %}E{% endif %}`,
  `{% if m.role == 'system' %}{% set ns.sys = 1 %}{% endif %}`,
  `{% if ns.p == ns.q %}PQ{% endif %}`,
  `{% set x = m.role %}`,
  `{{ x }}`,
  `{% if loop.last %}L{% endif %}`,
  `{% if loop.nextitem is defined %}>{{ loop.nextitem.role }}{% endif %}`,
  `{% if messages[loop.index0 + 1] is defined %}+{% endif %}`,
  ``,
  `{% if m.role == 'assistant' %}{{ m.content }}{% endif %}`,
  `{% if ns2 is defined %}{% set ns2.z = loop.index0 %}{{ ns2 }}{% endif %}`,
  `{% if ns2 is defined and m.role == 'user' %}{% set ns2['y'] = 1 %}{% endif %}`,
  `{% if ns.zz is not defined %}{% set ns.zz = m.content %}{% endif %}{{ ns.zz }}`,
  `{% if ns.q is defined and ns.q == 1 %}{% set ns.q = 2 %}{% endif %}`,
  `{% for k in ns %}{{ k }}{% endfor %}`,
  `{% if ns.n is defined %}{% if ns.n > K + 1 %}G{% endif %}{% if ns.n <= K + 2 %}le{% endif %}{% if K + 3 >= ns.n %}r{% endif %}{% if ns.n == K + 3 %}eq{% endif %}{% endif %}`,
];
const NS_POST = [`|{{ ns }}`, `|{{ ns|tojson }}`, `{% if add_generation_prompt %}<gen>{% endif %}`, `{% if ns2 is defined %}{{ ns2 }}{% endif %}`];

export function makeNamespaceTemplate(r) {
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  let s = pick(NS_PRELUDES);
  for (const p of NS_PRE) if (r() < 0.3) s += p;
  if (r() < 0.3) s += `{% if messages|length < 4 %}[short]{% endif %}`;
  const loops = r() < 0.3 ? 2 : 1;
  for (let l = 0; l < loops; l++) {
    const n = 1 + Math.floor(r() * 6);
    let body = '';
    for (let i = 0; i < n; i++) body += pick(NS_BODY).replace('K', String(Math.floor(r() * 4)));
    s += `{% for m in messages %}${body}{% endfor %}`;
    if (r() < 0.3) s += pick(NS_POST);
  }
  for (const p of NS_POST) if (r() < 0.3) s += p;
  return s;
}

/** A random template: a namespace prelude, maybe a pre-pass, one or two loops of random body blocks, maybe an epilogue. */
export function makeTemplate(r, extra = false) {
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const blocks = extra ? [...BODY, ...EXTRA, ...EXTRA, ...EXTRA] : BODY;
  let s = PRELUDE[0];
  for (let i = 1; i < PRELUDE.length; i++) if (r() < 0.4) s += PRELUDE[i];
  if (r() < 0.4) s += PREPASS;
  // Output before the loops that comes and goes (the loop's first piece moves).
  if (extra && r() < 0.5) s += r() < 0.5 ? `{% if add_generation_prompt %}[agp]{% endif %}` : `{% if messages|length < 4 %}[short]{% endif %}`;
  const loops = r() < 0.25 ? 2 : 1;
  for (let l = 0; l < loops; l++) {
    const n = 2 + Math.floor(r() * 7);
    let body = '';
    for (let i = 0; i < n; i++) body += pick(blocks).replace('K', String(Math.floor(r() * 4)));
    if (r() < 0.5) body = `{{ m.content }}${body}`;
    s += `{% for m in messages %}${body}\n{% endfor %}`;
  }
  for (const p of POST) if (r() < 0.5) s += p;
  return s;
}

const ROLES = ['user', 'assistant', 'system', 'tool'];
const CONTENTS = ['a', 'b', 'x', 'hello', 'a'];
function msg(r) {
  const role = ROLES[Math.floor(r() * ROLES.length)];
  if (role === 'assistant' && r() < 0.3) {
    const args = r() < 0.5 ? JSON.stringify({ p: CONTENTS[Math.floor(r() * 3)] }) : { p: CONTENTS[Math.floor(r() * 3)] };
    return { role, content: r() < 0.5 ? '' : 'x', tool_calls: [{ id: 'c', type: 'function', function: { name: r() < 0.5 ? 'f' : 'g', arguments: args } }] };
  }
  return { role, content: CONTENTS[Math.floor(r() * CONTENTS.length)] };
}

/** A random edit script: appends, pops, inserts, deletes, in-place edits, copies, aliases, swaps, JSON copies, add_generation_prompt toggles. */
export function* script(r, steps, start = 1) {
  let messages = [];
  for (let q = 0; q < start; q++) messages.push(msg(r));
  let agp = true;
  for (let s = 0; s < steps; s++) {
    const op = Math.floor(r() * 15);
    const i = Math.floor(r() * Math.max(1, messages.length));
    const j = Math.floor(r() * Math.max(1, messages.length));
    let desc;
    switch (op) {
      case 0:
      case 1: {
        const k = 1 + Math.floor(r() * 2);
        for (let q = 0; q < k; q++) messages = [...messages, msg(r)];
        desc = `append ${k}`;
        break;
      }
      case 2: {
        const k = 1 + Math.floor(r() * 2);
        messages = messages.slice(0, Math.max(0, messages.length - k));
        desc = `pop ${k}`;
        break;
      }
      case 3:
        messages = [...messages.slice(0, i), msg(r), ...messages.slice(i)];
        desc = `insert at ${i}`;
        break;
      case 4:
        messages = [...messages.slice(0, i), ...messages.slice(i + 1)];
        desc = `delete ${i}`;
        break;
      case 5:
        if (messages[i]) {
          messages[i].content = CONTENTS[Math.floor(r() * CONTENTS.length)];
        }
        desc = `inplace content ${i}`;
        break;
      case 13:
        if (messages[i]?.tool_calls) {
          const a = messages[i].tool_calls[0].function;
          a.arguments = typeof a.arguments === 'string' ? JSON.parse(a.arguments) : JSON.stringify(a.arguments);
        }
        desc = `args form ${i}`;
        break;
      case 6:
        if (messages[i]) {
          messages[i].role = ROLES[Math.floor(r() * ROLES.length)];
        }
        desc = `inplace role ${i}`;
        break;
      case 7:
        if (messages[j]) {
          messages = [...messages];
          messages[i] = { ...messages[j] };
        }
        desc = `copy ${j} -> ${i}`;
        break;
      case 8:
        if (messages[j]) messages = [...messages, messages[j]];
        desc = `push same object ${j}`;
        break;
      case 9:
        if (messages[i] && messages[j]) {
          messages = [...messages];
          [messages[i], messages[j]] = [messages[j], messages[i]];
        }
        desc = `swap ${i} ${j}`;
        break;
      case 10:
        messages = JSON.parse(JSON.stringify(messages));
        desc = 'json copy';
        break;
      case 11:
        agp = !agp;
        desc = `agp ${agp}`;
        break;
      case 12:
        if (messages[j]) {
          messages = [...messages];
          messages[i] = messages[j];
        }
        desc = `alias ${j} at ${i}`;
        break;
      default:
        desc = 'same';
        break;
    }
    yield { messages, agp, desc };
  }
}

/**
 * One seeded case: a template and an edit script of `steps` steps starting from `start` messages,
 * rendered with `compileTemplate` and a `RenderMemo` (passed in, so tests use the sources).
 * mode 'kwargs' passes the list as kwargs.messages (no message cache: more position lookups).
 * Returns { ok: true, reused } or the first mismatch with the template and the edit history.
 * @param {{ compileTemplate: Function, RenderMemo: Function }} lib the sources under test
 * @param {number} seed
 * @param {number} [steps]
 * @param {'cache' | 'kwargs'} [mode]
 * @param {number} [start]
 * @param {boolean | 'namespace'} [extra] true: the extended family; 'namespace': the namespace family
 */
export function runCase({ compileTemplate, RenderMemo }, seed, steps = 25, mode = 'cache', start = 1, extra = false) {
  const r = rng(seed);
  const source = extra === 'namespace' ? makeNamespaceTemplate(r) : makeTemplate(r, extra);
  let template;
  try {
    template = compileTemplate(source);
  } catch (e) {
    if (extra !== 'namespace') throw e;
    return { ok: true, reused: 0 }; // `{% for k in ns %}` does not parse in some spots: nothing to compare
  }
  const memo = new RenderMemo();
  const hist = [];
  let reused = 0;
  let prevText;
  for (const { messages, agp, desc } of script(r, steps, start)) {
    const sp = { bos_token: '<s>', eos_token: '</s>' };
    const ctx =
      mode === 'cache'
        ? { messages, addGenerationPrompt: agp, specialTokens: sp }
        : { messages: [], kwargs: { messages }, addGenerationPrompt: agp, specialTokens: sp };
    hist.push(`${desc}: ${JSON.stringify(messages)} agp=${agp}`);
    let want, wantError, got, gotError;
    try {
      want = template.render(ctx);
    } catch (e) {
      wantError = e;
    }
    try {
      got = template.renderIncremental(ctx, memo);
    } catch (e) {
      gotError = e;
    }
    if (wantError || gotError) {
      if (!(wantError && gotError && wantError.message === gotError.message))
        return { seed, source, hist, want: wantError?.message ?? want, got: gotError?.message ?? got?.text };
      continue;
    }
    reused += memo.reused;
    if (got.text !== want || (got.pieces && got.pieces.join('') !== want)) return { seed, source, hist, want, got: got.text };
    // The prefix the render certifies it shares with the previous render's text must be shared.
    if (
      got.common >= 0 &&
      (prevText === undefined || got.common > Math.min(prevText.length, want.length) || prevText.slice(0, got.common) !== want.slice(0, got.common))
    ) {
      return { seed, source, hist, want, got: `common ${got.common} against ${JSON.stringify(prevText)}` };
    }
    prevText = want;
  }
  return { ok: true, reused };
}
