/**
 * Every state of the report page at a desktop's width (1280 px) and a phone's
 * (390 px), in Debian's chromium: a diskperf comparison, an iostat one (its
 * setups side by side and each run's samples over time), a fio one (its
 * ratios by block size and by queue depth, both sides by block size, and with
 * metric=latency the percentiles side by side), a class (a selector
 * matching several labels), an empty lab, an error from the API and a request
 * held open (loading). In each: no JavaScript or console error, nothing wider
 * than the viewport but the scrolling table boxes, and a screenshot kept in the
 * artifacts folder (browser.ts). Then the keyboard (Tab to the form, Enter to
 * compare, on to the downloads and the table), the downloads themselves (the
 * shared table's CSV and Markdown, in a written file too), and the charts of a
 * written file: interval and spread bands, load metrics in their own chart.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../harness/quiet.ts';
import { startLab, type Lab } from '../../infra/local/lab.ts';
import { reportHtml } from '../../report/build.ts';
import type { RunSamples } from '../../shared/api.ts';
import { compareObservations, type Comparison, type Observation } from '../../shared/compare.ts';
import { comparisonTable, tableCsv, tableMarkdown } from '../../shared/comparison/table.ts';
import { blockSizeText } from '../../shared/fio-point.ts';
import { FIO_METRICS } from '../../shared/metrics.ts';
import { formatValue } from '../../report/values.ts';
import { documentWidth, drawnBars, keepScreenshot, launchChromium, pageErrors } from './browser.ts';

const WIDTHS = [1280, 390] as const;
const dir = mkdtempSync(join(tmpdir(), 'benchdrop-report-states-'));
let lab: Lab;
let browser: Browser;

beforeAll(async () => {
  lab = await startLab({ dataDir: join(dir, 'lab'), fresh: true, s3Port: 0, apiPort: 0, log: () => {} });
  await lab.idle();
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await lab?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function api<T = Comparison>(path: string): Promise<T> {
  return (await (await fetch(`${lab.endpoints.apiUrl}${path}`)).json()) as T;
}

const compareUrl = (query: Record<string, string>) => `${lab.endpoints.reportUrl}?${new URLSearchParams(query)}`;

async function openPage(width: number): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  return { page, errors: pageErrors(page) };
}

/** What every state holds to: a screenshot kept, nothing wider than the viewport, no error in the page. */
async function settle(page: Page, errors: readonly string[], name: string, width: number): Promise<void> {
  await keepScreenshot(page, `${name}-${width}`);
  expect(await documentWidth(page)).toBeLessThanOrEqual(width);
  expect(errors).toEqual([]);
  await page.close();
}

/** The comparison table as drawn: its caption, column headers and every row's cells. */
async function drawnTable(page: Page) {
  const table = page.locator('#comparison-table');
  const rows = await table.locator('tbody tr').all();
  return {
    caption: await table.locator('caption').textContent(),
    columns: await table.locator('thead th[scope="col"]').allTextContents(),
    rows: await Promise.all(
      rows.map(async (r) => ({
        kind: await r.getAttribute('data-kind'),
        header: await r.locator('th[scope="row"]').count(),
        // The marks' links are the last cell's tail: the cells as the table module printed them come first.
        cells: await r
          .locator('th, td')
          .evaluateAll((cells) =>
            cells.map((c) => (c.firstChild?.nodeType === 3 ? c.firstChild.textContent : '') ?? ''),
          ),
      })),
    ),
  };
}

/** The table the page should draw: the shared table module's, its marks aside. */
function expectedTable(c: Comparison) {
  const t = comparisonTable(c);
  return {
    caption: t.title,
    columns: t.columns,
    rows: t.rows.map((r) => ({ kind: r.kind, header: 1, cells: r.cells })),
  };
}

/** What a fio chart says it drew (`data-series`): its metric, its x values and each line's points. */
interface DrawnSeries {
  metric: string;
  xs: number[];
  lines: { label: string; points: number }[];
}

async function drawnSeries(page: Page, chart: string): Promise<DrawnSeries> {
  return JSON.parse((await page.getAttribute(chart, 'data-series'))!) as DrawnSeries;
}

/** The demo sweeps' block sizes and queue depths at which a metric was compared, each in order. */
function sweepOf(c: Comparison, metric: string) {
  const rows = c.rows.filter((r) => r.metric === metric);
  const distinct = (values: unknown[]) => [...new Set(values as number[])].sort((x, y) => x - y);
  return { sizes: distinct(rows.map((r) => r.bs)), depths: distinct(rows.map((r) => r.iodepth)) };
}

/**
 * The fio charts of one metric: a line per queue depth by block size, per block size by queue depth,
 * as ratios and as both sides' values.
 */
async function expectFioCharts(page: Page, c: Comparison, metric: string, rw: string): Promise<void> {
  const { sizes, depths } = sweepOf(c, metric);
  expect(depths).toEqual([1, 4, 16, 32]);
  expect(sizes.length).toBeGreaterThanOrEqual(4);
  for (const chart of ['#fio-bs-chart', '#fio-qd-chart', '#fio-abs-chart', '#fio-abs-qd-chart'])
    expect(await page.locator(`${chart} canvas`).count()).toBe(1);
  expect(await drawnSeries(page, '#fio-bs-chart')).toEqual({
    metric,
    xs: sizes,
    lines: depths.map((d) => ({ label: `${rw} qd${d} nj1`, points: sizes.length })),
  });
  expect(await drawnSeries(page, '#fio-qd-chart')).toEqual({
    metric,
    xs: depths,
    lines: sizes.map((s) => ({ label: `${rw} ${blockSizeText(s)} nj1`, points: depths.length })),
  });
  expect((await drawnSeries(page, '#fio-abs-chart')).lines.length).toBe(depths.length);
  // Both sides by queue depth: the first block sizes, their depths each.
  const byDepth = await drawnSeries(page, '#fio-abs-qd-chart');
  expect(byDepth.xs).toEqual(depths);
  expect(byDepth.lines.map((l) => l.label)).toEqual(
    sizes.slice(0, byDepth.lines.length).map((s) => `${rw} ${blockSizeText(s)} nj1`),
  );
  expect(byDepth.lines.length).toBe(Math.min(sizes.length, 5));
  expect(await page.textContent('#fio-bs-note')).toMatch(/^Shaded: each line's 95% interval/);
  for (const legend of await page.locator('.u-legend').all()) expect(await legend.textContent()).not.toContain('--');
}

describe.each(WIDTHS)('the report page at %i px', (width) => {
  it('a diskperf comparison: the table of every point, its marks linking to their notes, both charts', async () => {
    const query = { a: 'scsi2sd_redux', b: '300G_10K_SGI_Indy', metric: 'all' };
    const expected = await api(`/compare?${new URLSearchParams(query)}`);
    const { page, errors } = await openPage(width);
    await page.goto(compareUrl(query));
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    expect(await drawnTable(page)).toEqual(expectedTable(expected));
    // Each mark is a link to a footnote that is there.
    for (const mark of await page.locator('#comparison-table a.mark').all()) {
      const target = (await mark.getAttribute('href'))!;
      expect(await page.locator(target).count()).toBe(1);
    }
    expect(await page.locator('#ratio-chart canvas').count()).toBe(1);
    expect(await page.locator('#abs-chart canvas').count()).toBe(1);
    for (const legend of await page.locator('.u-legend').all()) expect(await legend.textContent()).not.toContain('--');
    expect(await page.textContent('#ratio-note')).toMatch(/^Dotted line: 1x, no difference/);
    // Diskperf runs have no samples over time; the setups are there, one column a run.
    expect(await page.isVisible('#series-section')).toBe(false);
    expect(await page.locator('#setups-table thead tr').nth(1).locator('th').count()).toBe(
      1 + expected.setups.a.length + expected.setups.b.length,
    );
    await settle(page, errors, 'diskperf', width);
  }, 60_000);

  it('an iostat comparison: diverging bars, setups side by side with what differs marked, each run over time', async () => {
    const query = { a: 'x4100/c0t0d0', b: 'x4100/c0t1d0', metric: 'all' };
    const expected = await api(`/compare?${new URLSearchParams(query)}`);
    const { page, errors } = await openPage(width);
    await page.goto(compareUrl(query));
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    expect(await drawnTable(page)).toEqual(expectedTable(expected));
    // One bar per metric with a ratio, each from 1x.
    const bars = await drawnBars(page, '#bar-chart');
    expect(bars.bars.map((b) => b.metric).sort()).toEqual(Object.keys(expected.byMetric).sort());
    for (const bar of bars.bars)
      expect(Math.min(Math.abs(bar.left - bars.one), Math.abs(bar.right - bars.one))).toBeLessThanOrEqual(1);
    // The setups: A's runs then B's, headed by side; each differing field marked by a class and a visible sign.
    const { setups } = expected;
    const heads = await page.locator('#setups-table thead tr').first().locator('th').allTextContents();
    expect(heads).toEqual(['A', 'B']);
    expect(setups.differs.length).toBeGreaterThan(0);
    const marked = await page
      .locator('#setups-table tr.differs')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-field')));
    expect(marked).toEqual(expect.arrayContaining(setups.differs));
    const marker = await page.evaluate<string>(
      `getComputedStyle(document.querySelector('#setups-table tr.differs th[scope="row"]'), '::before').content`,
    );
    expect(marker).toContain('≠');
    // Every warning about the setups links to them, in the summary and under the table.
    const setupNotes = comparisonTable(expected).notes.filter((n) => n.setups);
    expect(setupNotes.length).toBe(setups.warnings.length);
    expect(await page.locator('#table-notes li:has(a[href="#setups"])').count()).toBe(setupNotes.length);
    expect(await page.locator('#warnings li:has(a[href="#setups"])').count()).toBe(setups.warnings.length);
    // Each run over time: every run of A and of B on the devices picked, each as long as the API's series.
    const tracks = page.locator('#series-chart[data-tracks]');
    await tracks.waitFor({ timeout: 20_000 });
    const drawn = JSON.parse((await tracks.getAttribute('data-tracks'))!) as {
      run: string;
      points: number;
      capped: boolean;
    }[];
    expect(drawn).toHaveLength(setups.a.length + setups.b.length);
    const metric = await page.inputValue('#series-metric');
    expect(metric).toBe(expected.metrics.find((m) => expected.byMetric[m]));
    for (const track of drawn) {
      const run = [...setups.a, ...setups.b].find((r) => r.runId === track.run)!;
      const samples = await api<RunSamples>(
        `/runs/${track.run}/samples?${new URLSearchParams({ series: run.devices[0]!, metric })}`,
      );
      expect(track.points).toBe(samples.values.length);
      expect(track.capped).toBe(false);
    }
    expect(await page.textContent('#series-status')).toBe(`${drawn.length} runs drawn`);
    expect(await page.textContent('#series-note')).toMatch(/since-boot report/);
    await settle(page, errors, 'iostat', width);
  }, 60_000);

  it('a fio comparison: ratio by block size and by queue depth, both sides by block size, a point column', async () => {
    const query = { a: 'nvme-ssd', b: 'sata-ssd', metric: 'all' };
    const expected = await api(`/compare?${new URLSearchParams(query)}`);
    const { page, errors } = await openPage(width);
    await page.goto(compareUrl(query));
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    const table = await drawnTable(page);
    expect(table).toEqual(expectedTable(expected));
    const point = table.columns.indexOf('point (rw bs qd jobs)');
    expect(point).toBe(1);
    expect(table.rows.map((r) => r.cells[point])).toContain('randread 4k qd1 nj1');
    // Not diskperf's charts by request size, nor iostat's bars.
    for (const chart of ['#ratio-chart', '#abs-chart', '#bar-chart', '#load-chart'])
      expect(await page.locator(`${chart} canvas`).count()).toBe(0);
    // The form's menu offers fio's metrics in a group of their own; the chart's menu every metric compared.
    expect(await page.locator('#metric optgroup[label="fio"] option').allTextContents()).toEqual(FIO_METRICS);
    // Bandwidth charted first.
    expect(await page.locator('#fio-metric option').allTextContents()).toEqual(expected.metrics);
    expect(await page.inputValue('#fio-metric')).toBe('fio_read_bw');
    await expectFioCharts(page, expected, 'fio_read_bw', 'randread');
    // No percentiles in metric=all: the section says how to see them.
    expect(await page.isVisible('#fio-pct-box')).toBe(false);
    expect(await page.textContent('#fio-pct-note')).toMatch(/Choose the latency metric to see p50 to p99\.99/);
    // Another metric picked: its charts replace the first's.
    await page.selectOption('#fio-metric', 'fio_write_lat');
    await expectFioCharts(page, expected, 'fio_write_lat', 'randwrite');
    expect(await page.textContent('#fio-abs-chart .u-title')).toMatch(/fio_write_lat by block size, us$/);
    expect(await page.textContent('#fio-abs-qd-chart .u-title')).toMatch(/fio_write_lat by queue depth, us$/);
    await settle(page, errors, 'fio', width);
  }, 60_000);

  it('a fio comparison of latency: p50 to p99.99 of both sides side by side at every point', async () => {
    const query = { a: 'nvme-ssd', b: 'sata-ssd', metric: 'latency' };
    const expected = await api(`/compare?${new URLSearchParams(query)}`);
    const { page, errors } = await openPage(width);
    await page.goto(compareUrl(query));
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    expect(await page.inputValue('#fio-metric')).toBe('fio_read_lat');
    await expectFioCharts(page, expected, 'fio_read_lat', 'randread');
    const pct = page.locator('#fio-pct-table');
    expect(await pct.isVisible()).toBe(true);
    const heads = pct.locator('thead tr');
    expect(await heads.nth(0).locator('th').allTextContents()).toEqual([
      'point',
      'p50',
      'p90',
      'p99',
      'p99.9',
      'p99.99',
    ]);
    expect(await heads.nth(1).locator('th').allTextContents()).toEqual(Array(5).fill(['A', 'B']).flat());
    // A row per point and direction that has percentiles.
    const percentiles = expected.rows.filter((r) => /_p\d+(_\d+)?$/.test(r.metric));
    const rowsOf = new Set(percentiles.map((r) => `${r.metric.split('_')[1]} ${r.point}`));
    expect(await pct.locator('tbody tr').count()).toBe(rowsOf.size);
    // One row in full: each side's value, and the better side (lower latency, significant) in bold.
    const key = 'randread bs=4096 iodepth=1 numjobs=1';
    const row = pct.locator(`tbody tr[data-point="${key}"]`);
    expect(await row.locator('th').textContent()).toBe('randread 4k qd1 nj1');
    const at = ['p50', 'p90', 'p99', 'p99_9', 'p99_99'].map((p) =>
      percentiles.find((r) => r.point === key && r.metric === `fio_read_${p}`)!,
    );
    expect(await row.locator('td').allTextContents()).toEqual(
      at.flatMap((r) => [formatValue(r.a!), formatValue(r.b!)]),
    );
    const bold = await row.locator('td').evaluateAll((cells) => cells.map((c) => c.classList.contains('better')));
    expect(bold).toEqual(
      at.flatMap((r) => [r.significant === true && r.ratio! > 1, r.significant === true && r.ratio! < 1]),
    );
    expect(bold).toContain(true);
    expect(await page.textContent('#fio-pct-note')).toMatch(/^Each side's median over its runs/);
    await settle(page, errors, 'fio-latency', width);
  }, 60_000);

  it('a class comparison: a selector of several labels, each run a column of A', async () => {
    const query = { a: 'scsi2sd_*', b: '300G_10K_SGI_Indy', metric: 'write' };
    const expected = await api(`/compare?${new URLSearchParams(query)}`);
    expect(new Set(expected.setups.a.map((s) => s.label)).size).toBe(2);
    const { page, errors } = await openPage(width);
    await page.goto(compareUrl(query));
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    expect(await page.textContent('#sentence')).toBe(expected.sentence);
    expect(await drawnTable(page)).toEqual(expectedTable(expected));
    const labels = await page.locator('#setups-table thead tr').nth(1).locator('th').allTextContents();
    expect(labels).toEqual([
      'field',
      ...expected.setups.a.map((s) => `A: ${s.label}`),
      ...expected.setups.b.map((s) => `B: ${s.label}`),
    ]);
    await settle(page, errors, 'class', width);
  }, 60_000);

  it("an error: the API's message, the form kept", async () => {
    const { page, errors } = await openPage(width);
    const message = 'internal error (request id 5a6b7c8d)';
    await page.route(
      (url) => url.pathname === '/compare',
      (route) =>
        route.fulfill({
          status: 500,
          contentType: 'application/json',
          body: JSON.stringify({ error: { code: 'InternalError', message } }),
        }),
    );
    await page.goto(compareUrl({ a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync' }));
    await page.waitForSelector('body[data-state="error"]', { timeout: 20_000 });
    expect(await page.textContent('#error')).toBe(`Could not compare scsi2sd_redux with scsi2sd_10M_Sync: ${message}`);
    expect(await page.isVisible('#controls')).toBe(true);
    // The browser reports the 500 itself; the page adds no error of its own.
    await settle(
      page,
      errors.filter((e) => !/status of 500/.test(e)),
      'error',
      width,
    );
  }, 30_000);

  it('loading: a comparison held open keeps main busy and the status line saying so', async () => {
    const { page, errors } = await openPage(width);
    let release: (() => void) | undefined;
    await page.route(
      (url) => url.pathname === '/compare',
      async (route) => {
        await new Promise<void>((r) => (release = r));
        await route.continue();
      },
    );
    await page.goto(compareUrl({ a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync' }));
    await page
      .getByRole('status')
      .filter({ hasText: 'comparing scsi2sd_redux with scsi2sd_10M_Sync (all)...' })
      .waitFor();
    expect(await page.getAttribute('main', 'aria-busy')).toBe('true');
    expect(await page.getAttribute('body', 'data-state')).toBe('loading');
    await keepScreenshot(page, `loading-${width}`);
    expect(await documentWidth(page)).toBeLessThanOrEqual(width);
    await expect.poll(() => release !== undefined).toBe(true);
    release!();
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    expect(await page.getAttribute('main', 'aria-busy')).toBe('false');
    await settle(page, errors, 'loaded', width);
  }, 30_000);
});

describe('the report page by keyboard and its downloads', () => {
  const focused = (page: Page) =>
    page.evaluate<string>(
      `(() => { const e = document.activeElement; return e.id || (e.querySelector('table')?.id ?? '') + '-box'; })()`,
    );

  async function tabTo(page: Page, id: string, most = 80): Promise<void> {
    for (let i = 0; i < most; i++) {
      await page.keyboard.press('Tab');
      if ((await focused(page)) === id) return;
    }
    throw new Error(`Tab never reached #${id}`);
  }

  it('Tab reaches the form, Enter compares, and Tab goes on to the downloads and the table box', async () => {
    const { page, errors } = await openPage(1280);
    await page.goto(compareUrl({ a: 'scsi2sd_redux', b: 'scsi2sd_10M_Sync' }));
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('a');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('x4100/c0t0d0');
    await page.keyboard.press('Tab');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('x4100/c0t1d0');
    await page.keyboard.press('Enter');
    await page.locator('#sentence', { hasText: 'x4100/c0t1d0 on all' }).waitFor({ timeout: 20_000 });
    await tabTo(page, 'download-csv');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('download-md');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('comparison-table-box');
    // Enter on a focused download link saves the table.
    const expected = await api('/compare?a=x4100%2Fc0t0d0&b=x4100%2Fc0t1d0&metric=all');
    await page.locator('#download-csv').focus();
    const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    expect(readFileSync((await download.path())!, 'utf8')).toBe(tableCsv(comparisonTable(expected)));
    expect(download.suggestedFilename()).toBe('benchdrop-x4100_c0t0d0-vs-x4100_c0t1d0-all.csv');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('a written file offers the CSV and Markdown with no server, and says the time series needs the lab', async () => {
    const comparison = await api('/compare?a=x4100%2Fc0t0d0&b=x4100%2Fc0t1d0&metric=all');
    const file = join(dir, 'downloads.html');
    await writeFile(file, await reportHtml({ comparison }));
    const { page, errors } = await openPage(390);
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-state="compared"]');
    const table = comparisonTable(comparison);
    for (const [id, text] of [
      ['#download-csv', tableCsv(table)],
      ['#download-md', tableMarkdown(table)],
    ] as const) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click(id)]);
      expect(readFileSync((await download.path())!, 'utf8')).toBe(text);
    }
    expect(await page.textContent('#series-offline')).toMatch(/need the lab or the API/);
    expect(requests.filter((u) => !u.startsWith('blob:'))).toEqual([pathToFileURL(file).href]);
    await settle(page, errors, 'written-file', 390);
  }, 30_000);
});

describe('the charts of a written file', () => {
  /** Three runs a side of one diskperf device, A 1.5 to 2 times B, each run a little off the others. */
  function diskperfSide(label: string, scale: number): Observation[] {
    return [0.97, 1, 1.03].map((j, r) => ({
      runId: `${label}-${r}`,
      device: label,
      label,
      format: 'diskperf',
      values: {
        fwd_rd: new Map([4096, 65536, 1048576].map((size, k) => [size, (2 + k) * scale * j])),
        fwd_wt: new Map([4096, 65536, 1048576].map((size, k) => [size, (1 + k) * scale * j * (k === 0 ? 1.2 : 1)])),
      },
    }));
  }

  it('by request size: each metric interval and each side spread shaded, 1x dotted, ~ explained', async () => {
    const comparison = compareObservations(diskperfSide('fast', 2), diskperfSide('slow', 1.2), {
      labels: { a: 'fast', b: 'slow' },
    });
    expect(comparison.rows.every((r) => r.spread?.a.runs === 3)).toBe(true);
    const file = join(dir, 'bands.html');
    await writeFile(file, await reportHtml({ comparison }));
    for (const width of [1280, 390]) {
      const { page, errors } = await openPage(width);
      await page.goto(pathToFileURL(file).href);
      await page.waitForSelector('body[data-state="compared"]');
      expect(await page.textContent('#ratio-note')).toMatch(/^Shaded: each metric's 95% interval/);
      expect(await page.textContent('#abs-note')).toMatch(/shaded: from its lowest run to its highest/);
      expect(await page.locator('#ratio-chart .u-legend').textContent()).toMatch(/fwd_rd [\d.]+x \[[\d.]+x-[\d.]+x\]/);
      await settle(page, errors, 'bands', width);
    }
  }, 30_000);

  it('a load metric (util_pct) gets the load chart, below and apart from performance', async () => {
    const side = (label: string, busy: number) =>
      [0.98, 1, 1.02].map((j, r): Observation => ({
        runId: `${label}-${r}`,
        device: `${label}/sda`,
        label,
        native: 'sda',
        format: 'iostat',
        values: { util_pct: busy * j },
        samples: 12,
      }));
    const comparison = compareObservations(side('tuned', 20), side('stock', 100), {
      labels: { a: 'tuned', b: 'stock' },
      metric: 'util_pct',
    });
    const file = join(dir, 'load.html');
    await writeFile(file, await reportHtml({ comparison }));
    const { page, errors } = await openPage(1280);
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-state="compared"]');
    expect(await page.locator('#bar-chart canvas').count()).toBe(0);
    const load = await drawnBars(page, '#load-chart');
    // %busy is lower-better: 20% against 100% is 5x better for A, a bar right of 1x.
    expect(load.bars.map((b) => b.metric)).toEqual(['util_pct']);
    expect(Math.abs(load.bars[0]!.left - load.one)).toBeLessThanOrEqual(1);
    expect(load.bars[0]!.right).toBeGreaterThan(load.one + 40);
    expect(await page.getAttribute('#load-chart', 'aria-label')).toMatch(/util_pct 5\.00x .*\(A 20\.0, B 100 %\)$/);
    await settle(page, errors, 'load', 1280);
  }, 30_000);
});

// A lab of its own, started once the demo lab's tests are done (one lab at a time holds the process's settings).
describe.each(WIDTHS)('the report page of an empty lab at %i px', (width) => {
  let empty: Lab;

  beforeAll(async () => {
    empty = await startLab({
      dataDir: join(dir, `empty-${width}`),
      fresh: true,
      samples: false,
      s3Port: 0,
      apiPort: 0,
      log: () => {},
    });
  }, 60_000);

  afterAll(async () => {
    await empty?.stop();
  });

  it('an empty lab: how to upload, no form', async () => {
    const { page, errors } = await openPage(width);
    await page.goto(empty.endpoints.reportUrl);
    await page.waitForSelector('body[data-state="empty"]', { timeout: 20_000 });
    await page.locator('#uploads-status', { hasText: 'no uploads yet' }).waitFor();
    expect(await page.isVisible('#empty')).toBe(true);
    expect(await page.isVisible('#controls')).toBe(false);
    await settle(page, errors, 'empty', width);
  }, 30_000);
});
