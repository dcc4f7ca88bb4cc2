/**
 * Frozen reports on a real s3rver: a report is stored whole (JSON then page),
 * read back byte for byte, and an id that was never stored answers nothing.
 */
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulators, type Emulators } from '../../harness/emulators.ts';
import type { Comparison } from '../../shared/comparison/index.ts';
import { freezeReport, isReportId, newReportId, readReport, reportKey } from '../../shared/reports.ts';

const BUCKET = 'benchdrop-reports-test';
let emulators: Emulators;

beforeAll(async () => {
  emulators = await startEmulators();
  await emulators.s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
}, 60_000);

afterAll(async () => {
  await emulators?.stop();
});

const comparison = { ratio: 1.9, sentence: 'redux is 1.90x 10M_Sync' } as unknown as Comparison;

describe('report ids', () => {
  it('are 12 base58 characters, all different over many draws', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newReportId()));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(isReportId(id)).toBe(true);
  });

  it('refuses what could not be one (a path, a look-alike character, the wrong length)', () => {
    for (const bad of ['../secret.json', 'abcdefghijk0', 'abcdefghijk', 'abcdefghijkmn', 'abcdefghijkI'])
      expect(isReportId(bad)).toBe(false);
  });
});

describe('freezeReport and readReport', () => {
  const deps = () => ({ s3: emulators.s3, resultsBucket: BUCKET, now: () => Date.parse('2026-12-02T10:00:00Z') });
  const query = { a: 'redux', b: '10M_Sync', metric: 'all' };

  it('stores the JSON and the page the renderer made, and serves both back unchanged', async () => {
    const report = await freezeReport(deps(), query, comparison, (r) => `<html>${r.id} ${r.comparison.ratio}</html>`);
    expect(report).toEqual({ id: report.id, createdAt: '2026-12-02T10:00:00.000Z', query });
    const page = await readReport(deps(), report.id, 'html');
    expect(page).toEqual({ body: `<html>${report.id} 1.9</html>`, contentType: 'text/html; charset=utf-8' });
    const json = await readReport(deps(), report.id, 'json');
    expect(JSON.parse(json!.body)).toEqual({ ...report, comparison });
  });

  it('answers undefined for an id that was never stored', async () => {
    expect(await readReport(deps(), newReportId(), 'html')).toBeUndefined();
  });

  it('stores nothing when the page cannot be made', async () => {
    const failing = () => {
      throw new Error('renderer failed');
    };
    const stored = async () =>
      (await emulators.s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'reports/' }))).KeyCount ?? 0;
    const before = await stored();
    await expect(freezeReport(deps(), query, comparison, failing)).rejects.toThrow('renderer failed');
    expect(await stored()).toBe(before);
  });

  it('keeps a report as it was when another object lands beside it', async () => {
    const report = await freezeReport(deps(), query, comparison, () => '<html>first</html>');
    await emulators.s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: reportKey(newReportId(), 'html'), Body: 'x' }));
    expect((await readReport(deps(), report.id, 'html'))?.body).toBe('<html>first</html>');
  });
});
