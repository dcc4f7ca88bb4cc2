/**
 * The demo's fio sweeps, constructed: two SSDs (`nvme-ssd`, `sata-ssd`), three runs
 * each of one job file (random reads and writes; 4k to 1m; queue depths 1 to 32).
 * A device's IOPS at a point is the lesser of its queue-depth limit and its bandwidth
 * limit over the block size, times a run's own noise (a few percent). Written once
 * into demo/ by `npx tsx harness/demo-fio.ts`; test/harness/demo-fio.test.ts checks
 * the files are still what this writes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fioJson, type WrittenJob } from './fio-output.ts';

interface Device {
  label: string;
  /** IOPS one request in flight reaches, and the most any depth reaches. */
  iopsPerDepth: number;
  maxIops: number;
  /** Bytes per second the interface caps at. */
  maxBytes: number;
  /** Writes reach this share of the reads. */
  writeShare: number;
  /** Its latency tail (fio-output.ts WrittenOutput.tail): the SATA drive's p99 and beyond spread further. */
  tail: number;
}

export const DEMO_FIO_DEVICES: readonly Device[] = [
  { label: 'nvme-ssd', iopsPerDepth: 12_000, maxIops: 550_000, maxBytes: 3.2e9, writeShare: 0.8, tail: 1 },
  { label: 'sata-ssd', iopsPerDepth: 7_000, maxIops: 90_000, maxBytes: 530e6, writeShare: 0.85, tail: 1.3 },
];
export const DEMO_FIO_RUNS = 3;
export const DEMO_FIO_SIZES = [4096, 16_384, 65_536, 262_144, 1_048_576];
export const DEMO_FIO_DEPTHS = [1, 4, 16, 32];
export const DEMO_FIO_RWS = ['randread', 'randwrite'] as const;

/** A run's noise: deterministic, within about ±3%. */
function noise(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return 1 + ((s / 2 ** 32) * 2 - 1) * 0.03;
  };
}

/** A device's IOPS at a point, before a run's noise. */
export function demoFioIops(device: Device, rw: (typeof DEMO_FIO_RWS)[number], bs: number, iodepth: number): number {
  const share = rw === 'randwrite' ? device.writeShare : 1;
  return Math.min(device.iopsPerDepth * iodepth, device.maxIops, device.maxBytes / bs) * share;
}

function sweep(device: Device, run: number): WrittenJob[] {
  const jitter = noise(run * 7919 + [...device.label].reduce((h, c) => h * 31 + c.charCodeAt(0), 0));
  const jobs: WrittenJob[] = [];
  for (const rw of DEMO_FIO_RWS)
    for (const iodepth of DEMO_FIO_DEPTHS)
      for (const bs of DEMO_FIO_SIZES) {
        const iops = demoFioIops(device, rw, bs, iodepth) * jitter();
        jobs.push({ rw, bs, iodepth, numjobs: 1, iops: Number(iops.toFixed(6)) });
      }
  return jobs;
}

/** Each demo fio output: its file name in demo/, the key it is uploaded under, and its text. */
export function demoFioOutputs(): { file: string; key: string; text: string }[] {
  return DEMO_FIO_DEVICES.flatMap((device) =>
    Array.from({ length: DEMO_FIO_RUNS }, (_, r) => ({
      file: `${device.label}.fio-sweep-${r + 1}.json`,
      key: `${device.label}/fio-sweep-${r + 1}.json`,
      text: fioJson({ jobs: sweep(device, r + 1), timestamp: 1_733_220_000 + r * 3600, tail: device.tail }),
    })),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const demo = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'demo');
  for (const { file, text } of demoFioOutputs()) writeFileSync(join(demo, file), text);
}
