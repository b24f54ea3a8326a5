// The registry service: its address, public URL, machine-token rate, and how people sign in
// (OIDC when an issuer and a client id are set, else forward auth).

import {
  baseUrl,
  delimiter,
  type EnvVars,
  list,
  listen,
  positiveInt,
  secretValue,
  text,
  type Values,
} from './kinds.ts';

export const registryVars = {
  REGISTRY_LISTEN: listen({ description: 'registry listen address', default: '127.0.0.1:8400' }),
  REGISTRY_PUBLIC_URL: baseUrl({
    description:
      "the registry's public base URL (`https://registry.example.com`): the OIDC redirect URI, and Secure cookies when https",
  }),
  REGISTRY_TOKEN_RATE_PER_MIN: positiveInt({
    description: 'requests a minute allowed to each registry machine token',
    default: 600,
  }),
  REGISTRY_OIDC_ISSUER: text({
    description: 'OIDC issuer URL; set with REGISTRY_OIDC_CLIENT_ID to enable OIDC sign-in',
  }),
  REGISTRY_OIDC_CLIENT_ID: text({ description: 'OIDC client id of the registry' }),
  REGISTRY_OIDC_CLIENT_SECRET: text({
    description: 'OIDC client secret; unset: a public client, PKCE only',
    secret: true,
  }),
  REGISTRY_OIDC_CLIENT_SECRET_FILE: text({ description: 'file holding REGISTRY_OIDC_CLIENT_SECRET', secret: true }),
  REGISTRY_OIDC_ADMIN_GROUP: text({
    description: 'group (in the groups claim) mapped to registry admin',
    default: 'registry-admin',
  }),
  REGISTRY_OIDC_GROUPS_CLAIM: text({ description: 'name of the groups claim', default: 'groups' }),
  REGISTRY_FORWARD_AUTH_TRUSTED_NETS: list({
    description: 'comma-separated CIDRs whose identity headers the registry trusts (only when OIDC is not configured)',
  }),
  REGISTRY_FORWARD_AUTH_USER_HEADER: text({ description: 'header naming the user', default: 'X-Idp-Username' }),
  REGISTRY_FORWARD_AUTH_EMAIL_HEADER: text({ description: 'header carrying the email', default: 'X-Idp-Email' }),
  REGISTRY_FORWARD_AUTH_GROUPS_HEADER: text({ description: 'header listing the groups', default: 'X-Idp-Groups' }),
  REGISTRY_FORWARD_AUTH_GROUPS_DELIM: delimiter({ description: 'separator of the groups header', default: '|' }),
  REGISTRY_ADMIN_GROUP: text({ description: 'forward-auth group mapped to registry admin', default: 'registry-admin' }),
} satisfies EnvVars;

export interface RegistryConfig {
  /** No trailing slash; null when unset. */
  publicUrl: string | null;
  tokenRatePerMin: number;
  /** Null unless an issuer and a client id are configured. */
  oidc: {
    issuer: string;
    clientId: string;
    clientSecret: string | null;
    adminGroup: string;
    groupsClaim: string;
  } | null;
  forwardAuth: {
    trustedNets: string[];
    userHeader: string;
    emailHeader: string;
    groupsHeader: string;
    groupsDelim: string;
    adminGroup: string;
  };
}

export function registryConfig(v: Values<typeof registryVars>): RegistryConfig {
  const issuer = v.REGISTRY_OIDC_ISSUER;
  const clientId = v.REGISTRY_OIDC_CLIENT_ID;
  return {
    publicUrl: v.REGISTRY_PUBLIC_URL,
    tokenRatePerMin: v.REGISTRY_TOKEN_RATE_PER_MIN,
    // The client secret's file is read only when OIDC is on.
    oidc:
      issuer && clientId
        ? {
            issuer,
            clientId,
            clientSecret: secretValue(
              v.REGISTRY_OIDC_CLIENT_SECRET,
              v.REGISTRY_OIDC_CLIENT_SECRET_FILE,
              'REGISTRY_OIDC_CLIENT_SECRET_FILE',
            ).value,
            adminGroup: v.REGISTRY_OIDC_ADMIN_GROUP,
            groupsClaim: v.REGISTRY_OIDC_GROUPS_CLAIM,
          }
        : null,
    forwardAuth: {
      trustedNets: v.REGISTRY_FORWARD_AUTH_TRUSTED_NETS,
      userHeader: v.REGISTRY_FORWARD_AUTH_USER_HEADER,
      emailHeader: v.REGISTRY_FORWARD_AUTH_EMAIL_HEADER,
      groupsHeader: v.REGISTRY_FORWARD_AUTH_GROUPS_HEADER,
      groupsDelim: v.REGISTRY_FORWARD_AUTH_GROUPS_DELIM,
      adminGroup: v.REGISTRY_ADMIN_GROUP,
    },
  };
}
