/** Invocations completed per minute over the last hour: succeeded, failed, killed or cancelled, stacked. */
export interface MinuteCount {
  /** Minutes since the epoch. */
  minute: number;
  ok: number;
  failed: number;
  /** Killed or cancelled by an operator. */
  stopped: number;
}

const W = 640;
const H = 150;
const PAD = { left: 30, right: 8, top: 8, bottom: 20 };

export function MinuteChart({ counts, now }: { counts: MinuteCount[]; now: number }) {
  const last = Math.floor(now / 60_000);
  const byMinute = new Map(counts.map((c) => [c.minute, c]));
  const minutes = Array.from({ length: 60 }, (_, i) => last - 59 + i);
  const max = Math.max(1, ...counts.map((c) => c.ok + c.failed + c.stopped));
  const barW = (W - PAD.left - PAD.right) / 60;
  const y = (n: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - n / max);
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${W} ${H}`}
      width="100%"
      role="img"
      aria-label="Invocations completed per minute, last hour"
    >
      <line x1={PAD.left} x2={W - PAD.right} y1={y(0)} y2={y(0)} />
      <line x1={PAD.left} x2={W - PAD.right} y1={y(max)} y2={y(max)} stroke-dasharray="3 3" />
      <text x={PAD.left - 4} y={y(max) + 3} text-anchor="end">
        {max}
      </text>
      <text x={PAD.left - 4} y={y(0) + 3} text-anchor="end">
        0
      </text>
      {minutes.map((m, i) => {
        const c = byMinute.get(m);
        if (!c) return null;
        const x = PAD.left + i * barW + 1;
        return (
          <g key={m}>
            <title>{`${new Date(m * 60_000).toLocaleTimeString()}: ${c.ok} succeeded, ${c.failed} failed, ${c.stopped} killed or cancelled`}</title>
            <rect class="ok" x={x} width={barW - 2} y={y(c.ok)} height={y(0) - y(c.ok)} />
            <rect class="bad" x={x} width={barW - 2} y={y(c.ok + c.failed)} height={y(c.ok) - y(c.ok + c.failed)} />
            <rect
              class="stopped"
              x={x}
              width={barW - 2}
              y={y(c.ok + c.failed + c.stopped)}
              height={y(c.ok + c.failed) - y(c.ok + c.failed + c.stopped)}
            />
          </g>
        );
      })}
      {[0, 15, 30, 45].map((i) => (
        <text key={i} x={PAD.left + i * barW} y={H - 5}>
          {i === 0 ? '−60 min' : `−${60 - i} min`}
        </text>
      ))}
      <text x={W - PAD.right} y={H - 5} text-anchor="end">
        now
      </text>
    </svg>
  );
}
