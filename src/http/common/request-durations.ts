/**
 * The request-duration histogram of every surface, counted by hand. prom-client's `observe` builds,
 * validates and hashes a label object on every call: 2-3 µs of each REST read's CPU in the profile
 * (docs/performance.md). Here a request finds its series through three map lookups (surface, route
 * pattern, status) and counts into an array. It is still a prom-client Histogram on the registry:
 * `getForPromString()` answers in the shape prom-client's own gives (same series, lines and label order), so
 * /metrics reads exactly as prom-client's histogram would. Record through `record` only: the inherited `observe` would
 * fill the parent's series, which `get()` does not read.
 */
import client from 'prom-client';

type Label = 'surface' | 'route' | 'status';

interface Series {
  labels: { surface: string; route: string; status: number };
  /** Per bucket (same index as the bounds), not cumulative; the last one is +Inf only. */
  counts: number[];
  sum: number;
  count: number;
}

type Snapshot = client.MetricObjectWithValues<client.MetricValueWithName<Label>>;

/** A value as prom-client's histogram hands it to the registry (its typings leave `sharedLabels` out). */
type ExportedValue = client.MetricValueWithName<'le'> & { sharedLabels: Series['labels'] };

/** prom-client's own method, which its typings leave out. */
const parentSnapshot = (client.Histogram.prototype as unknown as { getForPromString(this: client.Histogram<Label>): Promise<Snapshot> }).getForPromString;

export class RequestDurations extends client.Histogram<Label> {
  private readonly series = new Map<string, Map<string, Map<number, Series>>>();

  constructor(
    private readonly opts: { name: string; help: string; buckets: readonly number[]; registry: client.Registry },
  ) {
    super({ name: opts.name, help: opts.help, labelNames: ['surface', 'route', 'status'], buckets: [...opts.buckets], registers: [opts.registry] });
  }

  record(surface: string, route: string, status: number, seconds: number): void {
    let byRoute = this.series.get(surface);
    if (!byRoute) this.series.set(surface, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (!byStatus) byRoute.set(route, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (!s) byStatus.set(status, (s = { labels: { surface, route, status }, counts: new Array<number>(this.opts.buckets.length + 1).fill(0), sum: 0, count: 0 }));
    const bounds = this.opts.buckets;
    let i = 0;
    while (i < bounds.length && seconds > (bounds[i] as number)) i++;
    s.counts[i] = (s.counts[i] ?? 0) + 1;
    s.sum += seconds;
    s.count += 1;
  }

  /**
   * What the registry's text format reads (prom-client asks this, not `get`; its `get` reads this
   * too, for the JSON form): the parent's answer (name, help, type) with this class's series.
   */
  async getForPromString(): Promise<Snapshot> {
    const base = await parentSnapshot.call(this);
    const values: ExportedValue[] = [];
    for (const byRoute of this.series.values()) {
      for (const byStatus of byRoute.values()) {
        for (const s of byStatus.values()) values.push(...this.export(s));
      }
    }
    return { ...base, values: values as unknown as Snapshot['values'] };
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor calls reset() before this class's fields exist.
    (this.series as typeof this.series | undefined)?.clear();
  }

  /**
   * One series as prom-client exports a histogram's: cumulative buckets, +Inf, sum and count, with
   * the series' labels as `sharedLabels` (the text format writes `le` first; `get()` merges them).
   */
  private export(s: Series): ExportedValue[] {
    const name = this.opts.name;
    const shared = s.labels;
    const out: ExportedValue[] = [];
    let acc = 0;
    this.opts.buckets.forEach((le, i) => {
      acc += s.counts[i] ?? 0;
      out.push({ labels: { le }, sharedLabels: shared, value: acc, metricName: `${name}_bucket` });
    });
    out.push({ labels: { le: '+Inf' }, sharedLabels: shared, value: s.count, metricName: `${name}_bucket` });
    out.push({ labels: {}, sharedLabels: shared, value: s.sum, metricName: `${name}_sum` });
    out.push({ labels: {}, sharedLabels: shared, value: s.count, metricName: `${name}_count` });
    return out;
  }
}
