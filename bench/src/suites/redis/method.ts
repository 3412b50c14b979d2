// How the Redis suite measures, as the report's method paragraph says it.
import { formatCount } from "../../format.js";
import {
  LATENCY_BLOCK,
  LATENCY_SAMPLES,
  PROCESSES,
  REPLICAS,
  REPLICAS_PER_PROCESS,
  REPLICATED_LABEL,
  RESET_MS,
  ROUND_TRIP_CALLS,
  SUCCESS_ROUNDS,
  THRESHOLD,
} from "./parameters.js";

export const METHOD =
  `Its own \`redis-server\` (started by the suite on a free loopback port, \`--save "" --appendonly no\`, in a temp dir; stopped by PID at the end), node-redis 5 and ioredis 5 clients (offline queues off), \`redisStores({ client, prefix })\` with the default \`commandTimeoutMs\` (100 ms) except in the fleet; for the replicated rows a second \`redis-server\` \`REPLICAOF\` the first and stores with \`${REPLICATED_LABEL}\`. ` +
  `Round trips: \`CONFIG RESETSTAT\`, ${ROUND_TRIP_CALLS} sequential calls, a PING on the client's connection, then EVALSHA + EVAL + WAIT calls from \`INFO commandstats\` divided by the calls (scripts warmed first). ` +
  `Latency: wall clock per call, ${formatCount(LATENCY_SAMPLES)} sequential samples per row in interleaved blocks of ${LATENCY_BLOCK}. ` +
  `Healthy call: mitata with process CPU time as its clock, ${SUCCESS_ROUNDS} interleaved rounds of ≥ 120 ms, each contestant's median round; the ratio is the median over rounds of (Redis store's round / in-memory plugin's same round). ` +
  `Fleet: ${REPLICAS} replicas in ${PROCESSES} child processes of ${REPLICAS_PER_PROCESS} (each replica its own client, half node-redis and half ioredis, and its own plugin with a RedisCircuitBreakerStore on one shared prefix, or with the in-memory breaker), threshold ${THRESHOLD}, open time ${RESET_MS / 1000} s; from a common start each sends waves of K concurrent calls (each in its own scope) to a tool that throws \`new Error("upstream exploded")\` until its own view of the circuit reads open.`;
