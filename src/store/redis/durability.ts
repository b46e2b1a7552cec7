/**
 * Startup check of the Redis settings under which acknowledged work could be lost
 * (design.md, "Store": durability settings are explicit; background.md §2.4).
 */
import type { Redis } from 'ioredis';

/** The settings that decide whether an acknowledged commit survives. */
export interface DurabilitySettings {
  appendonly?: string;
  appendfsync?: string;
  'maxmemory-policy'?: string;
}

export function durabilityWarnings(s: DurabilitySettings): string[] {
  const warnings: string[] = [];
  if (s.appendonly === 'no') {
    warnings.push('Redis appendonly is "no": acknowledged work is lost when Redis restarts (set appendonly yes)');
  } else if (s.appendfsync === 'everysec') {
    warnings.push(
      'Redis appendfsync is "everysec": up to ~1 s of acknowledged work can be lost if the machine crashes (appendfsync always fsyncs before replying)',
    );
  } else if (s.appendfsync === 'no') {
    warnings.push(
      'Redis appendfsync is "no": the OS decides when the AOF reaches disk, so a machine crash can lose an unbounded amount of acknowledged work',
    );
  }
  const policy = s['maxmemory-policy'];
  if (policy !== undefined && policy !== 'noeviction') {
    warnings.push(
      `Redis maxmemory-policy is "${policy}": keys may be evicted under memory pressure, silently losing state (set noeviction)`,
    );
  }
  return warnings;
}

/**
 * Reads the settings with CONFIG GET on every master (`nodes`: one for a single Redis); managed
 * Redis often forbids or renames CONFIG. A cluster's warnings name the master they concern.
 */
export async function checkDurability(nodes: Redis[]): Promise<string[]> {
  const each = await Promise.all(nodes.map(nodeWarnings));
  if (nodes.length === 1) return each[0]!;
  return each.flatMap((warnings, i) =>
    warnings.map((w) => `master ${nodes[i]!.options.host}:${nodes[i]!.options.port}: ${w}`),
  );
}

async function nodeWarnings(redis: Redis): Promise<string[]> {
  const settings: DurabilitySettings = {};
  try {
    for (const name of ['appendonly', 'appendfsync', 'maxmemory-policy'] as const) {
      const reply = (await redis.config('GET', name)) as string[];
      const value = reply[1];
      if (value !== undefined) settings[name] = value;
    }
  } catch (err) {
    return [
      `Redis durability settings could not be checked (CONFIG GET failed: ${(err as Error).message}); make sure appendonly is yes and maxmemory-policy is noeviction`,
    ];
  }
  return durabilityWarnings(settings);
}
