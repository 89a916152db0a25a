/**
 * Whether an `apiKeyEnv` value looks like a key rather than a variable's name: a run of 16 or more
 * characters (between underscores) mixing letters and digits. CometChat REST keys are 40 hex
 * characters, which also pass as a variable name, so the name pattern alone lets a pasted key
 * through, to be printed by `config check`, logged and stored in sync_runs.error as "variable X".
 */
export function looksLikeKey(name: string): boolean {
  return name.split('_').some((part) => part.length >= 16 && /[0-9]/.test(part) && /[A-Za-z]/.test(part));
}
