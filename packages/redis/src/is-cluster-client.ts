import { isObject } from "./is-object.js";

/**
 * A cluster client (an ioredis `Cluster`, node-redis `createCluster`)? Then a script's keys must
 * share a slot: the breaker reads one circuit per script.
 */
export function isClusterClient(client: unknown): boolean {
  return isObject(client) && (client.isCluster === true || Array.isArray(client.masters));
}
