// `promptenc bench` run as a real subprocess on a tiny corpus. Benchmarks are not tests: this
// checks the shape of the result, that engines of one vocabulary agree on the tokens, that
// peers which do not apply are reported as missing with a reason, and that the SVG is
// well-formed XML with one bar per measured engine. It never checks a speed.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import * as harness from 'promptenc/bench';
import { type BenchHarness, PEER_NAMES, WORKLOAD_NAMES } from '../src/cli/bench.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const tmp = mkdtempSync(path.join(tmpdir(), 'promptenc-bench-'));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: root, env: { ...process.env, PROMPTENC_QUIET: '1' }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

// Until the lead registers `bench` in src/cli/main.ts, mount benchCommand() the same way
// main.ts mounts the other commands, so this test exercises the built command either way.
let registered = false;
async function bench(args: string[]): Promise<Run> {
  if (registered) return exec([cli, 'bench', ...args]);
  const mod = pathToFileURL(path.join(root, 'dist', 'cli', 'bench.js')).href;
  const code = `import { Command } from 'commander'; import { benchCommand } from ${JSON.stringify(mod)};
    const p = new Command('promptenc').exitOverride(); p.addCommand(benchCommand().exitOverride());
    try { await p.parseAsync(process.argv.slice(0, 1).concat(['x', ...process.argv.slice(1)])); }
    catch (e) { if (e && e.exitCode !== undefined) process.exitCode = e.exitCode === 0 ? 0 : 2; else { process.stderr.write(String(e && e.message)); process.exitCode = 1; } }`;
  return exec(['--input-type=module', '-e', code, '--', 'bench', ...args]);
}

/**
 * A minimal XML well-formedness check (no dependency): balanced and properly nested tags,
 * quoted attributes without raw '<', and '&' only as a known or numeric entity.
 * Returns the element names in document order.
 */
function checkXml(xml: string): Array<{ name: string; attrs: Record<string, string> }> {
  const elements: Array<{ name: string; attrs: Record<string, string> }> = [];
  const stack: string[] = [];
  const entity = /&(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/y;
  const checkText = (s: string, where: string) => {
    for (let i = 0; i < s.length; i++) {
      if (s[i] === '<') throw new Error(`raw '<' in ${where}`);
      if (s[i] === '&') {
        entity.lastIndex = i;
        if (!entity.test(s)) throw new Error(`bad entity in ${where}: ${s.slice(i, i + 12)}`);
      }
    }
  };
  let i = 0;
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  let seenRoot = false;
  while (i < body.length) {
    const lt = body.indexOf('<', i);
    const text = lt < 0 ? body.slice(i) : body.slice(i, lt);
    if (stack.length === 0 && text.trim() !== '') throw new Error(`text outside the root element: ${text.slice(0, 20)}`);
    checkText(text, 'text');
    if (lt < 0) break;
    const gt = body.indexOf('>', lt);
    if (gt < 0) throw new Error('unterminated tag');
    const tag = body.slice(lt + 1, gt);
    i = gt + 1;
    if (tag.startsWith('/')) {
      const name = tag.slice(1).trim();
      if (stack.pop() !== name) throw new Error(`mismatched </${name}>`);
      continue;
    }
    const selfClosing = tag.endsWith('/');
    const m = /^([A-Za-z_][\w.:-]*)((?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*\/?$/.exec(tag);
    if (!m) throw new Error(`malformed tag <${tag.slice(0, 40)}>`);
    if (stack.length === 0 && seenRoot) throw new Error('second root element');
    seenRoot = true;
    const attrs: Record<string, string> = {};
    for (const a of m[2]!.matchAll(/([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
      if (a[1]! in attrs) throw new Error(`duplicate attribute ${a[1]}`);
      const v = a[2] ?? a[3] ?? '';
      checkText(v, `attribute ${a[1]}`);
      attrs[a[1]!] = v;
    }
    elements.push({ name: m[1]!, attrs });
    if (!selfClosing) stack.push(m[1]!);
  }
  if (stack.length) throw new Error(`unclosed <${stack.join('>, <')}>`);
  return elements;
}

interface EngineJson {
  name: string;
  status: 'ok' | 'missing';
  version?: string;
  reason?: string;
  vocabulary?: string;
  encode?: { mbps: { median: number }; turns: number };
  agreement?: { tokens: number; idsHash: string; agrees: boolean | null };
}

const chart = path.join(tmp, 'out.svg');
let gpt4o: { run: Run; json: Record<string, any> };
let llama3: { run: Run; json: Record<string, any> };

beforeAll(async () => {
  registered = (await exec([cli, '--help'])).stdout.includes('bench');
  // Both runs at once: no speed is checked, only the structure.
  const [a, b] = await Promise.all([
    bench(['--model', 'gpt-4o', '--seconds', '1', '--corpus-size', '48KB', '--threads', '2', '--json', '--chart', chart]),
    bench(['--model', 'llama3', '--seconds', '0.3', '--corpus-size', '16KB', '--threads', '1', '--peers', 'tiktoken,gpt-tokenizer,ai-tokenizer', '--json']),
  ]);
  gpt4o = { run: a, json: a.code === 0 ? JSON.parse(a.stdout) : {} };
  llama3 = { run: b, json: b.code === 0 ? JSON.parse(b.stdout) : {} };
}, 120_000);

describe('promptenc bench --json', () => {
  it('exits 0 and reports machine, versions and the corpus', () => {
    expect(gpt4o.run.code, gpt4o.run.stderr).toBe(0);
    const r = gpt4o.json;
    expect(r.schema).toBe('promptenc-bench/1');
    expect(r.model).toBe('gpt-4o');
    expect(typeof r.machine.cpu).toBe('string');
    expect(r.machine.cpu.length).toBeGreaterThan(0);
    expect(r.machine.node).toBe(process.version);
    expect(r.corpus.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(r.corpus.bytes).toBeGreaterThan(40_000);
    expect(r.corpus.bytes).toBeLessThan(120_000);
    expect(Object.keys(r.corpus.composition).sort()).toEqual(['chat', 'cjk', 'code', 'emoji', 'prose']);
    // A version (or "not installed") for every engine that was asked for.
    expect(Object.keys(r.versions).sort()).toEqual([
      'ai-tokenizer',
      'gpt-tokenizer',
      'hf-tokenizers',
      'hypertok',
      'promptenc-js',
      'promptenc-native',
      'tiktoken',
    ]);
    for (const v of Object.values(r.versions)) expect(typeof v).toBe('string');
  });

  it('lists every engine as ok (with a version and samples) or missing (with a reason)', () => {
    const engines = gpt4o.json.engines as EngineJson[];
    expect(engines.map((e) => e.name)).toEqual(['promptenc-native', 'promptenc-js', 'hf-tokenizers', 'tiktoken', 'gpt-tokenizer', 'ai-tokenizer', 'hypertok']);
    for (const e of engines) {
      if (e.status === 'ok') {
        expect(e.version).toMatch(/\d+\.\d+/);
        expect(e.encode!.turns).toBeGreaterThan(0);
        expect(e.encode!.mbps.median).toBeGreaterThan(0);
      } else {
        expect(e.status).toBe('missing');
        expect(e.reason).toMatch(/\S/);
      }
    }
    // The JS backend is part of the library, so it is always measured.
    expect(engines.find((e) => e.name === 'promptenc-js')!.status).toBe('ok');
    const native = engines.find((e) => e.name === 'promptenc-native')!;
    if (native.status === 'missing') expect(native.reason).toMatch(/E_NATIVE_UNAVAILABLE|E_NATIVE_UNSUPPORTED/);
    expect(gpt4o.json.baseline).toBe(native.status === 'ok' ? 'promptenc-native' : 'promptenc-js');
  });

  it('token counts agree across engines of the same vocabulary, and the flags are consistent', () => {
    const r = gpt4o.json;
    const ok = (r.engines as EngineJson[]).filter((e) => e.status === 'ok');
    const ref = ok.find((e) => e.name === r.agreement.reference)!;
    expect(ref).toBeDefined();
    for (const e of ok) {
      expect(e.vocabulary).toBe('o200k_base');
      const same = e.agreement!.tokens === ref.agreement!.tokens && e.agreement!.idsHash === ref.agreement!.idsHash;
      expect(e.agreement!.agrees, e.name).toBe(same);
      expect(r.agreement.disagreeing.includes(e.name)).toBe(!same);
    }
    // These are exact implementations of the same vocabulary: they must agree.
    for (const name of ['promptenc-native', 'promptenc-js', 'hf-tokenizers', 'tiktoken', 'hypertok']) {
      const e = ok.find((x) => x.name === name);
      if (e) expect(e.agreement!.agrees, name).toBe(true);
    }
    // Every disagreement comes with where it happens.
    expect(r.agreement.differences.map((d: { engine: string }) => d.engine)).toEqual(r.agreement.disagreeing);
  });

  it('reports peers that do not speak the model vocabulary as missing with the reason', () => {
    expect(llama3.run.code, llama3.run.stderr).toBe(0);
    const engines = llama3.json.engines as EngineJson[];
    for (const name of ['tiktoken', 'gpt-tokenizer', 'ai-tokenizer']) {
      const e = engines.find((x) => x.name === name)!;
      expect(e.status).toBe('missing');
      expect(e.reason).toMatch(/not applicable/);
    }
    // --peers limits the peers; promptenc is always there.
    expect(engines.map((e) => e.name)).toEqual(['promptenc-native', 'promptenc-js', 'tiktoken', 'gpt-tokenizer', 'ai-tokenizer']);
    expect(llama3.json.agreement.ok).toBe(true);
    // llama3 has a chat template, so encodeChat is timed for each promptenc engine.
    const measured = engines.filter((e) => e.status === 'ok').map((e) => e.name);
    expect(llama3.json.chat.engines.map((c: { name: string }) => c.name)).toEqual(measured);
    // --seconds is a total budget: the thread-scaling curve is the native engine's only.
    expect(llama3.json.batch.engines.map((b: { name: string }) => b.name)).toEqual(measured.filter((n) => n === 'promptenc-native'));
    expect(llama3.json.settings.totalSeconds).toBe(0.3);
  });
});

describe('promptenc bench --workload', () => {
  let run: Run;
  let json: Record<string, any>;
  beforeAll(async () => {
    run = await bench([
      '--model',
      'gpt-4o',
      '--workload',
      'prose,rank-table',
      '--workload-size',
      '32KB',
      '--seconds',
      '0.3',
      '--peers',
      'hypertok,tiktoken',
      '--json',
    ]);
    json = run.code === 0 ? JSON.parse(run.stdout) : {};
  }, 120_000);

  it('reports each workload with its bytes and sha256, cold and warm, with ids checked', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(json.schema).toBe('promptenc-bench-workloads/1');
    expect(json.workloads.map((w: { name: string }) => w.name)).toEqual(['prose', 'rank-table']);
    for (const w of json.workloads) {
      expect(w.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(w.bytes).toBeGreaterThan(w.name === 'rank-table' ? 1_000_000 : 16_000);
      const engines = w.cells.map((c: { engine: string }) => c.engine);
      expect(engines[0]).toBe('promptenc-native');
      for (const c of w.cells) {
        expect(c.warm.cpuMbps.n, `${w.name} ${c.engine}`).toBeGreaterThanOrEqual(2);
        // A ratio only where the ids agree with the reference.
        if (c.agrees !== true) expect(c.warmRatio).toBeNull();
      }
      // tiktoken and hypertok are exact for o200k_base on text like this.
      for (const name of ['tiktoken', 'hypertok']) {
        const c = w.cells.find((x: { engine: string }) => x.engine === name);
        if (c) expect(c.agrees, `${w.name} ${name}`).toBe(true);
      }
      const ht = w.cells.find((x: { engine: string }) => x.engine === 'hypertok');
      if (ht) expect(ht.cold.cpuMbps.n).toBeGreaterThanOrEqual(1);
    }
  });

  it('rejects an unknown workload and flags that do not apply', async () => {
    const bad = await bench(['--model', 'gpt-4o', '--workload', 'poetry']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--workload: unknown workload "poetry"/);
    const mixed = await bench(['--model', 'gpt-4o', '--workload', 'prose', '--corpus-size', '64KB']);
    expect(mixed.code).not.toBe(0);
    expect(mixed.stderr).toMatch(/--workload/);
  });
});

describe('promptenc bench --chart', () => {
  it('writes well-formed SVG with exactly one bar per measured engine', () => {
    const svg = readFileSync(chart, 'utf8');
    const elements = checkXml(svg);
    expect(elements[0]!.name).toBe('svg');
    expect(elements[0]!.attrs.xmlns).toBe('http://www.w3.org/2000/svg');
    const bars = elements.filter((e) => e.name === 'rect' && e.attrs.class === 'bar').map((e) => e.attrs['data-engine']);
    const measured = (gpt4o.json.engines as EngineJson[]).filter((e) => e.status === 'ok').map((e) => e.name);
    expect(bars).toEqual(measured);
    expect(elements.some((e) => e.name === 'polyline' && e.attrs.class === 'series')).toBe(true);
    expect(elements.some((e) => e.name === 'script')).toBe(false);
  });

  it('the XML check itself rejects malformed input', () => {
    expect(() => checkXml('<svg><g></svg>')).toThrow(/mismatched/);
    expect(() => checkXml('<svg><text>a & b</text></svg>')).toThrow(/entity/);
    expect(() => checkXml('<svg a="1" a="2"/>')).toThrow(/duplicate/);
    expect(() => checkXml('<svg><text>x</text>')).toThrow(/unclosed/);
  });
});

describe('promptenc bench usage errors', () => {
  it('needs --model or --tokenizer and validates numbers', async () => {
    const none = await bench(['--seconds', '1']);
    expect(none.code).toBe(registered ? 2 : 1);
    const bad = await bench(['--model', 'gpt-4o', '--seconds', 'fast']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--seconds/);
  });
});

describe('promptenc/bench, the harness the command loads', () => {
  it('has the shape the command expects (type-checked) and the names its --help lists', () => {
    const shape: BenchHarness = harness;
    expect(typeof shape.runBench).toBe('function');
    expect([...harness.PEER_NAMES]).toEqual([...PEER_NAMES]);
    expect([...harness.WORKLOAD_NAMES]).toEqual([...WORKLOAD_NAMES]);
  });
});
