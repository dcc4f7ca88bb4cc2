/**
 * harness/demo-fio.ts: the demo's fio sweeps in demo/ are what it writes (a change to
 * the writer or the model shows here, not as a silent drift of the demo), the lab
 * uploads each under its device's folder, each parses to its 40 points, and the
 * SATA drive's latency tail is the heavier one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEMO_FIO_DEVICES, DEMO_FIO_RUNS, demoFioOutputs } from '../../harness/demo-fio.ts';
import { demoUploads } from '../../infra/local/lab.ts';
import { parseText } from '../../shared/parsers/index.ts';

const DEMO = fileURLToPath(new URL('../../demo', import.meta.url));

describe('the demo fio sweeps', () => {
  const outputs = demoFioOutputs();

  it('are in demo/ as the writer writes them, three runs a device', () => {
    expect(outputs).toHaveLength(DEMO_FIO_DEVICES.length * DEMO_FIO_RUNS);
    for (const { file, text } of outputs) expect(readFileSync(join(DEMO, file), 'utf8'), file).toBe(text);
  });

  it("are uploaded under their device's folder", () => {
    const keys = new Map(demoUploads().map((u) => [u.file, u.key]));
    for (const { file, key } of outputs) expect(keys.get(file)).toBe(key);
    expect(keys.get('nvme-ssd.fio-sweep-2.json')).toBe('nvme-ssd/fio-sweep-2.json');
  });

  it('parse to one run of 40 points each: 2 rw x 4 depths x 5 block sizes', async () => {
    for (const { file, text } of outputs) {
      const parsed = await parseText(text, file);
      expect(parsed.format).toBe('fio');
      const run = parsed.runs[0]!;
      expect(run.format === 'fio' ? run.rows.length : 0, file).toBe(40);
      expect(run.warnings).toEqual([]);
    }
  });

  it('give the SATA drive the heavier latency tail: its p99.99 further from its median', async () => {
    const spread = async (device: string) => {
      const { file, text } = outputs.find((o) => o.file.startsWith(`${device}.`))!;
      const run = (await parseText(text, file)).runs[0]!;
      const row = run.format === 'fio' ? run.rows[0]! : undefined;
      return row!.values.fio_read_p99_99! / row!.values.fio_read_p50!;
    };
    const [nvme, sata] = [await spread('nvme-ssd'), await spread('sata-ssd')];
    expect(nvme).toBeCloseTo(8 / 0.9, 1);
    expect(sata).toBeCloseTo(8 ** 1.3 / 0.9, 1);
  });
});
