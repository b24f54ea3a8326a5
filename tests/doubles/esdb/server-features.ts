// TEST DOUBLE (see ../esdb-test-server.ts): ServerFeatures.GetSupportedMethods, as
// Services/Transport/Grpc/ServerFeatures.cs answers it: every client-facing gRPC method the node
// serves, service and method names lowercased, with the features the client asks about
// (`Streams.Read`: "position", "events"; `Streams.BatchAppend`: "deadline_duration"). The client
// (EventStore-Client-NodeJS src/Client/ServerFeatures.ts) then appends through BatchAppend.

import type { IServerFeaturesServer } from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import featuresPb from '@eventstore/db-client/generated/serverfeatures_pb.js';

const STREAMS = 'event_store.client.streams.streams';

export function createServerFeatures(serverVersion: string): IServerFeaturesServer {
  const method = (name: string, features: string[] = []) =>
    new featuresPb.SupportedMethod().setServiceName(STREAMS).setMethodName(name).setFeaturesList(features);
  const supported = new featuresPb.SupportedMethods()
    .setEventStoreServerVersion(serverVersion)
    .setMethodsList([
      method('read', ['position', 'events']),
      method('append'),
      method('batchappend', ['deadline_duration']),
      method('delete'),
      method('tombstone'),
    ]);
  return {
    getSupportedMethods(_call, callback) {
      callback(null, supported);
    },
  };
}
