/**
 * The baseline of bench/ingest.ts: how ingest stored an iostat run's samples
 * before they moved to a Parquet object in the results bucket, as CHUNK items
 * of the table (RUN#<runId>, CHUNK#<native>#<n>), up to CHUNK_SAMPLES samples
 * of one series each, column by column. Only the bench uses it: the product
 * writes no CHUNK items.
 */
import { KEY_SEPARATOR, runPk } from '../shared/store/keys.ts';
import type { TimeSpan } from '../shared/store/items.ts';
import { packValues } from '../shared/store/packing.ts';
import { spanOf } from '../shared/store/run-items.ts';
import type { IostatSample } from '../shared/model.ts';

/** Samples a chunk item held. */
export const CHUNK_SAMPLES = 250;

/** A chunk's sort key, as the table held it. */
export const chunkSk = (native: string, chunk: number) =>
  ['CHUNK', native, String(chunk).padStart(5, '0')].join(KEY_SEPARATOR);

/**
 * Samples of one series, column-wise and packed: each printed column is one string
 * of space-separated numbers (`-` where the report did not print it).
 */
export interface ChunkItem {
  pk: string;
  sk: string;
  type: 'chunk';
  runId: string;
  native: string;
  first: number;
  count: number;
  reports: string;
  lines: string;
  /** Report times as a JSON array (null for none), when the log prints them. */
  times?: string;
  /** The first sample counts since boot (only a run's first chunk can start with one). */
  sinceBootFirst: boolean;
  raw: Record<string, string>;
}

/**
 * Collects a series' samples into chunk items of CHUNK_SAMPLES, column by column
 * as they arrive: a sample object is dropped as soon as it is added, so the
 * samples a long log streams die young instead of waiting in a chunk, which
 * spares the garbage collector most of its work.
 */
export class ChunkBuilder {
  private count = 0;
  private first = 0;
  private sinceBootFirst = false;
  private reports: number[] = [];
  private lines: number[] = [];
  /** Per sample, from the first sample that has a time (undefined before it). */
  private times: (string | undefined)[] | undefined;
  /** The first and last sample time over every chunk (log order is time order): the series' span. */
  private firstTime: string | undefined;
  private lastTime: string | undefined;
  /** Printed columns in order of first appearance; a sample without the column leaves a hole. */
  private columns = new Map<string, (number | undefined)[]>();
  chunks = 0;

  constructor(
    readonly runId: string,
    readonly native: string,
    private readonly size: number,
  ) {}

  /** Add a sample; returns a full chunk item when one is complete. */
  add(sample: IostatSample): ChunkItem | undefined {
    const i = this.count++;
    if (i === 0) {
      this.first = sample.report;
      this.sinceBootFirst = sample.sinceBoot;
    }
    this.reports.push(sample.report);
    this.lines.push(sample.line);
    if (sample.time !== undefined) {
      (this.times ??= [])[i] = sample.time;
      this.firstTime ??= sample.time;
      this.lastTime = sample.time;
    }
    const raw = sample.raw;
    for (const name in raw) {
      let values = this.columns.get(name);
      if (values === undefined) this.columns.set(name, (values = []));
      values[i] = raw[name];
    }
    return this.count >= this.size ? this.take() : undefined;
  }

  /** The time range of every sample added (for iostatRunItem, through joinSpans). */
  get span(): TimeSpan | undefined {
    return spanOf([this.firstTime, this.lastTime]);
  }

  /** The last, partial chunk, if any. */
  finish(): ChunkItem | undefined {
    return this.count > 0 ? this.take() : undefined;
  }

  private take(): ChunkItem {
    const count = this.count;
    const raw: ChunkItem['raw'] = {};
    for (const [name, values] of this.columns) raw[name] = packValues(values, count);
    const times = this.times;
    const item: ChunkItem = {
      pk: runPk(this.runId),
      sk: chunkSk(this.native, this.chunks),
      type: 'chunk',
      runId: this.runId,
      native: this.native,
      first: this.first,
      count,
      reports: packValues(this.reports, count),
      lines: packValues(this.lines, count),
      ...(times !== undefined
        ? { times: JSON.stringify(Array.from({ length: count }, (_, i) => times[i] ?? null)) }
        : {}),
      sinceBootFirst: this.sinceBootFirst,
      raw,
    };
    this.chunks++;
    this.count = 0;
    this.reports = [];
    this.lines = [];
    this.times = undefined;
    this.columns = new Map();
    return item;
  }
}
