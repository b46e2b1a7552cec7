// The server's resources split into its parts, per scenario, for scripts/bench.mjs.
// The harness counts a process tree as one "server"; this samples the parts of that tree on
// their own: redis-server's CPU and RSS (with --store redis), and the server's anonymous memory
// and mapped file pages (LMDB's map on the embedded store) from /proc/<pid>/status.
import fs from 'node:fs';

const CLK_TCK = 100;
const PAGE_KIB = 4;
const mib = (kib) => Math.round((kib / 1024) * 10) / 10;

function stat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK, rssKiB: Number(f[21]) * PAGE_KIB };
  } catch {
    return undefined;
  }
}

/** The child processes of `pid` (redis-server started by the bench's shell, and the workers). */
function childrenOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Field by field sum of per-process readings; undefined when the first (the server itself) is gone. */
function sum(readings) {
  if (!readings[0]) return undefined;
  const total = {};
  for (const r of readings.filter(Boolean)) for (const [k, v] of Object.entries(r)) total[k] = (total[k] ?? 0) + v;
  return total;
}

/** Resident memory of `pid` by kind, KiB: anonymous, and mapped files with shared memory. */
export function memory(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? 0);
    return { anonKiB: kib('RssAnon'), fileKiB: kib('RssFile') + kib('RssShmem') };
  } catch {
    return undefined;
  }
}

export class PartSampler {
  samples = [];
  marks = [];

  constructor(serverPid, redisPid) {
    this.serverPid = serverPid;
    this.redisPid = redisPid;
  }

  start() {
    this.startedAt = performance.now();
    this.sample();
    this.timer = setInterval(() => this.sample(), 100);
  }

  stop() {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.sample();
  }

  /** A harness line "[round N] ID {...}" ends that scenario's window. */
  mark(line) {
    const m = /^\[round (\d+)\] (\S+)/.exec(line);
    if (m) this.marks.push({ round: Number(m[1]), id: m[2], t: performance.now() });
  }

  sample() {
    // With --workers the server is a primary and its workers: the node part is all of them.
    const pids = [this.serverPid, ...childrenOf(this.serverPid).filter((p) => p !== this.redisPid)];
    const node = sum(pids.map(stat));
    const mem = sum(pids.map(memory));
    if (!node || !mem) return;
    const redis = this.redisPid ? stat(this.redisPid) : undefined;
    this.samples.push({
      t: performance.now(),
      nodeCpuMs: node.cpuMs,
      ...mem,
      redisCpuMs: redis?.cpuMs ?? 0,
      redisRssKiB: redis?.rssKiB ?? 0,
    });
  }

  /** Samples from the previous scenario's end to this one's. */
  window(round, id) {
    const i = this.marks.findIndex((m) => m.round === round && m.id === id);
    if (i < 0) return [];
    const from = i === 0 ? this.startedAt : this.marks[i - 1].t;
    return this.samples.filter((s) => s.t >= from && s.t <= this.marks[i].t);
  }
}

/**
 * Adds the split to each run's summary. CPU: the harness's server CPU per op (its measured
 * phase only) divided in the proportion the parts used over the scenario's window.
 */
export function splitRuns(runs, parts) {
  for (const run of runs) {
    if (!run.summary || run.summary.serverCpuMsPerOp == null) continue;
    const w = parts.window(run.round, run.id);
    if (w.length < 2) continue;
    const first = w[0];
    const last = w[w.length - 1];
    const peak = (k) => mib(Math.max(...w.map((s) => s[k])));
    const nodePeak = mib(Math.max(...w.map((s) => s.anonKiB + s.fileKiB)));
    if (parts.redisPid) {
      const redisCpu = last.redisCpuMs - first.redisCpuMs;
      const nodeCpu = last.nodeCpuMs - first.nodeCpuMs;
      const share = redisCpu + nodeCpu > 0 ? redisCpu / (redisCpu + nodeCpu) : 0;
      Object.assign(run.summary, {
        redisCpuMsPerOp: round3(run.summary.serverCpuMsPerOp * share),
        nodeCpuMsPerOp: round3(run.summary.serverCpuMsPerOp * (1 - share)),
        redisPeakRssMiB: peak('redisRssKiB'),
        nodePeakRssMiB: nodePeak,
      });
    }
    Object.assign(run.summary, { serverAnonPeakRssMiB: peak('anonKiB'), serverFilePeakRssMiB: peak('fileKiB') });
  }
}

const round3 = (x) => Math.round(x * 1000) / 1000;

/** One line per scenario: what the server's CPU and memory were made of. */
export function printSplit(result, store) {
  const cols =
    store === 'redis'
      ? [
          ['srvCPU/op', 'serverCpuMsPerOp'],
          ['node', 'nodeCpuMsPerOp'],
          ['redis', 'redisCpuMsPerOp'],
          ['srvRSSpk', 'serverPeakRssMiB'],
          ['nodeRSS', 'nodePeakRssMiB'],
          ['redisRSS', 'redisPeakRssMiB'],
        ]
      : [
          ['srvCPU/op', 'serverCpuMsPerOp'],
          ['srvRSSpk', 'serverPeakRssMiB'],
          ['anonRSS', 'serverAnonPeakRssMiB'],
          ['fileRSS', 'serverFilePeakRssMiB'],
        ];
  console.log(
    `\nredstate (${store} store): the server's CPU (ms/op) and peak RSS (MiB) by part; srv = the sum the comparison uses`,
  );
  console.log(['id'.padEnd(4), ...cols.map(([h]) => h.padStart(9))].join(' '));
  // Medians of an even number of runs are means of two: rounded, not printed to 17 digits.
  const cell = (v) => (v == null ? '-' : String(Math.round(v * 1000) / 1000));
  for (const [id, m] of Object.entries(result.medians)) {
    if (m.serverCpuMsPerOp == null) continue;
    console.log([id.padEnd(4), ...cols.map(([, k]) => cell(m[k]).padStart(9))].join(' '));
  }
}
