/**
 * Deterministic iostat logs for the benchmarks, written into bench/out/:
 *
 *   solaris     `iostat -xn 5` (Solaris 10 style): title, header, a row per device
 *               per report, one decimal, iostat's fixed column widths.
 *   linux       sysstat 12.5 `iostat -x 5`: banner, then per report an avg-cpu block
 *               and a device table (sd* then nvme*), two decimals, the blank lines
 *               sysstat prints between blocks.
 *   freebsd     FreeBSD 14 `iostat -x -w 5`: title, header, a row per device (ada*,
 *               nvd*, da*), whole numbers but kB/s with one decimal.
 *   linux-json  sysstat 12.5 `iostat -x -o JSON 5`: one document, a statistics entry
 *               per report with its timestamp and avg-cpu, one disk object per line.
 *
 * bench:parse uses 100 devices (ensureLog); bench:ingest sizes device counts to
 * its files (writeIostatLog). Values come from a seeded PRNG (same seed, same
 * bytes) and are internally consistent: kB/s = ops/s x request size, queue =
 * ops/s x latency, %util from the service time. The first report is the
 * since-boot report (lower averages).
 *
 * A file is reused when its sidecar (`<file>.json`) records the same generator
 * version, seed and target size and the file still has the recorded size.
 *
 *   tsx bench/generate.ts [--size-mb 200] [solaris|linux ...]   (or BENCH_SIZE_MB)
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const OUT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), 'out');

/** Bump when the output of a given seed and size changes. */
const GENERATOR_VERSION = 2;
const SEED = 0x5eed_2024;
const DEVICES = 100;

/** 1 MB = 10^6 bytes, here and in the benchmark report. */
export const MB = 1_000_000;

export type LogKind = 'solaris' | 'linux';
export const LOG_KINDS: readonly LogKind[] = ['solaris', 'linux'];

export interface GeneratedLog {
  kind: LogKind;
  path: string;
  bytes: number;
  lines: number;
  reports: number;
  devices: number;
  reused: boolean;
}

interface Sidecar {
  generatorVersion: number;
  seed: number;
  targetBytes: number;
  bytes: number;
  lines: number;
  reports: number;
  devices: number;
}

// ---------------------------------------------------------------- random numbers

/** sfc32 seeded through splitmix32: small, fast, and the same sequence everywhere. */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spare: number | undefined;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 16; i++) this.uint32();
  }

  uint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.uint32() / 4294967296;
  }

  range(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  int(lo: number, hiInclusive: number): number {
    return lo + Math.floor(this.next() * (hiInclusive - lo + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** Standard normal (Box-Muller, the second value kept for the next call). */
  normal(): number {
    if (this.spare !== undefined) {
      const v = this.spare;
      this.spare = undefined;
      return v;
    }
    let u = this.next();
    while (u === 0) u = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    const theta = 2 * Math.PI * this.next();
    this.spare = r * Math.sin(theta);
    return r * Math.cos(theta);
  }

  /** Multiplicative noise around 1 (log-normal, median 1). */
  jitter(sigma: number): number {
    return Math.exp(sigma * this.normal());
  }
}

// ---------------------------------------------------------------- formatting

const POW10 = [1, 10, 100, 1000];

/** printf("%*.*f") for non-negative values, without toFixed's cost. */
function fixed(value: number, decimals: number, width: number): string {
  const p = POW10[decimals];
  const scaled = Math.round(value * p);
  const int = Math.floor(scaled / p);
  let text = String(int);
  if (decimals > 0) {
    const frac = String(scaled - int * p);
    text += '.' + (frac.length < decimals ? '0'.repeat(decimals - frac.length) + frac : frac);
  }
  return text.length < width ? ' '.repeat(width - text.length) + text : text;
}

/** printf("%*.0f"). */
function whole(value: number, width: number): string {
  return fixed(value, 0, width);
}

// ---------------------------------------------------------------- device workloads

type Workload = 'idle' | 'oltp' | 'sequential' | 'log' | 'backup';

interface Device {
  name: string;
  workload: Workload;
  nvme: boolean;
  readIops: number;
  writeIops: number;
  readKB: number;
  writeKB: number;
  /** Service time per request at the device, ms. */
  serviceMs: number;
  /** Slowly varying load factor (AR(1) around 1). */
  load: number;
  /** Reports left in the current burst (0: none). */
  burst: number;
}

const WORKLOADS: readonly { workload: Workload; weight: number }[] = [
  { workload: 'idle', weight: 0.2 },
  { workload: 'oltp', weight: 0.4 },
  { workload: 'sequential', weight: 0.15 },
  { workload: 'log', weight: 0.15 },
  { workload: 'backup', weight: 0.1 },
];

function pickWorkload(rng: Prng): Workload {
  let x = rng.next();
  for (const { workload, weight } of WORKLOADS) {
    if (x < weight) return workload;
    x -= weight;
  }
  return 'oltp';
}

function makeDevice(rng: Prng, name: string, nvme: boolean): Device {
  const workload = pickWorkload(rng);
  const speed = nvme ? rng.range(6, 20) : 1;
  const device: Device = {
    name,
    workload,
    nvme,
    readIops: 0,
    writeIops: 0,
    readKB: 8,
    writeKB: 8,
    serviceMs: 5,
    load: 1,
    burst: 0,
  };
  switch (workload) {
    case 'idle':
      device.readIops = rng.range(0, 0.4);
      device.writeIops = rng.range(0, 0.6);
      device.readKB = rng.range(4, 16);
      device.writeKB = rng.range(4, 16);
      break;
    case 'oltp':
      device.readIops = rng.range(40, 260) * speed;
      device.writeIops = rng.range(20, 140) * speed;
      device.readKB = rng.pick([4, 8, 8, 16]);
      device.writeKB = rng.pick([4, 8, 8, 16]);
      break;
    case 'sequential':
      device.readIops = rng.range(30, 180) * speed;
      device.writeIops = rng.range(0, 20) * speed;
      device.readKB = rng.pick([64, 128, 256, 512]);
      device.writeKB = rng.pick([64, 128]);
      break;
    case 'log':
      device.readIops = rng.range(0, 2);
      device.writeIops = rng.range(80, 600) * speed;
      device.readKB = 8;
      device.writeKB = rng.range(2, 12);
      break;
    case 'backup':
      device.readIops = rng.range(0, 5) * speed;
      device.writeIops = rng.range(40, 160) * speed;
      device.readKB = 64;
      device.writeKB = rng.pick([128, 256, 1024]);
      break;
  }
  device.serviceMs = nvme
    ? rng.range(0.04, 0.3)
    : workload === 'sequential' || workload === 'backup'
      ? rng.range(1.5, 6)
      : rng.range(2.5, 9);
  // Keep the usual load below saturation (5-80 % busy); bursts may still saturate.
  const ops = device.readIops + device.writeIops;
  const busy = rng.range(0.05, 0.8);
  if ((ops * device.serviceMs) / 1000 > busy) device.serviceMs = (busy * 1000) / ops;
  return device;
}

/** One interval of activity for a device. */
interface Activity {
  r: number;
  w: number;
  rkB: number;
  wkB: number;
  /** Device service time, ms (0 when idle). */
  svc: number;
  /** Host-queue wait per request, ms. */
  waitMs: number;
}

function step(rng: Prng, d: Device, sinceBoot: boolean): Activity {
  if (sinceBoot) {
    // Averages since boot: lower and smoother than any interval.
    const f = rng.range(0.15, 0.45);
    const r = d.readIops * f;
    const w = d.writeIops * f;
    return {
      r,
      w,
      rkB: r * d.readKB,
      wkB: w * d.writeKB,
      svc: r + w > 0.05 ? d.serviceMs : 0,
      waitMs: 0.1 * d.serviceMs * f,
    };
  }
  d.load = Math.max(0.05, 0.85 * d.load + 0.15 + 0.12 * rng.normal());
  if (d.burst > 0) d.burst--;
  else if (rng.next() < 0.01) d.burst = rng.int(2, 12);
  const burst = d.burst > 0 ? 2.5 : 1;
  if (d.workload === 'idle' && rng.next() < 0.7) return { r: 0, w: 0, rkB: 0, wkB: 0, svc: 0, waitMs: 0 };
  const r = d.readIops * d.load * burst * rng.jitter(0.25);
  const w = d.writeIops * d.load * burst * rng.jitter(0.25);
  const rkB = r * d.readKB * rng.jitter(0.08);
  const wkB = w * d.writeKB * rng.jitter(0.08);
  const svc = r + w > 0.05 ? d.serviceMs * rng.jitter(0.2) * (burst > 1 ? 1.6 : 1) : 0;
  const busy = ((r + w) * svc) / 1000;
  const waitMs = busy > 0.6 ? svc * (busy - 0.6) * 4 * rng.jitter(0.3) : busy > 0.2 ? svc * 0.02 * rng.next() : 0;
  return { r, w, rkB, wkB, svc, waitMs };
}

// ---------------------------------------------------------------- writers

/**
 * Lines go straight into a 1 MiB buffer that is written out when full: each line's
 * string dies young, where an array of a megabyte of strings awaiting a join got
 * promoted and made garbage collection most of the generator's time.
 */
class Output {
  private fd: number;
  private buffer = Buffer.allocUnsafe(1 << 20);
  private used = 0;
  private flushed = 0;
  lines = 0;

  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }

  line(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: room for that, and the newline.
    if (this.used + text.length * 3 + 1 > this.buffer.length) this.flush();
    this.used += this.buffer.write(text, this.used, 'utf8');
    this.buffer[this.used++] = 0x0a;
    this.lines++;
  }

  flush(): void {
    let at = 0;
    while (at < this.used) at += writeSync(this.fd, this.buffer, at, this.used - at);
    this.flushed += this.used;
    this.used = 0;
  }

  /** Bytes written so far, buffered ones included. */
  get bytes(): number {
    return this.flushed + this.used;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

function solarisDevices(rng: Prng, count: number): Device[] {
  const devices: Device[] = [];
  for (let c = 0; devices.length < count; c++) {
    for (let t = 0; t < 25 && devices.length < count; t++) devices.push(makeDevice(rng, `c${c}t${t}d0`, false));
  }
  return devices;
}

const SOLARIS_TITLE = '                    extended device statistics              ';
const SOLARIS_HEADER = '    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device';

function solarisRow(a: Activity, device: string): string {
  const ops = a.r + a.w;
  const actv = (ops * a.svc) / 1000;
  const wait = (ops * a.waitMs) / 1000;
  const pctB = Math.min(100, actv * 100);
  const pctW = Math.min(100, wait * 100 * 0.6);
  return (
    ' ' +
    fixed(a.r, 1, 6) +
    ' ' +
    fixed(a.w, 1, 6) +
    ' ' +
    fixed(a.rkB, 1, 6) +
    ' ' +
    fixed(a.wkB, 1, 6) +
    ' ' +
    fixed(wait, 1, 4) +
    ' ' +
    fixed(actv, 1, 4) +
    ' ' +
    fixed(ops > 0 ? a.waitMs : 0, 1, 6) +
    ' ' +
    fixed(a.svc, 1, 6) +
    ' ' +
    whole(pctW, 3) +
    ' ' +
    whole(pctB, 3) +
    ' ' +
    device
  );
}

/** What a writer was asked for: the default is bench:parse's 100 devices and fixed seed. */
export interface LogShape {
  devices?: number;
  seed?: number;
}

export interface Written {
  reports: number;
  lines: number;
}

function writeSolaris(path: string, targetBytes: number, shape: LogShape = {}): Written {
  const rng = new Prng(shape.seed ?? SEED ^ 0x50_1a_71_5);
  const devices = solarisDevices(rng, shape.devices ?? DEVICES);
  const out = new Output(path);
  let reports = 0;
  while (out.bytes < targetBytes) {
    out.line(SOLARIS_TITLE);
    out.line(SOLARIS_HEADER);
    for (const d of devices) out.line(solarisRow(step(rng, d, reports === 0), d.name));
    reports++;
  }
  out.close();
  return { reports, lines: out.lines };
}

function linuxDevices(rng: Prng, count: number): Device[] {
  const devices: Device[] = [];
  const sdCount = Math.round(count * 0.76);
  for (let i = 0; i < sdCount; i++) {
    const letters =
      i < 26
        ? String.fromCharCode(97 + i)
        : String.fromCharCode(96 + Math.floor(i / 26)) + String.fromCharCode(97 + (i % 26));
    devices.push(makeDevice(rng, `sd${letters}`, false));
  }
  for (let i = 0; devices.length < count; i++) devices.push(makeDevice(rng, `nvme${i}n1`, true));
  return devices;
}

const LINUX_BANNER = 'Linux 5.15.0-91-generic (benchhost) \t01/15/2024 \t_x86_64_\t(8 CPU)';
const LINUX_CPU_HEADER = 'avg-cpu:  %user   %nice %system %iowait  %steal   %idle';
const LINUX_HEADER =
  'Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await ' +
  'wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util';

/** sysstat 12.5's `-x` columns as JSON keys (four differ from the text headers), in the text table's order. */
const LINUX_KEYS = [
  'r/s',
  'rkB/s',
  'rrqm/s',
  'rrqm',
  'r_await',
  'rareq-sz',
  'w/s',
  'wkB/s',
  'wrqm/s',
  'wrqm',
  'w_await',
  'wareq-sz',
  'd/s',
  'dkB/s',
  'drqm/s',
  'drqm',
  'd_await',
  'dareq-sz',
  'f/s',
  'f_await',
  'aqu-sz',
  'util',
];
const LINUX_WIDTHS = [8, 9, 8, 6, 7, 8, 8, 9, 8, 6, 7, 8, 8, 9, 8, 6, 7, 8, 8, 7, 7, 6];
/** The JSON output's key order (rates, then kB, merges, waits, sizes), as indexes into LINUX_KEYS. */
const LINUX_JSON_ORDER = [
  'r/s',
  'w/s',
  'd/s',
  'f/s',
  'rkB/s',
  'wkB/s',
  'dkB/s',
  'rrqm/s',
  'wrqm/s',
  'drqm/s',
  'rrqm',
  'wrqm',
  'drqm',
  'r_await',
  'w_await',
  'd_await',
  'f_await',
  'rareq-sz',
  'wareq-sz',
  'dareq-sz',
  'aqu-sz',
  'util',
].map((key) => LINUX_KEYS.indexOf(key));

/** One device's row of sysstat 12.5 `-x`, values in LINUX_KEYS order. */
function linuxValues(rng: Prng, d: Device, a: Activity): number[] {
  const rrqm = d.nvme ? 0 : a.r * (d.workload === 'sequential' ? rng.range(0.05, 0.6) : rng.range(0, 0.05));
  const wrqm = d.nvme ? 0 : a.w * rng.range(0, d.workload === 'log' ? 0.8 : 0.2);
  const discard = d.nvme && a.w > 0 && rng.next() < 0.05;
  const ds = discard ? rng.range(0.2, 4) : 0;
  const dkB = discard ? ds * rng.range(256, 4096) : 0;
  const fs = a.w > 0 && d.workload !== 'backup' ? a.w * rng.range(0.01, 0.1) : 0;
  const rAwait = a.r > 0 ? a.svc + a.waitMs + (d.nvme ? 0 : a.svc * 0.2 * rng.next()) : 0;
  const wAwait = a.w > 0 ? a.svc * 1.2 + a.waitMs : 0;
  const dAwait = ds > 0 ? a.svc * rng.range(1, 5) : 0;
  const fAwait = fs > 0 ? a.svc * rng.range(0.5, 2) : 0;
  const aqu = (a.r * rAwait + a.w * wAwait + ds * dAwait + fs * fAwait) / 1000;
  const util = Math.min(100, ((a.r + a.w + ds) * a.svc) / 10);
  const pct = (merged: number, done: number): number => (merged + done > 0 ? (100 * merged) / (merged + done) : 0);
  return [
    a.r,
    a.rkB,
    rrqm,
    pct(rrqm, a.r),
    rAwait,
    a.r > 0 ? a.rkB / a.r : 0,
    a.w,
    a.wkB,
    wrqm,
    pct(wrqm, a.w),
    wAwait,
    a.w > 0 ? a.wkB / a.w : 0,
    ds,
    dkB,
    0,
    0,
    dAwait,
    ds > 0 ? dkB / ds : 0,
    fs,
    fAwait,
    aqu,
    util,
  ];
}

function linuxRow(rng: Prng, d: Device, a: Activity): string {
  const values = linuxValues(rng, d, a);
  let row = d.name;
  if (row.length < 12) row += ' '.repeat(12 - row.length);
  for (let i = 0; i < values.length; i++) row += ' ' + fixed(values[i]!, 2, LINUX_WIDTHS[i]!);
  return row;
}

function cpuLine(rng: Prng, sinceBoot: boolean): string {
  const user = sinceBoot ? 6.1 : rng.range(2, 35);
  const system = sinceBoot ? 2.4 : rng.range(1, 12);
  const iowait = sinceBoot ? 1.3 : rng.range(0, 15);
  const steal = 0;
  const nice = sinceBoot ? 0.02 : rng.next() < 0.9 ? 0 : rng.range(0, 1);
  const idle = Math.max(0, 100 - user - system - iowait - nice - steal);
  return '       ' + [user, nice, system, iowait, steal, idle].map((v) => fixed(v, 2, 8)).join('');
}

function writeLinux(path: string, targetBytes: number, shape: LogShape = {}): Written {
  const rng = new Prng(shape.seed ?? SEED ^ 0x11_0e_55);
  const devices = linuxDevices(rng, shape.devices ?? DEVICES);
  const out = new Output(path);
  out.line(LINUX_BANNER);
  out.line('');
  let reports = 0;
  while (out.bytes < targetBytes) {
    const sinceBoot = reports === 0;
    out.line(LINUX_CPU_HEADER);
    out.line(cpuLine(rng, sinceBoot));
    out.line('');
    out.line(LINUX_HEADER);
    for (const d of devices) out.line(linuxRow(rng, d, step(rng, d, sinceBoot)));
    out.line('');
    reports++;
  }
  out.close();
  return { reports, lines: out.lines };
}

function freebsdDevices(rng: Prng, count: number): Device[] {
  const devices: Device[] = [];
  const ada = Math.ceil(count * 0.6);
  const nvd = Math.round(count * 0.2);
  for (let i = 0; i < ada; i++) devices.push(makeDevice(rng, `ada${i}`, false));
  for (let i = 0; i < nvd && devices.length < count; i++) devices.push(makeDevice(rng, `nvd${i}`, true));
  for (let i = 0; devices.length < count; i++) devices.push(makeDevice(rng, `da${i}`, false));
  return devices;
}

const FREEBSD_TITLE = '                        extended device statistics  ';
const FREEBSD_HEADER = 'device       r/s     w/s     kr/s     kw/s  ms/r  ms/w  ms/o  ms/t qlen  %b  ';

/**
 * A right-aligned column; a value wider than it keeps one space before it (FreeBSD's printf would
 * glue it to the last).
 */
function column(text: string, width: number): string {
  return text.length >= width ? ` ${text}` : ' '.repeat(width - text.length) + text;
}

function freebsdRow(a: Activity, device: string): string {
  const ops = a.r + a.w;
  const msR = a.r > 0 ? a.svc + a.waitMs : 0;
  const msW = a.w > 0 ? a.svc * 1.2 + a.waitMs : 0;
  const msT = ops > 0 ? (a.r * msR + a.w * msW) / ops : 0;
  const qlen = (ops * msT) / 1000;
  const busy = Math.min(100, (ops * a.svc) / 10);
  const name = device.length < 8 ? device + ' '.repeat(8 - device.length) : device;
  const round = (v: number, width: number) => column(whole(v, 0), width);
  return (
    name +
    round(a.r, 8) +
    round(a.w, 8) +
    column(fixed(a.rkB, 1, 0), 9) +
    column(fixed(a.wkB, 1, 0), 9) +
    round(msR, 6) +
    round(msW, 6) +
    round(0, 6) +
    round(msT, 6) +
    round(qlen, 5) +
    round(busy, 4) +
    ' '
  );
}

function writeFreebsd(path: string, targetBytes: number, shape: LogShape = {}): Written {
  const rng = new Prng(shape.seed ?? SEED ^ 0xf7_ee_b5);
  const devices = freebsdDevices(rng, shape.devices ?? DEVICES);
  const out = new Output(path);
  out.line('iostat -x -w 5');
  let reports = 0;
  while (out.bytes < targetBytes) {
    out.line(FREEBSD_TITLE);
    out.line(FREEBSD_HEADER);
    for (const d of devices) out.line(freebsdRow(step(rng, d, reports === 0), d.name));
    reports++;
  }
  out.close();
  return { reports, lines: out.lines };
}

/** sysstat's JSON timestamp, `01/15/2024 10:00:05 AM`: 12-hour clock, UTC here. */
function sysstatTime(ms: number): string {
  const t = new Date(ms);
  const two = (n: number) => (n < 10 ? `0${n}` : String(n));
  const hours = t.getUTCHours();
  const h12 = hours % 12 === 0 ? 12 : hours % 12;
  const date = `${two(t.getUTCMonth() + 1)}/${two(t.getUTCDate())}/${t.getUTCFullYear()}`;
  const time = `${two(h12)}:${two(t.getUTCMinutes())}:${two(t.getUTCSeconds())}`;
  return `${date} ${time} ${hours < 12 ? 'AM' : 'PM'}`;
}

function writeLinuxJson(path: string, targetBytes: number, shape: LogShape = {}): Written {
  const rng = new Prng(shape.seed ?? SEED ^ 0x15_07);
  const devices = linuxDevices(rng, shape.devices ?? DEVICES);
  const out = new Output(path);
  const started = Date.UTC(2024, 0, 15, 10, 0, 1);
  out.line('{"sysstat": {');
  out.line('\t"hosts": [');
  out.line('\t\t{');
  out.line('\t\t\t"nodename": "benchhost",');
  out.line('\t\t\t"sysname": "Linux",');
  out.line('\t\t\t"release": "5.15.0-91-generic",');
  out.line('\t\t\t"machine": "x86_64",');
  out.line('\t\t\t"number-of-cpus": 8,');
  out.line('\t\t\t"date": "01/15/2024",');
  out.line('\t\t\t"statistics": [');
  let reports = 0;
  while (out.bytes < targetBytes) {
    const sinceBoot = reports === 0;
    if (!sinceBoot) out.line('\t\t\t\t},');
    out.line('\t\t\t\t{');
    out.line(`\t\t\t\t\t"timestamp": "${sysstatTime(started + reports * 5000)}",`);
    const cpu = cpuLine(rng, sinceBoot).trim().split(/\s+/);
    out.line(
      `\t\t\t\t\t"avg-cpu":  {"user": ${cpu[0]}, "nice": ${cpu[1]}, "system": ${cpu[2]}, "iowait": ${cpu[3]}, ` +
        `"steal": ${cpu[4]}, "idle": ${cpu[5]}},`,
    );
    out.line('\t\t\t\t\t"disk": [');
    devices.forEach((d, i) => {
      const values = linuxValues(rng, d, step(rng, d, sinceBoot));
      let row = `\t\t\t\t\t\t{"disk_device": "${d.name}"`;
      for (const k of LINUX_JSON_ORDER) row += `, "${LINUX_KEYS[k]}": ${fixed(values[k]!, 2, 0)}`;
      out.line(`${row}}${i < devices.length - 1 ? ',' : ''}`);
    });
    out.line('\t\t\t\t\t]');
    reports++;
  }
  out.line('\t\t\t\t}');
  out.line('\t\t\t]');
  out.line('\t\t}');
  out.line('\t]');
  out.line('}}');
  out.close();
  return { reports, lines: out.lines };
}

export type IostatFlavour = 'solaris' | 'linux' | 'freebsd' | 'linux-json';
export const IOSTAT_FLAVOURS: readonly IostatFlavour[] = ['solaris', 'linux', 'freebsd', 'linux-json'];

const WRITERS: Record<IostatFlavour, (path: string, targetBytes: number, shape: LogShape) => Written> = {
  solaris: writeSolaris,
  linux: writeLinux,
  freebsd: writeFreebsd,
  'linux-json': writeLinuxJson,
};

/**
 * A log of this flavour of at least targetBytes (whole reports: it ends at the
 * first report boundary past the target), every device in every report.
 */
export function writeIostatLog(
  flavour: IostatFlavour,
  path: string,
  targetBytes: number,
  shape: LogShape = {},
): Written {
  return WRITERS[flavour](path, targetBytes, shape);
}

// ---------------------------------------------------------------- entry points

export function logPath(kind: LogKind, targetBytes: number): string {
  const size = targetBytes % MB === 0 ? `${targetBytes / MB}MB` : `${targetBytes}B`;
  return join(OUT_DIR, kind === 'solaris' ? `solaris-10-iostat-xn-${size}.log` : `linux-sysstat-12.5-x-${size}.log`);
}

/** The log of this kind and size, generated unless an identical one is already there. */
export function ensureLog(kind: LogKind, targetBytes: number): GeneratedLog {
  mkdirSync(OUT_DIR, { recursive: true });
  const path = logPath(kind, targetBytes);
  const sidecarPath = `${path}.json`;
  if (existsSync(path) && existsSync(sidecarPath)) {
    try {
      const meta = JSON.parse(readFileSync(sidecarPath, 'utf8')) as Sidecar;
      if (
        meta.generatorVersion === GENERATOR_VERSION &&
        meta.seed === SEED &&
        meta.targetBytes === targetBytes &&
        statSync(path).size === meta.bytes
      ) {
        return {
          kind,
          path,
          bytes: meta.bytes,
          lines: meta.lines,
          reports: meta.reports,
          devices: meta.devices,
          reused: true,
        };
      }
    } catch {
      // Unreadable sidecar: generate again.
    }
  }
  const partial = `${path}.partial`;
  const { reports, lines } = kind === 'solaris' ? writeSolaris(partial, targetBytes) : writeLinux(partial, targetBytes);
  const bytes = statSync(partial).size;
  renameSync(partial, path);
  const meta: Sidecar = {
    generatorVersion: GENERATOR_VERSION,
    seed: SEED,
    targetBytes,
    bytes,
    lines,
    reports,
    devices: DEVICES,
  };
  writeFileSync(sidecarPath, `${JSON.stringify(meta, null, 2)}\n`);
  return { kind, path, bytes, lines, reports, devices: DEVICES, reused: false };
}

/** `--size-mb N`, else BENCH_SIZE_MB, else 200. */
export function sizeFromArgs(args: readonly string[]): number {
  const at = args.indexOf('--size-mb');
  const text = at !== -1 ? args[at + 1] : process.env.BENCH_SIZE_MB;
  const mb = text === undefined || text === '' ? 200 : Number(text);
  if (!Number.isFinite(mb) || mb <= 0)
    throw new Error(`--size-mb / BENCH_SIZE_MB must be a positive number of MB, not ${JSON.stringify(text)}`);
  return Math.round(mb * MB);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const kinds = LOG_KINDS.filter((k) => args.includes(k));
  const bytes = sizeFromArgs(args);
  for (const kind of kinds.length > 0 ? kinds : LOG_KINDS) {
    const started = performance.now();
    const log = ensureLog(kind, bytes);
    const took = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `${log.reused ? 'reused' : 'wrote'} ${log.path}: ${(log.bytes / MB).toFixed(1)} MB, ` +
        `${log.lines} lines, ${log.reports} reports x ${log.devices} devices (${took} s)`,
    );
  }
}
