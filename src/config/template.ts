/** What `callsync init` fills in; a placeholder stays where nothing was given. */
export interface TemplateValues {
  readonly appId: string;
  readonly region: string;
  readonly apiKeyEnv: string;
}

/**
 * Placeholders that fail validation on purpose: `config check` then names the field to fill in,
 * instead of a made-up App ID that would only fail at the first request.
 */
export const PLACEHOLDERS: TemplateValues = {
  appId: '<your App ID>',
  region: '<us, eu or in>',
  apiKeyEnv: 'COMETCHAT_API_KEY',
};

/**
 * A commented config (JSONC: loadConfigFile accepts comments and trailing commas) for one app, with
 * the options a new user is most likely to change at their defaults. Values are JSON-escaped, so
 * whatever was typed at a prompt cannot break the file.
 */
export function configTemplate(v: TemplateValues): string {
  const q = (s: string): string => JSON.stringify(s);
  return `// callsync configuration, written by \`callsync init\`. Comments and trailing commas are allowed.
// Check it with \`callsync config check\`, try the key with \`callsync check\`, then run \`callsync sync\`.
// Every option, with its default, is listed in the README ("Using it with a real app").
{
  // SQLite file (created with its folder), or a postgres://user@host/db URL. A relative path is
  // taken from this file's folder, wherever callsync is run from.
  "database": "data/callsync.db",

  // One entry per CometChat app (and region) to sync.
  "apps": [
    {
      // App ID, from the dashboard (API & Auth Keys).
      "appId": ${q(v.appId)},
      // Region of the app: us, eu or in.
      "region": ${q(v.region)},
      // NAME of the environment variable holding the app's REST API key (fullAccess scope); the key
      // itself never goes in this file. Before a sync: export ${v.apiKeyEnv}=<the key>
      "apiKeyEnv": ${q(v.apiKeyEnv)},
      // The plan's request limit per minute (free plan: 500); callsync uses 97 % of it.
      "requestsPerMinute": 500,
    },
  ],

  // Concurrent Get Call requests per app.
  "concurrency": 8,
  // Incremental runs re-list back to the newest call start seen, minus this many hours.
  "lookbackHours": 72,
  // Every this many days a run lists everything (calls backdated beyond the lookback show up there).
  "fullSyncEveryDays": 7,
  // auto: skip Get Call when the list entry is provably complete; always: fetch every call's details.
  "detailFetch": "auto",
  // Per request (headers and body), and attempts per request (exponential backoff with jitter).
  "requestTimeoutMs": 30000,
  "maxAttempts": 6,

  // \`callsync schedule\`: when to sync, and the monthly billing export after a sync.
  "schedule": {
    "cron": "0 2 * * *", // minute hour day month weekday
    "timezone": "UTC", // IANA zone of the cron, the monthly export, and of export/report/reconcile periods
    "exportDayOfMonth": 1, // on this day a tick writes last month's billing export; 0 = never
    "exportDir": "exports",
    "exportFormat": "csv", // csv or json
  },

  // fatal, error, warn, info, debug, trace or silent.
  "logLevel": "warn",
}
`;
}
