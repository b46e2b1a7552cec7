/**
 * Several nodes whose store is a Redis Cluster (issue 13: "3 masters on loopback started by the
 * test support, the same load and failover tests"): the spread-and-adds and the SIGKILL
 * failover tests of cluster.test.ts, on 3 nodes over 3 masters. Leases, epochs and commits of a
 * partition live in its own hash slot, so they spread over the masters; the node registry lives
 * in the `{nodes}` slot.
 */
import test from 'ava';
import { failoverUnderLoad, onThreeNodes, spreadAndAdds } from '../support/cluster-scenarios.js';

test.serial(
  'Redis Cluster, 3 nodes: partitions spread evenly; calls and sends through every ingress; 50 keys added through random nodes: exact counts, no overlap',
  onThreeNodes(spreadAndAdds, { store: 'redis-cluster' }),
);

test.serial(
  'Redis Cluster, failover: SIGKILL of one node under load: its partitions are owned by the others within the lease bound, every acknowledged add completes, no key stuck',
  onThreeNodes(failoverUnderLoad, { store: 'redis-cluster' }),
);
