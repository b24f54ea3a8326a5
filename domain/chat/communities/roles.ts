// Community roles and the one rule every role-gated action follows: an actor acts on someone
// only when the actor's role is strictly above the target's (nobody changes, kicks, bans or
// times out someone at or above their own role). The channel rules (../channels/roles.ts) map a
// community role onto channel authority with the same ranks.

import { DomainError } from '../../shared/decider.ts';

export const COMMUNITY_ROLES = ['member', 'moderator', 'admin', 'owner'] as const;
export type CommunityRole = (typeof COMMUNITY_ROLES)[number];
/** Roles an invite may pre-assign. */
export const GRANTABLE_ROLES = ['moderator', 'admin'] as const;
export type GrantableRole = (typeof GRANTABLE_ROLES)[number];

export const rankOf = (role: CommunityRole | null | undefined): number => (role ? COMMUNITY_ROLES.indexOf(role) : -1);

export const atLeast = (role: CommunityRole | null | undefined, min: CommunityRole): boolean =>
  rankOf(role) >= rankOf(min);

/** Throws 403 unless `role` is at least `min`. */
export function requireRole(role: CommunityRole | null | undefined, min: CommunityRole, what: string): void {
  if (!atLeast(role, min))
    throw new DomainError('forbidden', 'insufficient_role', `${what} needs community role ${min} or above`);
}

/** Throws 403 unless the actor outranks the target. */
export function requireOutranks(
  actor: CommunityRole | null | undefined,
  target: CommunityRole | null | undefined,
  what: string,
): void {
  if (rankOf(actor) <= rankOf(target))
    throw new DomainError('forbidden', 'insufficient_role', `you cannot ${what} someone at or above your own role`);
}

/**
 * Which roles an actor may hand out (by role change or by invite): the owner any role below
 * owner, an admin moderator or member, nobody else.
 */
export function mayGrant(actor: CommunityRole | null | undefined, role: CommunityRole): boolean {
  if (role === 'owner') return false;
  if (actor === 'owner') return true;
  if (actor === 'admin') return role === 'moderator' || role === 'member';
  return false;
}
