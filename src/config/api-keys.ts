import { ConfigError } from './errors.js';
import type { Settings } from './load.js';

/**
 * Stops a command before its first request when an app it will contact has no key: one line per
 * unset variable, naming it and the apps that need it. Without this, a sync ran every other app and
 * then reported this one as failed, which reads as a service problem rather than a missing export.
 * `appIds`: only these apps (sync --app); all apps when absent or empty.
 */
export function assertApiKeys(settings: Settings, appIds?: readonly string[]): void {
  const apps = settings.apps.filter((a) => !appIds?.length || appIds.includes(a.appId));
  const missing = new Map<string, string[]>();
  for (const a of apps) if (!a.apiKey) missing.set(a.apiKeyEnv, [...(missing.get(a.apiKeyEnv) ?? []), `${a.appId} (${a.region})`]);
  if (missing.size === 0) return;
  throw new ConfigError(
    [...missing].map(([name, users]) => `environment variable ${name} is not set (the REST API key of app ${users.join(', app ')}); export the key in it (fullAccess scope), e.g. export ${name}=…`),
  );
}
