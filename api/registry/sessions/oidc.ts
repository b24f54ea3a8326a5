// OIDC sign-in (filled in below).
import type { RegistryDeps } from '../deps.ts';
import { registryRouter } from '../router.ts';

export function oidcRoutes(_deps: RegistryDeps) {
  return registryRouter();
}
