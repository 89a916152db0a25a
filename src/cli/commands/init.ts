import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { ConfigError } from '../../config/errors.js';
import { configPath, looksLikeKey } from '../../config/load.js';
import { REGIONS } from '../../config/schema.js';
import { configTemplate, PLACEHOLDERS, type TemplateValues } from '../../config/template.js';
import { askLines } from '../ask.js';
import { EXIT } from '../exit-codes.js';
import { environment } from '../setup.js';
import { configOption } from '../shared-options.js';

interface InitFlags {
  config?: string;
  appId?: string;
  region?: string;
  keyEnv?: string;
}

type Field = keyof TemplateValues;

/** Why a value cannot go in the field, or undefined when it can. Same rules as the config schema. */
function problem(field: Field, value: string): string | undefined {
  if (field === 'appId') return /^[A-Za-z0-9_-]+$/.test(value) ? undefined : 'the App ID from the dashboard (letters, digits, - and _)';
  if (field === 'region') return (REGIONS as readonly string[]).includes(value) ? undefined : `one of ${REGIONS.join(', ')}`;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(value)) return 'an environment variable NAME such as COMETCHAT_API_KEY';
  // Never echoed: a key typed here would end up printed.
  return looksLikeKey(value) ? 'the NAME of an environment variable, not the key itself' : undefined;
}

const FLAG: Record<Field, string> = { appId: '--app-id', region: '--region', apiKeyEnv: '--key-env' };
const PROMPT: Record<Field, string> = {
  appId: 'App ID (dashboard, API & Auth Keys)',
  region: `Region (${REGIONS.join(', ')})`,
  apiKeyEnv: 'Name of the environment variable that will hold the REST API key',
};

/** Asks for each value not given as a flag; a bad answer is asked again (three tries). */
function prompt(given: Partial<TemplateValues>): Promise<TemplateValues> {
  return askLines(async (ask) => {
    const out: Record<Field, string> = { ...PLACEHOLDERS };
    for (const field of ['appId', 'region', 'apiKeyEnv'] as const) {
      const preset = given[field];
      if (preset !== undefined) {
        out[field] = preset;
        continue;
      }
      const dflt = field === 'apiKeyEnv' ? PLACEHOLDERS.apiKeyEnv : field === 'region' ? 'us' : undefined;
      for (let tries = 0; ; tries++) {
        const answer = (await ask(`${PROMPT[field]}${dflt ? ` [${dflt}]` : ''}: `)).trim() || dflt || '';
        const why = problem(field, answer);
        if (!why) {
          out[field] = answer;
          break;
        }
        if (tries === 2) throw new ConfigError(`init: ${PROMPT[field]}: expected ${why}; nothing was written`);
        process.stderr.write(`  expected ${why}\n`);
      }
    }
    return out;
  });
}

export function registerInit(program: Command): void {
  program
    .command('init')
    .description('write a commented config file for a real app (prompts on a terminal; never overwrites)')
    .addOption(configOption('file to write (default: $CALLSYNC_CONFIG or callsync.config.json)'))
    .option('--app-id <id>', 'App ID from the dashboard')
    .option('--region <region>', `region of the app: ${REGIONS.join(', ')}`)
    .option('--key-env <name>', `name of the environment variable holding the REST API key (default ${PLACEHOLDERS.apiKeyEnv})`)
    .action(async (flags: InitFlags) => {
      const path = configPath(flags.config, environment());
      const given: Partial<Record<Field, string>> = {};
      for (const [field, value] of [['appId', flags.appId], ['region', flags.region], ['apiKeyEnv', flags.keyEnv]] as const) {
        if (value === undefined) continue;
        const why = problem(field, value.trim());
        // The value is not quoted back: --key-env may hold a pasted key.
        if (why) throw new ConfigError(`${FLAG[field]}: expected ${why}`);
        given[field] = value.trim();
      }
      const refuse = (): never => {
        throw new ConfigError(`${path} already exists; not overwritten. Edit it, or pass --config NEW_FILE to write another`);
      };
      // Checked before prompting too, so nobody answers questions for a file that will not be written.
      if (existsSync(path)) refuse();
      // Off a terminal (a script, CI) nothing is asked: flags, else placeholders config check names.
      const values: TemplateValues = process.stdin.isTTY ? await prompt(given) : { ...PLACEHOLDERS, ...given };
      mkdirSync(dirname(path), { recursive: true });
      try {
        // 'wx': a file created meanwhile is still not overwritten.
        writeFileSync(path, configTemplate(values), { flag: 'wx' });
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') refuse();
        throw new ConfigError(`${path}: cannot be written (${code ?? 'error'}); check the folder's permissions`);
      }
      const missing = (['appId', 'region'] as const).filter((f) => values[f] === PLACEHOLDERS[f]);
      console.log(`wrote ${path}`);
      if (missing.length) console.log(`  fill in ${missing.map((f) => `"${f}"`).join(' and ')} (placeholders now; \`callsync config check\` names them until then)`);
      console.log(`  export ${values.apiKeyEnv}=<the app's REST API key (fullAccess)>`);
      console.log(`  callsync config check${flags.config ? ` --config ${path}` : ''}   # validate the file`);
      console.log(`  callsync check${flags.config ? ` --config ${path}` : ''}          # try the key against the service`);
      console.log(`  callsync sync${flags.config ? ` --config ${path}` : ''}           # first (full) sync`);
      process.exitCode = EXIT.OK;
    });
}
