import type { PageWrite } from './page-writer.js';

/**
 * A page's writes without the calls a later page decided again (`latest` gives the page that last
 * decided a call, see RecentCalls). Pages are written in the order their Get Calls finish, not the
 * order they were listed: a call listed on two pages (calls shifted while paging) had the earlier
 * page's write land last whenever that page waited on a slower Get, and its older entry (stale
 * participant minutes) was stored, ok (a hostile fake, at concurrency 4). The later page's decision
 * is the one written; a write that reached the database before that decision is overwritten by it.
 * Returns `w` itself when nothing is dropped (no copy per page).
 */
export function supersededOn(w: PageWrite, page: number, latest: (id: string) => number | undefined): PageWrite {
  const stale = (id: string): boolean => (latest(id) ?? page) > page;
  if (!w.rows.some((r) => stale(r.call.session_id)) && !w.retries.some((r) => stale(r.sessionId)) && !w.cleared.some(stale) && !w.notFoundIds.some(stale)) return w;
  return {
    rows: w.rows.filter((r) => !stale(r.call.session_id)),
    rejects: w.rejects,
    notFoundIds: w.notFoundIds.filter((id) => !stale(id)),
    retries: w.retries.filter((r) => !stale(r.sessionId)),
    cleared: w.cleared.filter((id) => !stale(id)),
  };
}
