// A chat service as its own process (`orchard serve chat`), for suites and benches that need
// several instances on one database and a kill -9. Every instance shares the sealing key and the
// JWT secret, so a token from one is good on the others.

import { startServiceProcess, type ServiceProcess } from './service-process.ts';

export type ChatProcess = ServiceProcess;

export const SHARED_CHAT_ENV = {
  ORCH_SECRET_KEY: 'b7'.repeat(32),
  CHATSVC_JWT_SECRET: 'shared-jwt-secret-for-test-instances-0123456789',
};

export function startChatProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<ChatProcess> {
  return startServiceProcess('chat', databaseUrl, { ...SHARED_CHAT_ENV, ...env }, { timeoutMs });
}
