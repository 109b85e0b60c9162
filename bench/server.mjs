// Question: what does `promptenc serve` sustain over loopback HTTP, and what do the native core
// and session_id buy there? Requests/s and p50/p99 latency for 1 KB prompts (POST /tokenize),
// 100 KB chat histories (POST /tokenize, chat form) and a growing 200k-token conversation
// (one request per turn, with and without session_id). The control is the same server on the
// JS backend (--backend js), measured in the same run, the two servers alternating scenario by
// scenario. Load: autocannon from this process, bounded in time (RUN_S seconds per run).
// Run `npx tsc -p tsconfig.json` first. Writes bench/results/server.json and server.md.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { loadTokenizer } from '../dist/index.js';
import { agentHistory, bigText, rng } from './helpers/conversation.mjs';
import { benchDir, envNumber, f, machine, median, root, table, writeJson } from './_common.mjs';

const MODEL = 'deepseek-v3';
const RUN_S = envNumber('RUN_S', 4);
const TURNS = envNumber('TURNS', 24);

function startServer(extra) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(root, 'dist/cli/main.js'), 'serve', '--model', MODEL, '--host', '127.0.0.1', '--port', '0', '--max-body', '64mb', ...extra],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    let out = '';
    const timer = setTimeout(() => reject(new Error('server did not start in 60 s')), 60_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
  });
}

function stopServer(s) {
  return new Promise((resolve) => {
    s.child.once('exit', resolve);
    s.child.kill('SIGTERM');
  });
}

async function cannon(url, body, connections) {
  const r = await autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections, duration: RUN_S });
  if (r.errors > 0 || r.non2xx > 0) throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx answers`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, requests: r.requests.total };
}

/** One request per turn of a conversation that grows from `history`, in order (a session must see each turn). */
async function growing(url, bodies) {
  const times = [];
  for (const body of bodies) {
    const t0 = performance.now();
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    if (r.status !== 200) throw new Error(`${url}: status ${r.status}: ${(await r.text()).slice(0, 200)}`);
    await r.arrayBuffer();
    times.push(performance.now() - t0);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
  return { rps: 1000 / (times.reduce((a, b) => a + b, 0) / times.length), p50: median(times), p99, requests: times.length };
}

const tok = await loadTokenizer(MODEL);
const r = rng(5);
const small = JSON.stringify({ prompt: bigText(r, 1024).slice(0, 1024) });
const chat100k = JSON.stringify({ messages: agentHistory(tok, 25_000) });
const history = agentHistory(tok, 200_000);
const turns = Array.from({ length: TURNS }, (_, t) => [
  { role: 'user', content: `${bigText(r, 300)} (turn ${t})` },
  { role: 'assistant', content: bigText(r, 400) },
]);
const bodiesFor = (sessionId) => {
  let messages = history;
  return turns.map((turn) => {
    messages = [...messages, ...turn];
    // Each request asks for the ids of the conversation so far, ending on the user turn.
    return JSON.stringify({ messages: messages.slice(0, -1), ...(sessionId ? { session_id: sessionId } : {}) });
  });
};

const servers = { native: await startServer([]), js: await startServer(['--backend', 'js']) };
const scenarios = [
  { name: '1 KB prompts, /tokenize', bytes: small.length, run: (url) => cannon(`${url}/tokenize`, small, 16) },
  { name: '100 KB chat histories, /tokenize', bytes: chat100k.length, run: (url) => cannon(`${url}/tokenize`, chat100k, 4) },
  {
    name: 'growing 200k-token conversation, no session_id',
    bytes: bodiesFor(undefined)[0].length,
    run: (url) => growing(`${url}/tokenize`, bodiesFor(undefined)),
  },
  {
    name: 'growing 200k-token conversation, session_id',
    bytes: bodiesFor('s')[0].length,
    run: (url, backend) => growing(`${url}/tokenize`, bodiesFor(`conv-${backend}-${Date.now()}`)),
  },
  // The same turns counted (/v1/responses/input_tokens, chat form): a small answer, so the
  // session's saving is not hidden behind serializing 200k ids.
  {
    name: 'growing conversation counted, no session_id',
    bytes: bodiesFor(undefined)[0].length,
    run: (url) => growing(`${url}/v1/responses/input_tokens`, bodiesFor(undefined)),
  },
  {
    name: 'growing conversation counted, session_id',
    bytes: bodiesFor('s')[0].length,
    run: (url, backend) => growing(`${url}/v1/responses/input_tokens`, bodiesFor(`count-${backend}-${Date.now()}`)),
  },
];

const results = [];
try {
  // Warm-up, untimed: both servers' JIT and native code paths.
  for (const s of Object.values(servers))
    await autocannon({ url: `${s.url}/tokenize`, method: 'POST', headers: { 'content-type': 'application/json' }, body: small, connections: 4, duration: 1 });
  for (const sc of scenarios) {
    const row = { scenario: sc.name, body_bytes: sc.bytes };
    // Alternate which backend goes first, so a busy moment of the machine does not favour one.
    const order = results.length % 2 === 0 ? ['native', 'js'] : ['js', 'native'];
    for (const backend of order) row[backend] = await sc.run(servers[backend].url, backend);
    row.native_over_js_rps = row.native.rps / row.js.rps;
    results.push(row);
    console.log(JSON.stringify(row));
  }
} finally {
  for (const s of Object.values(servers)) await stopServer(s);
}

const ratio = (a, b) => ({ native: results[b].native.rps / results[a].native.rps, js: results[b].js.rps / results[a].js.rps });
const data = {
  machine: { ...machine(), shared: 'a shared 2-core machine (other jobs running)' },
  model: MODEL,
  run_seconds: RUN_S,
  turns: TURNS,
  results,
  session_speedup: { tokenize: ratio(2, 3), count: ratio(4, 5) },
};
writeJson(path.join(benchDir, 'results', 'server.json'), data);
const rows = results.map((x) => [
  x.scenario,
  f(x.body_bytes / 1024, 0),
  f(x.native.rps, 0),
  f(x.native.p50, 1),
  f(x.native.p99, 1),
  f(x.js.rps, 0),
  f(x.js.p50, 1),
  f(x.js.p99, 1),
  `${f(x.native_over_js_rps, 2)}×`,
]);
const md = `# bench/server.mjs

${MODEL}, \`promptenc serve\` with default threads, loopback HTTP from autocannon (${RUN_S} s per run; the growing
conversation is ${TURNS} sequential turns on top of a ~200k-token history). Control: the same server with
\`--backend js\`, same run, alternating. Machine: ${data.machine.cpu}, ${data.machine.cores} cores, Node ${data.machine.node},
load average ${data.machine.loadavg.join(' / ')} (shared with other jobs). Latencies in ms.

${table(['scenario', 'body KB', 'native req/s', 'p50', 'p99', 'JS req/s', 'p50', 'p99', 'native / JS'], rows)}

session_id on the growing conversation, requests/s with it over without: /tokenize (answers all ~200k ids) ${f(data.session_speedup.tokenize.native, 1)}× native,
${f(data.session_speedup.tokenize.js, 1)}× JS backend; counted (small answer) ${f(data.session_speedup.count.native, 1)}× native, ${f(data.session_speedup.count.js, 1)}× JS backend.
`;
writeFileSync(path.join(benchDir, 'results', 'server.md'), md);
console.log(md);
