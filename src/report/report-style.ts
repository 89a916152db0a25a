import { raw, type SafeHtml } from './html.js';

/** The page's only style sheet, inline: the report is one file that opens offline and prints. */
export const REPORT_STYLE: SafeHtml = raw(`
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222; margin: 0; background: #f6f7f9; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 28px 40px; background: #fff; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 8px; padding-top: 12px; border-top: 2px solid #e3e6ea; }
h3 { font-size: 16px; margin: 24px 0 8px; }
p { line-height: 1.45; margin: 6px 0 10px; max-width: 80ch; }
.subtitle { color: #555; margin: 0 0 16px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 12px 0 20px; }
dl.meta dt { color: #555; }
dl.meta dd { margin: 0; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 8px 0 4px; }
.card { border: 1px solid #e3e6ea; border-radius: 6px; padding: 10px 14px; min-width: 180px; }
.card .label { color: #555; font-size: 13px; }
.card .value { font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 14px; }
th, td { padding: 5px 10px; border-bottom: 1px solid #e3e6ea; text-align: left; vertical-align: top; }
thead th { background: #f0f2f5; border-bottom: 2px solid #cfd4da; font-weight: 600; }
thead tr.group th { text-align: center; border-bottom: 1px solid #cfd4da; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.total td { font-weight: 600; background: #fafbfc; border-bottom: 2px solid #cfd4da; }
td.id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; overflow-wrap: anywhere; }
td.nowrap { white-space: nowrap; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; background: #f0f2f5; padding: 1px 4px; border-radius: 3px; }
td code { display: inline-block; margin: 1px 2px 1px 0; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; vertical-align: baseline; }
.note { color: #555; font-size: 13px; }
section.notices { border: 2px solid #D55E00; border-radius: 6px; background: #fff6ef; padding: 4px 16px; margin: 16px 0; }
section.notices h2 { border-top: none; margin: 8px 0 4px; padding-top: 0; color: #a33f00; }
section.notices li { line-height: 1.45; margin: 4px 0; }
.empty { color: #555; font-style: italic; }
svg.chart { display: block; max-width: 100%; height: auto; margin: 8px 0; }
dl.glossary { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; font-size: 13px; }
dl.glossary dd { margin: 0; }
footer { margin-top: 36px; color: #666; font-size: 12px; border-top: 1px solid #e3e6ea; padding-top: 10px; }
@media print {
  body { background: #fff; }
  main { padding: 0; max-width: none; }
  h2 { break-after: avoid; }
  table, svg.chart { break-inside: avoid; }
}
`);
