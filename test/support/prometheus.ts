/**
 * Scrapes a `/metrics` endpoint the way Prometheus reads it: parsed by a text-format parser
 * library, then looked up by series name and exact labels.
 *
 * parse-prometheus-text-format folds every sample of a histogram or summary into one sample
 * without labels (its issues #8 and #13), which loses labelled series. So those families are
 * parsed as Prometheus stores them: their `# TYPE` line is set aside (kept for `type`) and
 * `_bucket`, `_sum`, `_count` and the quantile samples come out as plain labelled series.
 */
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';

type MetricType = PrometheusFamily['type'];

export class Scrape {
  private readonly families: PrometheusFamily[];
  private readonly aggregateTypes = new Map<string, MetricType>();

  constructor(text: string) {
    const kept: string[] = [];
    for (const line of text.split('\n')) {
      const m = /^# TYPE (\S+) (histogram|summary)$/.exec(line);
      if (m) this.aggregateTypes.set(m[1]!, m[2]!.toUpperCase() as MetricType);
      else kept.push(line);
    }
    this.families = parsePrometheusTextFormat(kept.join('\n'));
  }

  /** The names of the metric families, as declared by their `# TYPE` or `# HELP` lines. */
  names(): string[] {
    return [
      ...new Set([
        ...this.families.filter((f) => f.help !== '' || f.type !== 'UNTYPED').map((f) => f.name),
        ...this.aggregateTypes.keys(),
      ]),
    ].sort();
  }

  type(name: string): MetricType | undefined {
    return this.aggregateTypes.get(name) ?? this.families.find((f) => f.name === name)?.type;
  }

  /** Every label set of series `name` (a counter, a gauge, or a histogram's `…_count`). */
  labelSets(name: string): Record<string, string>[] {
    return this.families.filter((f) => f.name === name).flatMap((f) => f.metrics.map((m) => m.labels ?? {}));
  }

  /** The value of series `name` with exactly `labels`; 0 when the series does not exist (yet). */
  value(name: string, labels: Record<string, string> = {}): number {
    const wanted = key(labels);
    for (const f of this.families.filter((f) => f.name === name)) {
      const sample = f.metrics.find((m) => key(m.labels ?? {}) === wanted);
      if (sample) return Number(sample.value);
    }
    return 0;
  }

  /** A histogram's or summary's observation count (its `_count` series). */
  count(name: string, labels: Record<string, string> = {}): number {
    return this.value(`${name}_count`, labels);
  }
}

function key(labels: Record<string, string>): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
}

export async function scrape(url: string): Promise<{ contentType: string | null; scrape: Scrape }> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
  return { contentType: res.headers.get('content-type'), scrape: new Scrape(await res.text()) };
}
