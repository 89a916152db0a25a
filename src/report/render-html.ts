import type { BillingRow } from '../export/billing.js';
import { formatCount, formatMinutes, formatPercent, localDate, localDateTime } from './format.js';
import { html, type SafeHtml } from './html.js';
import type { Relation, ReportData } from './report-data.js';
import { REPORT_STYLE } from './report-style.js';
import { horizontalBarChart, stackedBarChart, type Series } from './svg-charts.js';

/**
 * Renders the monthly report as one self-contained HTML page: inline style and SVG only, no
 * script, no URL. Pure: the same data gives the same bytes (no clock is read), and every value
 * from the database is escaped by the `html` template.
 */
export function renderReportHtml(data: ReportData): string {
  const title = `Call usage report ${data.period.label}`;
  return `<!DOCTYPE html>\n${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${REPORT_STYLE}</style>
</head>
<body>
<main>
${header(data, title)}
${billingSection(data)}
${dailySection(data)}
${reconciliationSection(data)}
${topUsersSection(data)}
${topGroupsSection(data)}
<footer>Made by callsync from the database ${data.databasePath}. Minutes are shown with 2 decimals; the billing CSV export carries 4. A call belongs to the period in which it started.</footer>
</main>
</body>
</html>
`.value}`;
}

/** Okabe–Ito colours: distinguishable with the common colour-vision deficiencies and in greyscale print. */
const TYPE_COLORS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];

const RELATION_INFO: Readonly<Record<Relation, { label: string; meaning: string; color: string }>> = {
  participant_sum: { label: 'Matches participants', meaning: "The call's own totals equal the sum of its participants' minutes.", color: '#009E73' },
  wall_clock: { label: 'Follows wall clock', meaning: "The call's totals equal its duration from start to end, not the participants' sum: expected when several people take part.", color: '#0072B2' },
  mismatch: { label: 'Mismatch (review)', meaning: "The call's totals match neither its participants nor its duration; the largest are listed below.", color: '#D55E00' },
  incomplete: { label: 'Incomplete', meaning: 'The call was still live, no longer found at the service, or came without totals at the last sync: its minutes may still change.', color: '#999999' },
};

/** Plain-language meaning of each issue code of the `call_reconciliation` view. */
const ISSUE_INFO: Readonly<Record<string, string>> = {
  totals_ne_participants: "Call totals match neither the participants' minutes nor the wall clock.",
  audio_plus_video_ne_total: "Audio plus video minutes differ from the call's total minutes.",
  timer_ne_minutes: "The call's HH:MM:SS timer differs from its total minutes.",
  participant_count: 'The participant count the service states differs from the participant entries it sent.',
  participant_outside_call: 'A participant joined or left outside the call’s start and end.',
  negative_duration: 'The call ends before it starts.',
};

function header(data: ReportData, title: string): SafeHtml {
  const p = data.period;
  const tz = p.timezone;
  const all = data.billing.filter((r) => r.row_kind === 'total');
  const sum = (f: (r: BillingRow) => number): number => all.reduce((s, r) => s + f(r), 0);
  const mismatches = data.relations.find((r) => r.relation === 'mismatch')?.calls ?? 0;
  const apps = data.apps.length
    ? data.apps.map((a, i) => html`${i ? ', ' : ''}${a.appId} (${a.region}${a.lastSuccessAt !== null ? `, last synced ${localDateTime(a.lastSuccessAt, tz)}` : ', never synced completely'})`)
    : html`<span class="empty">none in the database</span>`;
  return html`<h1>${title}</h1>
<p class="subtitle">Calls and billed minutes per app, with the checks behind them.</p>
<dl class="meta">
<dt>Period</dt><dd>${localDate(p.start, tz)} to ${localDate(p.end - 1, tz)}, both days included (from ${localDateTime(p.start, tz)} up to, not including, ${localDateTime(p.end, tz)})</dd>
<dt>Time zone</dt><dd>${tz}${tz === 'UTC' ? '' : ` (in UTC: ${localDateTime(p.start, 'UTC')} up to ${localDateTime(p.end, 'UTC')})`}</dd>
<dt>Apps</dt><dd>${apps}</dd>
<dt>Data from</dt><dd>${data.databasePath}</dd>
</dl>
${noticesSection(data)}
<div class="cards">
${card('Calls', formatCount(sum((r) => r.calls)))}
${card('User-minutes (billed)', formatMinutes(sum((r) => r.user_minutes)))}
${card('Call-level minutes', formatMinutes(sum((r) => r.call_total_minutes)))}
${card('Calls to review', formatCount(mismatches))}
</div>`;
}

/** Read first, before the totals: why the figures may not be the whole story (nothing when they are). */
function noticesSection(data: ReportData): SafeHtml {
  if (!data.notices.length) return html``;
  return html`<section class="notices" role="alert">
<h2>Read first</h2>
<ul>${data.notices.map((n) => html`<li>${n}</li>`)}</ul>
</section>`;
}

function card(label: string, value: string): SafeHtml {
  return html`<div class="card"><div class="label">${label}</div><div class="value">${value}</div></div>`;
}

function billingSection(data: ReportData): SafeHtml {
  // By row_kind, never by type: the service may name a call type 'all'.
  const totals = data.billing.filter((r) => r.row_kind === 'total');
  const incomplete = totals.reduce((s, r) => s + r.calls_incomplete, 0);
  // Flagged minutes are left out of every total above: the reader must learn they exist and how many.
  const flagged = totals.reduce((s, r) => s + r.flagged_calls, 0);
  const flaggedMinutes = totals.reduce((s, r) => s + r.flagged_user_minutes, 0);
  const rows = data.billing.map(
    // The total is marked by markup (its class, a bold label) that no escaped type text can produce.
    (r) => html`<tr${r.row_kind === 'total' ? html` class="total"` : html``}>
<td>${r.app_id}</td><td>${r.region}</td><td>${r.row_kind === 'total' ? html`<strong>All types</strong>` : r.type}</td>
<td class="num">${formatCount(r.calls)}</td>
<td class="num">${formatMinutes(r.participant_audio_minutes)}</td>
<td class="num">${formatMinutes(r.participant_video_minutes)}</td>
<td class="num">${formatMinutes(r.user_minutes)}</td>
<td class="num">${formatMinutes(r.call_total_minutes)}</td>
<td class="num">${formatMinutes(r.recording_minutes)}</td>
<td class="num">${formatMinutes(r.delta_minutes)}</td>
</tr>`,
  );
  return html`<section id="billing">
<h2>Billing totals</h2>
<p>The service bills user-minutes, that is each call's duration multiplied by the people in it (the sum of every participant's minutes), while the call-level totals a call reports about itself may follow the wall clock instead, so the delta column shows how many more minutes per-participant billing counts.</p>
${data.billing.length
  ? html`<table>
<thead>
<tr class="group"><th colspan="4"></th><th colspan="3">User-minutes (billed)</th><th colspan="3"></th></tr>
<tr><th>App</th><th>Region</th><th>Call type</th><th class="num">Calls</th><th class="num">Audio</th><th class="num">Video</th><th class="num">Total</th><th class="num">Call-level minutes</th><th class="num">Recording minutes</th><th class="num">Delta (user − call-level)</th></tr>
</thead>
<tbody>
${rows}
</tbody>
</table>`
  : html`<p class="empty">No calls started in this period.</p>`}
${incomplete ? html`<p class="note">${formatCount(incomplete)} ${incomplete === 1 ? 'call was' : 'calls were'} still incomplete at the last sync; ${incomplete === 1 ? 'its' : 'their'} minutes may change after the next one.</p>` : html``}
${flagged ? html`<p class="note">${formatCount(flagged)} ${flagged === 1 ? 'call has' : 'calls have'} minute figures no call can have (negative, beyond the wall clock, or over 24 hours): ${flagged === 1 ? 'its' : 'their'} ${formatMinutes(flaggedMinutes)} user-minutes are not in the totals above. <code>callsync reconcile --format json</code> counts them per issue; the billing export lists them with <code>--detail</code>.</p>` : html``}
</section>`;
}

function dailySection(data: ReportData): SafeHtml {
  const d = data.daily;
  const where = d.basis === 'utc' ? 'UTC' : data.period.timezone;
  const series: Series[] = d.types.map((type, i) => ({
    name: type,
    color: TYPE_COLORS[i % TYPE_COLORS.length] ?? '#000000',
    values: d.days.map((day) => d.points.find((p) => p.day === day && p.type === type)?.userMinutes ?? 0),
  }));
  const oneMonth = new Set(d.days.map((day) => day.slice(0, 7))).size <= 1;
  const chart = stackedBarChart({
    title: `Daily user-minutes by call type, ${data.period.label}`,
    categories: d.days,
    series,
    categoryLabel: (day) => (oneMonth ? day.slice(8) : day.slice(5)),
    xAxisTitle: oneMonth ? `Day of ${d.days[0]?.slice(0, 7) ?? ''} (${where})` : `Day, MM-DD (${where})`,
    yAxisTitle: 'User-minutes',
    formatValue: (v) => `${formatMinutes(v)} user-minutes`,
  });
  return html`<section id="daily">
<h2>Daily user-minutes by call type</h2>
<p>Each bar is one day, split by call type; hover a bar for its figure. Days are calendar days in ${where}${d.basis === 'utc' ? '' : ', the time zone of this report'}.</p>
${d.types.length ? chart : html`<p class="empty">No calls started in this period.</p>`}
${flaggedLeftOut(data)}
</section>`;
}

/**
 * Under the chart and the rankings: the flagged calls' minutes they leave out, as the billing totals
 * do (probe64 F2: summed in there, one implausible call outweighed the month, nothing said).
 */
function flaggedLeftOut(data: ReportData): SafeHtml {
  const totals = data.billing.filter((r) => r.row_kind === 'total');
  const calls = totals.reduce((s, r) => s + r.flagged_calls, 0);
  if (!calls) return html``;
  const minutes = totals.reduce((s, r) => s + r.flagged_user_minutes, 0);
  return html`<p class="note">As in the billing totals, the ${formatMinutes(minutes)} user-minutes of ${formatCount(calls)} flagged ${calls === 1 ? 'call' : 'calls'} (implausible minutes) are not in these figures.</p>`;
}

function reconciliationSection(data: ReportData): SafeHtml {
  const total = data.relations.reduce((s, r) => s + r.calls, 0);
  const chart = horizontalBarChart({
    title: 'Calls per reconciliation result',
    bars: data.relations.map((r) => ({ label: RELATION_INFO[r.relation].label, value: r.calls, color: RELATION_INFO[r.relation].color })),
    formatValue: (v) => `${formatCount(v)} ${v === 1 ? 'call' : 'calls'}`,
  });
  const rows = data.relations.map((r) => {
    const info = RELATION_INFO[r.relation];
    return html`<tr><td class="nowrap"><span class="swatch" style="background:${info.color}"></span>${info.label}</td><td>${info.meaning}</td>
<td class="num">${formatCount(r.calls)}</td><td class="num">${formatPercent(total ? r.calls / total : null)}</td><td class="num">${formatMinutes(r.userMinutes)}</td></tr>`;
  });
  const seen = [...new Set(data.mismatches.flatMap((m) => m.issues))];
  const codes = [...Object.keys(ISSUE_INFO).filter((c) => seen.includes(c)), ...seen.filter((c) => !(c in ISSUE_INFO)).sort()];
  const mismatchRows = data.mismatches.map(
    (m, i) => html`<tr><td class="num">${i + 1}</td><td>${m.appId}</td><td class="id nowrap">${m.sessionId}</td><td>${m.type}</td><td class="nowrap">${localDateTime(m.startedAt, data.period.timezone)}</td>
<td class="num">${formatMinutes(m.userMinutes)}</td><td class="num">${m.callMinutes === null ? '—' : formatMinutes(m.callMinutes)}</td>
<td class="num">${m.wallClockMinutes === null ? '—' : formatMinutes(m.wallClockMinutes)}</td><td class="num">${formatMinutes(m.deltaMinutes)}</td>
<td>${m.issues.map((code) => html`<code>${code}</code> `)}</td></tr>`,
  );
  return html`<section id="reconciliation">
<h2>Reconciliation</h2>
<p>Every call's own totals are checked against the sum of its participants' minutes and against its duration on the clock. Most calls should match one of the two; a mismatch deserves a look before an invoice is disputed.</p>
${chart}
<table>
<thead><tr><th>Result</th><th>Meaning</th><th class="num">Calls</th><th class="num">Share</th><th class="num">User-minutes</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
${flaggedLeftOut(data)}
<h3>Largest mismatches</h3>
${data.mismatches.length
  ? html`<p>Up to 20 calls whose totals match neither their participants nor the clock, by the size of the difference. The delta is user-minutes minus call-level minutes; start times are in ${data.period.timezone}.</p>
<table>
<thead>
<tr class="group"><th colspan="5"></th><th colspan="4">Minutes</th><th></th></tr>
<tr><th class="num">#</th><th>App</th><th>Call (session id)</th><th>Type</th><th>Started</th><th class="num">User</th><th class="num">Call-level</th><th class="num">Wall clock</th><th class="num">Delta</th><th>Issues</th></tr>
</thead>
<tbody>
${mismatchRows}
</tbody>
</table>
<dl class="glossary">
${codes.map((code) => html`<dt><code>${code}</code></dt><dd>${ISSUE_INFO[code] ?? 'An issue code this report does not describe yet; see docs/schema.md.'}</dd>`)}
</dl>`
  : html`<p class="empty">No mismatches in this period.</p>`}
</section>`;
}

function topUsersSection(data: ReportData): SafeHtml {
  const rows = data.topUsers.map(
    (u, i) => html`<tr><td class="num">${i + 1}</td><td>${u.appId}</td><td class="id">${u.uid}</td><td>${u.name ?? '—'}</td><td class="num">${formatCount(u.calls)}</td>
<td class="num">${formatMinutes(u.audioMinutes)}</td><td class="num">${formatMinutes(u.videoMinutes)}</td><td class="num">${formatMinutes(u.userMinutes)}</td></tr>`,
  );
  return html`<section id="top-users">
<h2>Top ${data.topUsers.length || ''} users</h2>
<p>Users with the most minutes in calls that started in this period, across all their devices. Names come from group memberships, where a group lists the user.</p>
${data.topUsers.length
  ? html`<table>
<thead><tr><th class="num">#</th><th>App</th><th>User id</th><th>Name</th><th class="num">Calls</th><th class="num">Audio minutes</th><th class="num">Video minutes</th><th class="num">Total minutes</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`
  : html`<p class="empty">No participants in this period.</p>`}
${flaggedLeftOut(data)}
</section>`;
}

function topGroupsSection(data: ReportData): SafeHtml {
  const rows = data.topGroups.map(
    (g, i) => html`<tr><td class="num">${i + 1}</td><td>${g.appId}</td><td class="id">${g.guid ?? '(unknown group)'}</td><td class="num">${formatCount(g.calls)}</td>
<td class="num">${formatMinutes(g.userMinutes)}</td><td class="num">${g.membersAtLastSync ? formatCount(g.membersAtLastSync) : '—'}</td><td class="num">${formatPercent(g.attendanceRate)}</td></tr>`,
  );
  return html`<section id="top-groups">
<h2>Top ${data.topGroups.length || ''} groups</h2>
<p>Groups whose calls in this period used the most user-minutes. Attendance is the share of the group's members (as of the last membership sync) who joined a call, averaged over the group's calls; — means the membership is not known.</p>
${data.topGroups.length
  ? html`<table>
<thead><tr><th class="num">#</th><th>App</th><th>Group id</th><th class="num">Calls</th><th class="num">User-minutes</th><th class="num">Members</th><th class="num">Average attendance</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`
  : html`<p class="empty">No group calls in this period.</p>`}
${flaggedLeftOut(data)}
</section>`;
}

