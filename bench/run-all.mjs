// Runs the whole suite (one child process per question, so no bench inherits another's
// heap or loaded peers) and writes bench/results/latest.md and latest.json.
// Build first: npx tsc -p tsconfig.json (done here when dist/ is missing or older than src/).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchDir, root } from './_common.mjs';

const resultsDir = path.join(benchDir, 'results');
mkdirSync(resultsDir, { recursive: true });

if (!existsSync(path.join(root, 'dist', 'bench', 'run.js'))) {
  process.stderr.write('run-all: building (npx tsc -p tsconfig.json)\n');
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
}

const suite = [
  'encode-throughput',
  'workloads',
  'linearity',
  'session-append',
  'adversarial',
  'load-time',
  'call-overhead',
  'incremental',
  'render',
  'added-tokens',
];

function run(name) {
  return new Promise((resolve) => {
    const jsonOut = path.join(resultsDir, `${name}.json`);
    const t0 = Date.now();
    const child = spawn(process.execPath, [path.join(benchDir, `${name}.mjs`), '--json-out', jsonOut], {
      cwd: root,
      env: { ...process.env, PROMPTENC_QUIET: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      process.stdout.write(d);
    });
    child.on('close', (code) => {
      let json;
      try {
        json = JSON.parse(readFileSync(jsonOut, 'utf8'));
      } catch {
        json = undefined;
      }
      resolve({ name, code, seconds: (Date.now() - t0) / 1000, markdown: out.trim(), json });
    });
  });
}

function lscpuModel() {
  try {
    const line = execFileSync('lscpu', { encoding: 'utf8' })
      .split('\n')
      .find((l) => l.startsWith('Model name'));
    return line ? line.split(':').slice(1).join(':').trim() : undefined;
  } catch {
    return undefined;
  }
}

function gitRev() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

const started = new Date();
const load0 = os.loadavg();
const runs = [];
for (const name of suite) {
  process.stderr.write(`\n== ${name}\n`);
  process.stdout.write(`\n## ${name}\n\n`);
  runs.push(await run(name));
}
const machine = {
  cpu: lscpuModel() ?? os.cpus()[0]?.model,
  cores: os.cpus().length,
  memGB: Math.round(os.totalmem() / 1e9),
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  loadavgStart: load0.map((x) => Math.round(x * 100) / 100),
  loadavgEnd: os.loadavg().map((x) => Math.round(x * 100) / 100),
};
const nativeBuilt = existsSync(path.join(root, 'build', 'Release', 'promptenc.node'));
const header = [
  '# promptenc benchmarks',
  '',
  `- date: ${started.toISOString()} · git ${gitRev()}`,
  `- machine: ${machine.cpu} · ${machine.cores} cores · ${machine.memGB} GB · ${machine.platform} · node ${machine.node}`,
  `- load average at start / end: ${machine.loadavgStart.join(' ')} / ${machine.loadavgEnd.join(' ')}${machine.loadavgStart[0] > machine.cores ? ' (the machine was busy: treat absolute MB/s as lower bounds; the same-run ratios are the comparable figures)' : ''}`,
  `- native addon: ${nativeBuilt ? 'build/Release/promptenc.node present' : 'not built (promptenc-native reported as missing)'}`,
  '',
];
const body = runs.map((r) => `## ${r.name} (${r.seconds.toFixed(0)} s${r.code ? `, exit ${r.code}` : ''})\n\n${r.markdown}\n`);
writeFileSync(path.join(resultsDir, 'latest.md'), `${header.join('\n')}\n${body.join('\n')}`);
writeFileSync(
  path.join(resultsDir, 'latest.json'),
  `${JSON.stringify({ date: started.toISOString(), git: gitRev(), machine, nativeBuilt, benches: Object.fromEntries(runs.map((r) => [r.name, { exitCode: r.code, seconds: r.seconds, result: r.json }])) }, null, 2)}\n`,
);
process.stderr.write(
  `\nrun-all: wrote ${path.relative(root, resultsDir)}/latest.md and latest.json (${((Date.now() - started.getTime()) / 1000).toFixed(0)} s)\n`,
);
process.exitCode = runs.some((r) => r.code) ? 1 : 0;
