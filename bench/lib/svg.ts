/**
 * Plain SVG charts of a bench run: one bar per measured engine (median encode MB/s with an
 * IQR whisker) and a line chart of encodeBatch MB/s against threads. No scripts, no external
 * fonts or styles, every text node escaped, so the file is well-formed XML that any browser
 * renders as is.
 */
import type { BenchResult, EngineResult } from './run.js';

export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

const COLORS = ['#2563eb', '#16a34a', '#dc2626', '#9333ea', '#ea580c', '#0891b2', '#4b5563'];
const n = (x: number) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : 0);

/** A "nice" axis maximum: 1, 2 or 5 × 10^k at or above x. */
function niceMax(x: number): number {
  if (!(x > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

function text(x: number, y: number, s: string, attrs = ''): string {
  return `<text x="${n(x)}" y="${n(y)}"${attrs ? ` ${attrs}` : ''}>${escapeXml(s)}</text>`;
}

function barChart(r: BenchResult, y0: number, width: number): { svg: string; height: number } {
  const measured = r.engines.filter((e): e is EngineResult => e.status === 'ok');
  const missing = r.engines.filter((e) => e.status !== 'ok');
  const left = 170;
  const right = 90;
  const barH = 24;
  const gap = 10;
  const top = y0 + 40;
  const plotW = width - left - right;
  // A log axis: the peers span 1 to 200 MB/s, and on a linear axis the slow ones were slivers.
  const max = niceMax(Math.max(...measured.map((e) => e.encode.mbps.q3), ...measured.map((e) => e.encode.mbps.median), 0));
  const positive = measured.map((e) => e.encode.mbps.q1).filter((v) => v > 0);
  const lo = Math.min(max / 10, 10 ** Math.floor(Math.log10(positive.length ? Math.min(...positive) : max / 10)));
  const decades = Math.log10(max / lo);
  const scale = (v: number) => (v <= lo ? 0 : (plotW * Math.log10(v / lo)) / decades);
  const parts: string[] = [];
  parts.push(text(20, y0 + 20, `Encode throughput, MB/s, log scale (median, whisker = IQR) — ${r.model}`, 'class="title"'));
  const plotH = measured.length * (barH + gap);
  const ticks: number[] = [];
  for (let p = lo; p <= max * 1.0001; p *= 10) for (const m of decades <= 2 ? [1, 2, 5] : [1]) if (p * m <= max * 1.0001) ticks.push(p * m);
  for (const v of ticks) {
    const x = left + scale(v);
    parts.push(`<line x1="${n(x)}" y1="${n(top - 4)}" x2="${n(x)}" y2="${n(top + plotH)}" class="grid"/>`);
    parts.push(text(x, top + plotH + 16, `${v >= 1 ? n(v) : Number(v.toPrecision(1))}`, 'text-anchor="middle" class="tick"'));
  }
  measured.forEach((e, i) => {
    const y = top + i * (barH + gap);
    const w = scale(e.encode.mbps.median);
    const ratio = e.encode.ratio === null ? '' : ` (×${e.encode.ratio.toFixed(2)})`;
    parts.push(text(left - 8, y + barH / 2 + 4, e.name, 'text-anchor="end" class="label"'));
    parts.push(
      `<rect class="bar" data-engine="${escapeXml(e.name)}" x="${left}" y="${n(y)}" width="${n(Math.max(1, w))}" height="${barH}" fill="${COLORS[i % COLORS.length]}"><title>${escapeXml(
        `${e.name} ${e.version}: ${e.encode.mbps.median.toFixed(2)} MB/s, IQR ${e.encode.mbps.q1.toFixed(2)}–${e.encode.mbps.q3.toFixed(2)}, ${e.encode.turns} turns`,
      )}</title></rect>`,
    );
    const x1 = left + scale(e.encode.mbps.q1);
    const x3 = left + scale(e.encode.mbps.q3);
    parts.push(`<line x1="${n(x1)}" y1="${n(y + barH / 2)}" x2="${n(x3)}" y2="${n(y + barH / 2)}" class="whisker"/>`);
    parts.push(text(left + Math.max(w, x3 - left) + 6, y + barH / 2 + 4, `${e.encode.mbps.median.toFixed(2)}${ratio}`, 'class="value"'));
  });
  let y = top + plotH + 36;
  for (const m of missing) {
    parts.push(text(20, y, `${m.name}: missing — ${m.status === 'missing' ? m.reason : ''}`.slice(0, 150), 'class="note"'));
    y += 16;
  }
  return { svg: parts.join('\n'), height: y - y0 + 10 };
}

function scalingChart(r: BenchResult, y0: number, width: number): { svg: string; height: number } {
  const curves = r.batch?.engines ?? [];
  if (curves.length === 0) return { svg: '', height: 0 };
  const left = 70;
  const right = 170;
  const top = y0 + 40;
  const plotW = width - left - right;
  const plotH = 200;
  const maxT = Math.max(2, ...curves.flatMap((c) => c.points.map((p) => p.threads)));
  const maxY = niceMax(Math.max(0, ...curves.flatMap((c) => c.points.map((p) => p.mbps.median))));
  const sx = (t: number) => left + (plotW * (t - 1)) / (maxT - 1);
  const sy = (v: number) => top + plotH - (plotH * v) / maxY;
  const parts: string[] = [text(20, y0 + 20, `encodeBatch scaling, MB/s by threads (${(r.batch!.bytes / 1e6).toFixed(2)} MB per batch)`, 'class="title"')];
  for (let t = 1; t <= maxT; t++) {
    parts.push(`<line x1="${n(sx(t))}" y1="${top}" x2="${n(sx(t))}" y2="${top + plotH}" class="grid"/>`);
    parts.push(text(sx(t), top + plotH + 16, String(t), 'text-anchor="middle" class="tick"'));
  }
  for (let k = 0; k <= 4; k++) {
    const v = (maxY * k) / 4;
    parts.push(`<line x1="${left}" y1="${n(sy(v))}" x2="${left + plotW}" y2="${n(sy(v))}" class="grid"/>`);
    parts.push(text(left - 6, sy(v) + 4, `${n(v)}`, 'text-anchor="end" class="tick"'));
  }
  parts.push(text(left + plotW / 2, top + plotH + 34, 'threads', 'text-anchor="middle" class="tick"'));
  curves.forEach((c, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = c.points.map((p) => `${n(sx(p.threads))},${n(sy(p.mbps.median))}`).join(' ');
    parts.push(`<polyline class="series" data-engine="${escapeXml(c.name)}" points="${pts}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const p of c.points) parts.push(`<circle cx="${n(sx(p.threads))}" cy="${n(sy(p.mbps.median))}" r="3" fill="${color}"/>`);
    const last = c.points[c.points.length - 1]!;
    parts.push(text(left + plotW + 8, sy(last.mbps.median) + 4 + i * 14, `${c.name} ${last.mbps.median.toFixed(1)}`, `class="label" fill="${color}"`));
  });
  return { svg: parts.join('\n'), height: plotH + 80 };
}

/** The whole chart document. */
export function renderSvg(r: BenchResult): string {
  const width = 860;
  const bars = barChart(r, 0, width);
  const scaling = scalingChart(r, bars.height, width);
  const footerY = bars.height + scaling.height + 10;
  const footer = `${r.machine.cpu} · ${r.machine.cores} cores · node ${r.machine.node} · corpus ${(r.corpus.bytes / 1e6).toFixed(2)} MB sha256 ${r.corpus.sha256.slice(0, 16)} · ${r.date}`;
  const height = footerY + 20;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    '<style>.title{font-size:15px;font-weight:bold}.grid{stroke:#e5e7eb}.whisker{stroke:#111827;stroke-width:1.5}.tick{fill:#6b7280;font-size:11px}.note{fill:#6b7280;font-size:11px}.value{fill:#111827}</style>',
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    bars.svg,
    scaling.svg,
    text(20, footerY, footer, 'class="note"'),
    '</svg>',
    '',
  ].join('\n');
}
