// The signed-in state, from GET /auth/session: loaded once at start, again after sign-in and
// sign-out, and dropped when any call answers 401.

import { computed, signal } from '@preact/signals';
import { api, type SessionState } from './api/client.ts';

export const session = signal<SessionState | null>(null);
export const sessionError = signal<string | null>(null);
export const role = computed(() => (session.value?.authenticated ? (session.value.user?.role ?? null) : null));

export async function loadSession(): Promise<SessionState | null> {
  const { data, error } = await api.GET('/auth/session');
  if (error || !data) {
    sessionError.value = 'The server did not answer; try again in a moment.';
    return null;
  }
  sessionError.value = null;
  session.value = data;
  return data;
}

export function signedOutLocally(): void {
  if (session.value) session.value = { ...session.value, authenticated: false, user: undefined };
}
