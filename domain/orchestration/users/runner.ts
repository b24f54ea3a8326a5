// The runner's service principal may exist only with its own key, never the admin's, and only
// while the admin key does not sit as a literal in this process's environment (the file form is
// required), so that a compromised runner environment cannot reveal the admin key.

export interface RunnerKeys {
  runnerApiKey: string | null;
  adminApiKey: string | null;
  /** True when ADMIN_API_KEY came as a literal environment value rather than a file. */
  adminApiKeyLiteral: boolean;
}

/** Why the runner principal is refused, or null when it may be registered. */
export function runnerRefusal(keys: RunnerKeys): string | null {
  if (!keys.runnerApiKey) return 'ORCH_RUNNER_API_KEY is not set';
  if (keys.adminApiKeyLiteral)
    return 'ADMIN_API_KEY is set as a literal value in the environment; supply it through ADMIN_API_KEY_FILE';
  if (keys.adminApiKey && keys.adminApiKey === keys.runnerApiKey)
    return 'ORCH_RUNNER_API_KEY equals the admin key; the runner must have its own, non-admin key';
  return null;
}
