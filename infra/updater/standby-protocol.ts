// The process runtime's standby start, over the IPC channel between the sidecar and a release's
// `orchard serve all --standby` child. The child loads every module the services need and builds
// the platform's parts and the apps (the slow part of a cold start) while the old release still
// serves, then waits, touching neither the database, the DATA_DIR lock nor the ports:
//
//   child  → sidecar  ready                 loaded and built, nothing opened
//   sidecar → child   migrate               (the old release is drained) open the database, migrate
//   child  → sidecar  migrated {applied}    migrations done; the child goes on opening the platform
//                                           (write gate, projections, chainer, configured principals)
//                                           while the sidecar journals it; nothing listens yet
//   sidecar → child   serve                 (journaled: recreating) listen
//   child  → sidecar  listening             the services listen; the child then drops the channel,
//                                           so it outlives the sidecar like any services child
//   child  → sidecar  failed {message}      any step failed; the child exits
//
// A channel lost before `listening` (the sidecar killed, or it gave the standby up) ends the
// child at once: a release never starts without the sidecar that journals it.

export type ToStandby = { type: 'migrate' } | { type: 'serve' };
export type FromStandby =
  | { type: 'ready' }
  | { type: 'migrated'; applied: string[] }
  | { type: 'listening' }
  | { type: 'failed'; message: string };

/** The child's exit code when its channel is lost before it serves. */
export const STANDBY_ABANDONED_EXIT = 3;
