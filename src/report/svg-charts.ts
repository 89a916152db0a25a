import { formatNumber } from './format.js';
import { html, raw, type SafeHtml } from './html.js';

/**
 * Hand-built inline SVG charts: the report must open offline, by e-mail, years later, so it
 * carries no chart library and no script. Pure functions of their input; every coordinate is
 * printed with fixed decimals so the markup is byte-stable. Inline SVG in HTML needs no xmlns, and
 * leaving it out keeps the page free of any URL at all.
 */

export interface Series {
  name: string;
  color: string;
  /** One value per category, in category order. */
  values: readonly number[];
}

export interface StackedBarChartInput {
  title: string;
  categories: readonly string[];
  /** Drawn bottom-up in this order; the legend lists them in the same order. */
  series: readonly Series[];
  /** Short text under a category, e.g. `03` for 2025-11-03. */
  categoryLabel: (category: string) => string;
  xAxisTitle: string;
  yAxisTitle: string;
  /** Hover text of a bar segment's value, unit included, e.g. `12.50 user-minutes`. */
  formatValue: (value: number) => string;
  width?: number;
  height?: number;
}

export interface Bar {
  label: string;
  value: number;
  color: string;
}

export interface HorizontalBarChartInput {
  title: string;
  bars: readonly Bar[];
  /** Text at the end of a bar, unit included, e.g. `1 call`. */
  formatValue: (value: number) => string;
  width?: number;
}

const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"';
const AXIS = '#444';
const GRID = '#ddd';

const c = (n: number): string => n.toFixed(1);

/** Axis ticks at 1, 2 or 5 × 10^k: round numbers a reader can interpolate between. */
export function niceTicks(max: number, target = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const rough = max / target;
  const pow = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= rough) ?? 10 * pow;
  const ticks: number[] = [];
  for (let v = 0; v < max + step; v += step) {
    ticks.push(Number(v.toFixed(10)));
    if (v >= max) break;
  }
  return ticks;
}

function tickText(v: number): string {
  return formatNumber(v, Number.isInteger(v) ? 0 : 2);
}

/** Stacked vertical bars, one per category, with a y axis, category labels and a legend. */
export function stackedBarChart(input: StackedBarChartInput): SafeHtml {
  const width = input.width ?? 1080;
  const height = input.height ?? 380;
  const m = { top: 44, right: 16, bottom: 64, left: 78 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const n = input.categories.length;
  const totals = input.categories.map((_, i) => input.series.reduce((s, se) => s + Math.max(0, se.values[i] ?? 0), 0));
  const ticks = niceTicks(Math.max(0, ...totals));
  const top = ticks[ticks.length - 1] ?? 1;
  const y = (v: number): number => m.top + plotH - (v / top) * plotH;
  const slot = n ? plotW / n : plotW;
  const barW = Math.max(1, slot * 0.72);
  // Label every k-th category so labels never overlap: a label needs about its width in 11px
  // characters (≈6.5px each) plus a gap.
  const longest = Math.max(0, ...input.categories.map((cat) => input.categoryLabel(cat).length));
  const every = Math.max(1, Math.ceil((longest * 6.5 + 8) / slot));

  const grid = ticks.map(
    (t) => html`<line x1="${c(m.left)}" x2="${c(m.left + plotW)}" y1="${c(y(t))}" y2="${c(y(t))}" stroke="${GRID}" stroke-width="1"/><text x="${c(m.left - 8)}" y="${c(y(t) + 4)}" text-anchor="end" font-size="12" fill="${AXIS}">${tickText(t)}</text>`,
  );
  const bars = input.categories.map((cat, i) => {
    const x = m.left + i * slot + (slot - barW) / 2;
    let base = 0;
    const segments = input.series.map((se) => {
      const v = Math.max(0, se.values[i] ?? 0);
      if (v === 0) return html``;
      const y0 = y(base);
      const y1 = y(base + v);
      base += v;
      return html`<rect x="${c(x)}" y="${c(y1)}" width="${c(barW)}" height="${c(Math.max(0.5, y0 - y1))}" fill="${se.color}"><title>${cat} · ${se.name}: ${input.formatValue(v)}</title></rect>`;
    });
    const label =
      i % every === 0
        ? html`<text x="${c(x + barW / 2)}" y="${c(m.top + plotH + 16)}" text-anchor="middle" font-size="11" fill="${AXIS}">${input.categoryLabel(cat)}</text>`
        : html``;
    return html`<g>${segments}${label}</g>`;
  });
  const legend = input.series.map((se, i) => {
    const lx = m.left + i * 130;
    return html`<rect x="${c(lx)}" y="12" width="14" height="14" fill="${se.color}"/><text x="${c(lx + 20)}" y="24" font-size="13" fill="#222">${se.name}</text>`;
  });
  return html`<svg class="chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${input.title}" ${raw(FONT)}>
<title>${input.title}</title>
${grid}
<line x1="${c(m.left)}" x2="${c(m.left)}" y1="${c(m.top)}" y2="${c(m.top + plotH)}" stroke="${AXIS}"/>
<line x1="${c(m.left)}" x2="${c(m.left + plotW)}" y1="${c(m.top + plotH)}" y2="${c(m.top + plotH)}" stroke="${AXIS}"/>
${bars}
${legend}
<text x="${c(m.left + plotW / 2)}" y="${c(height - 12)}" text-anchor="middle" font-size="13" fill="#222">${input.xAxisTitle}</text>
<text transform="translate(16 ${c(m.top + plotH / 2)}) rotate(-90)" text-anchor="middle" font-size="13" fill="#222">${input.yAxisTitle}</text>
</svg>`;
}

/** Horizontal bars with their label on the left and their value at the end. */
export function horizontalBarChart(input: HorizontalBarChartInput): SafeHtml {
  const width = input.width ?? 720;
  const rowH = 30;
  const m = { top: 8, right: 120, bottom: 8, left: 170 };
  const height = m.top + m.bottom + input.bars.length * rowH;
  const plotW = width - m.left - m.right;
  const max = Math.max(0, ...input.bars.map((b) => b.value));
  const rows = input.bars.map((b, i) => {
    const yTop = m.top + i * rowH + 5;
    const w = max > 0 ? (Math.max(0, b.value) / max) * plotW : 0;
    return html`<text x="${c(m.left - 10)}" y="${c(yTop + 15)}" text-anchor="end" font-size="13" fill="#222">${b.label}</text>
<rect x="${c(m.left)}" y="${c(yTop)}" width="${c(Math.max(w, b.value > 0 ? 1 : 0))}" height="20" fill="${b.color}"><title>${b.label}: ${input.formatValue(b.value)}</title></rect>
<text x="${c(m.left + w + 8)}" y="${c(yTop + 15)}" font-size="13" fill="#222">${input.formatValue(b.value)}</text>`;
  });
  return html`<svg class="chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${input.title}" ${raw(FONT)}>
<title>${input.title}</title>
<line x1="${c(m.left)}" x2="${c(m.left)}" y1="${c(m.top)}" y2="${c(height - m.bottom)}" stroke="${AXIS}"/>
${rows}
</svg>`;
}
