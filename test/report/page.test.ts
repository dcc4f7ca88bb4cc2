/**
 * The report page in a real headless browser (Debian's chromium, driven by
 * playwright-core; browser.ts): served by the local lab, it starts from the lab's own labels
 * (an empty lab shows how to upload, with no error and no demo names; once logs
 * are in, two of their labels are compared), says it is loading while a request
 * is out and shows the API's message when one fails; every control has a name
 * and the form works from the keyboard. With redux vs 10M_Sync in its URL it
 * draws the chart and shows 1.90 with why there is no interval; a comparison of 4
 * runs a side shows its interval's label, `~`, the advice and the warnings; the
 * self-contained file from `compare --html` shows a comparison without a server,
 * the faster side named first, and its iostat bars drawn from 1x (left for
 * 0.2x); the lab's device labels are offered in the selector fields, the first
 * 1,000 of a lab that holds more with a note saying so. Screenshots are kept in
 * the artifacts folder (browser.ts); states.test.ts takes every state at both widths.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../harness/quiet.ts';
import { LAB_CREDENTIALS } from '../../shared/config.ts';
import { demoUploads, LAB_BUCKET, startLab, type Lab } from '../../infra/local/lab.ts';
import { reportHtml } from '../../report/build.ts';
import type { DevicesPage } from '../../shared/api.ts';
import { createDocumentClient, createS3Client } from '../../shared/aws.ts';
import { compareObservations, type Comparison, type Observation } from '../../shared/compare.ts';
import { comparisonTable } from '../../shared/comparison/table.ts';
import { BatchWriter } from '../../shared/store/batch.ts';
import { MAX_PAGE } from '../../shared/store/pages.ts';
import { deviceItem } from '../../shared/store/items.ts';
import { drawnBars, keepScreenshot, launchChromium } from './browser.ts';

const dir = mkdtempSync(join(tmpdir(), 'benchdrop-report-'));
let lab: Lab;
let browser: Browser;

beforeAll(async () => {
  lab = await startLab({ dataDir: join(dir, 'lab'), fresh: true, s3Port: 0, apiPort: 0, log: () => {} });
  await lab.idle();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await lab?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function api<T = Comparison>(path: string): Promise<T> {
  return (await (await fetch(`${lab.endpoints.apiUrl}${path}`)).json()) as T;
}

/** The labels the page offers in its selector fields, in order. */
const offered = (page: Page) =>
  page.locator('#device-labels option').evaluateAll((options) => options.map((o) => o.getAttribute('value')));

describe('the report page', () => {
  it('served by the lab, it compares redux with 10M_Sync: 1.90, why there is no interval, a log2 chart of ratios and the uploads list; then iostat bars, and 4 runs a side with their interval, ~ and warnings', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 1400 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(`${lab.endpoints.reportUrl}?a=scsi2sd_redux&b=scsi2sd_10M_Sync`);
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    expect(await page.inputValue('#a')).toBe('scsi2sd_redux');
    expect(await page.inputValue('#b')).toBe('scsi2sd_10M_Sync');
    expect(await page.textContent('#ratio')).toBe('1.90x');
    expect(await page.textContent('#sentence')).toBe(
      'scsi2sd_redux is 1.90x scsi2sd_10M_Sync on all (54 points, 1.11x-4.41x)',
    );
    // One run a side: the page says why there is no interval and what would give one.
    expect(await page.textContent('#interval')).toBe(
      'no interval: it needs at least 2 runs on each side (A has 1 run, B has 1 run); with one run nothing is known of run-to-run noise',
    );
    expect(await page.textContent('#advice')).toMatch(/^runs needed: run each device at least twice on each side/);
    const redux = await api('/compare?a=scsi2sd_redux&b=scsi2sd_10M_Sync');
    expect(await page.locator('#warnings li .warning-text').allTextContents()).toEqual(redux.warnings);
    expect(await page.isVisible('#warnings-title')).toBe(redux.warnings.length > 0);
    // The table: a geomean row per metric (fwd_rd's 2.56x among them), no interval, so no p or ~ columns.
    const table = comparisonTable(redux);
    expect(await page.locator('#comparison-table tr.geomean').count()).toBe(6);
    expect(await page.locator('#comparison-table tr.geomean[data-metric="fwd_rd"] td').allTextContents()).toContain(
      '2.56x',
    );
    expect(await page.locator('#comparison-table thead th').allTextContents()).toEqual(table.columns);
    expect(table.columns).not.toContain('p');
    // uPlot draws on canvases: one for the ratio chart, one for the absolute curves.
    expect(await page.locator('#ratio-chart canvas').count()).toBe(1);
    expect(await page.locator('#abs-chart canvas').count()).toBe(1);
    expect(await page.locator('#ratio-chart .u-legend').textContent()).toMatch(/fwd_wt 1\.53x.*summary 1\.90x/s);
    expect(await page.locator('#ratio-chart .u-legend').textContent()).not.toContain('--');
    expect(await page.locator('#comparison-table tr.point').count()).toBe(54);
    // Every demo log (the diskperf and iostat logs, the fio sweeps) listed, each ready.
    const demo = demoUploads().length;
    await page
      .locator('#uploads tr')
      .nth(demo - 1)
      .waitFor();
    expect(await page.locator('#uploads tr[data-status="ready"]').count()).toBe(demo);
    expect(await page.textContent('#uploads-status')).toBe(`${demo} uploads`);
    // Every label of the lab, offered in both selector fields.
    await page.locator('#devices-note:not([hidden])').waitFor();
    const labels = (await api<DevicesPage>(`/devices?limit=${MAX_PAGE}`)).devices.map((d) => d.label);
    expect(labels).toEqual(
      expect.arrayContaining(['scsi2sd_redux', 'scsi2sd_10M_Sync', '300G_10K_SGI_Indy', 'x4100', 'x4100/c0t0d0']),
    );
    expect(await offered(page)).toEqual(labels);
    expect(await page.getAttribute('#a', 'list')).toBe('device-labels');
    expect(await page.getAttribute('#b', 'list')).toBe('device-labels');
    expect(await page.textContent('#devices-note')).toBe(
      `${labels.length} device labels in this lab, offered as you type a selector`,
    );
    const shot = await keepScreenshot(page, 'page-redux');
    expect(statSync(shot).size).toBeGreaterThan(20_000);

    // Another comparison from the form: an iostat metric draws a bar, right of 1x for the 71.0x of c0t0d0.
    await page.fill('#a', 'x4100/c0t0d0,context~tunefs -a 1 /opt');
    await page.fill('#b', 'x4100/c0t0d0,context~tunefs -a 32 /opt');
    await page.selectOption('#metric', 'write_iops');
    await page.click('button[type=submit]');
    await page.locator('#ratio', { hasText: '71.0x' }).waitFor();
    expect(await page.locator('#bar-chart canvas').count()).toBe(1);
    const right = await drawnBars(page, '#bar-chart');
    expect(right.bars).toHaveLength(1);
    expect(Math.abs(right.bars[0]!.left - right.one)).toBeLessThanOrEqual(1);
    expect(right.bars[0]!.right).toBeGreaterThan(right.one + 50);

    // 4 runs of each disk: an interval over runs, nothing significant (~), advice and the warnings.
    const query = { a: 'x4100/c0t0d0', b: 'x4100/c0t1d0', metric: 'all' };
    const expected = await api(`/compare?${new URLSearchParams(query)}`);
    expect(expected.ci?.label).toBe('95% interval over 4 runs a side');
    expect(expected.significant).toBe(false);
    await page.fill('#a', query.a);
    await page.fill('#b', query.b);
    await page.selectOption('#metric', query.metric);
    await page.click('button[type=submit]');
    await page.locator('#sentence', { hasText: 'x4100/c0t1d0 on all' }).waitFor();
    expect(await page.textContent('#sentence')).toBe(expected.sentence);
    expect(expected.sentence).toMatch(
      /^~ no significant difference between x4100\/c0t0d0 and x4100\/c0t1d0 on all: \d\.\d\dx \[[\d.]+x-[\d.]+x\], 95% interval over 4 runs a side \(3 points\)$/,
    );
    expect(await page.textContent('#interval')).toMatch(
      /^95% interval over 4 runs a side: A\/B \[[\d.]+x-[\d.]+x\], ~ not significant: it holds 1x \(bootstrap-t, df [\d.]+, \d+ resamples\)$/,
    );
    expect(await page.textContent('#advice')).toBe(`runs needed: ${expected.advice!.note}`);
    expect(expected.advice!.note).toMatch(
      /^from the spread seen, about \d+ runs a side would tell a 5% difference apart/,
    );
    expect(await page.locator('#warnings li .warning-text').allTextContents()).toEqual(expected.warnings);
    expect(expected.warnings.some((w) => w.startsWith('A mixes 4 workloads'))).toBe(true);
    expect(await page.isVisible('#warnings-title')).toBe(true);
    // Every point here is not significant: each row carries its ~, its interval and its p.
    const columns = comparisonTable(expected).columns;
    const pointRows = page.locator('#comparison-table tr.point');
    expect(await pointRows.count()).toBe(expected.rows.filter((r) => r.ratio !== undefined).length);
    for (const row of await pointRows.all()) {
      const cells = await row.locator('th, td').allTextContents();
      expect(cells[columns.indexOf('~')]).toBe('~');
      expect(cells[columns.indexOf('95% interval')]).toMatch(/^\[[\d.]+x-[\d.]+x\]$/);
      expect(cells[columns.indexOf('p')]).toMatch(/^[\d.]+$/);
    }
    expect(await page.locator('#comparison-table tr.point.insignificant').count()).toBe(3);
    expect(await page.getAttribute('#bar-chart', 'aria-label')).toMatch(/write_iops [\d.]+x \[[\d.]+x-[\d.]+x\] ~/);
    await keepScreenshot(page, 'page-runs');

    // Nothing leaves the machine: every request goes to the lab itself.
    expect(requests.every((u) => u.startsWith(lab.endpoints.apiUrl))).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('a bad selector shows the API error, not a broken page', async () => {
    const page = await browser.newPage();
    await page.goto(`${lab.endpoints.reportUrl}?a=colour%3Dred&b=scsi2sd_redux`);
    await page.waitForSelector('body[data-state="error"]', { timeout: 20_000 });
    expect(await page.isVisible('#error')).toBe(true);
    expect(await page.textContent('#error')).toMatch(
      /^Could not compare colour=red with scsi2sd_redux: .*unknown term "colour"/,
    );
    expect(await page.isVisible('#results')).toBe(false);
    expect(await page.getAttribute('main', 'aria-busy')).toBe('false');
    // The form stays, so the selector can be put right.
    expect(await page.isVisible('#controls')).toBe(true);
    await page.close();
  }, 30_000);

  it("when GET /devices fails, the page shows the API's message as its error state", async () => {
    const page = await browser.newPage();
    const message = 'internal error (request id 0f1e2d3c)';
    await page.route(
      (url) => url.pathname === '/devices',
      (route) =>
        route.fulfill({
          status: 500,
          contentType: 'application/json',
          body: JSON.stringify({ error: { code: 'InternalError', message } }),
        }),
    );
    await page.goto(lab.endpoints.reportUrl);
    await page.waitForSelector('body[data-state="error"]', { timeout: 20_000 });
    expect(await page.textContent('#error')).toBe(`Could not read the lab's devices: ${message}`);
    expect(await page.isVisible('#empty')).toBe(false);
    expect(await page.isVisible('#results')).toBe(false);
    await page.close();
  }, 30_000);

  it("without a query it compares two of the lab's own labels of one format, neither inside the other", async () => {
    const page = await browser.newPage();
    const compares: string[] = [];
    page.on('request', (r) => void (new URL(r.url()).pathname === '/compare' && compares.push(r.url())));
    await page.goto(lab.endpoints.reportUrl);
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    // Labels come in label order: the first, and the next one of its format (the fio sweeps between are passed over).
    const labels = (await api<DevicesPage>(`/devices?limit=${MAX_PAGE}`)).devices;
    expect([labels[0]!.label, labels[0]!.format]).toEqual(['300G_10K_SGI_Indy', 'diskperf']);
    expect(labels[1]!.format).toBe('fio');
    expect(labels.find((d, i) => i > 0 && d.format === 'diskperf')!.label).toBe('scsi2sd_10M_Sync');
    expect(await page.inputValue('#a')).toBe('300G_10K_SGI_Indy');
    expect(await page.inputValue('#b')).toBe('scsi2sd_10M_Sync');
    expect(await page.inputValue('#metric')).toBe('all');
    expect(compares).toHaveLength(1);
    expect(await page.textContent('#sentence')).toMatch(/300G_10K_SGI_Indy.* scsi2sd_10M_Sync on all/);
    expect(new URL(page.url()).search).toBe('?a=300G_10K_SGI_Indy&b=scsi2sd_10M_Sync&metric=all');
    await page.close();
  }, 30_000);

  it('says it is loading while GET /devices and GET /compare are out, and stops saying so when they answer', async () => {
    const page = await browser.newPage();
    const held = new Map<string, () => void>();
    const hold = (path: string) =>
      page.route(
        (url) => url.pathname === path,
        async (route) => {
          await new Promise<void>((release) => held.set(path, release));
          await route.continue();
        },
      );
    await hold('/devices');
    await hold('/compare');
    await page.goto(`${lab.endpoints.reportUrl}?a=scsi2sd_redux&b=scsi2sd_10M_Sync`);
    const status = page.getByRole('status').filter({ hasText: "loading the lab's devices..." });
    await status.waitFor();
    expect(await page.getAttribute('main', 'aria-busy')).toBe('true');
    expect(await page.getAttribute('body', 'data-state')).toBe('loading');
    expect(await page.isVisible('#error')).toBe(false);
    await expect.poll(() => held.has('/devices')).toBe(true);
    held.get('/devices')!();
    await page
      .getByRole('status')
      .filter({ hasText: 'comparing scsi2sd_redux with scsi2sd_10M_Sync (all)...' })
      .waitFor();
    expect(await page.getAttribute('main', 'aria-busy')).toBe('true');
    // The spinner beside the status line is drawn while busy.
    expect(
      await page.evaluate<string>(`getComputedStyle(document.querySelector('#status'), '::before').animationName`),
    ).toBe('spin');
    await expect.poll(() => held.has('/compare')).toBe(true);
    held.get('/compare')!();
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    expect(await page.getAttribute('main', 'aria-busy')).toBe('false');
    expect(await page.textContent('#status')).toBe('');
    expect(await page.textContent('#ratio')).toBe('1.90x');
    await page.close();
  }, 30_000);

  it('every control has an accessible name, Tab walks the form in order, Enter in a field and Space on the button compare', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
    await page.goto(`${lab.endpoints.reportUrl}?a=scsi2sd_redux&b=scsi2sd_10M_Sync`);
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    await expect.poll(() => page.locator('#uploads tr').count()).toBeGreaterThan(0);
    // Each visible control, as the accessibility tree names it.
    const named: string[] = [];
    for (const control of await page.locator('input:visible, select:visible, button:visible').all()) {
      const [, role, name] = /^- (\w+) "([^"]*)"/.exec(await control.ariaSnapshot()) ?? [];
      named.push(`${role} ${name}`);
    }
    expect(named).toEqual(['combobox A (selector)', 'combobox B (selector)', 'combobox metric', 'button Compare']);
    expect(await page.getByLabel('A (selector)').inputValue()).toBe('scsi2sd_redux');
    expect(await page.getByLabel('B (selector)').inputValue()).toBe('scsi2sd_10M_Sync');
    expect(await page.getByLabel('metric').inputValue()).toBe('all');
    expect(await page.getByRole('form', { name: 'comparison' }).count()).toBe(1);
    const focused = () => page.evaluate<string>('document.activeElement.id || document.activeElement.tagName');
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Tab');
      order.push(await focused());
    }
    expect(order).toEqual(['a', 'b', 'metric', 'BUTTON']);
    // Type new selectors from the keyboard alone; Enter in B submits.
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('a');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('x4100/c0t0d0');
    await page.keyboard.press('Tab');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('x4100/c0t1d0');
    await page.keyboard.press('Enter');
    await page.locator('#sentence', { hasText: 'x4100/c0t1d0 on all' }).waitFor({ timeout: 20_000 });
    expect(new URL(page.url()).searchParams.get('a')).toBe('x4100/c0t0d0');
    // The metric from the keyboard, then Space on the focused button.
    await page.getByLabel('metric').focus();
    await page.keyboard.press('End');
    expect(await page.getByLabel('metric').inputValue()).toBe('util_pct');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('BUTTON');
    await page.keyboard.press('Space');
    await page.locator('#sentence', { hasText: 'on util_pct' }).waitFor({ timeout: 20_000 });
    await page.close();
  }, 60_000);

  it('compare --html writes one self-contained file that shows the comparison offline, the faster side named first', async () => {
    const comparison = await api('/compare?a=scsi2sd_redux&b=300G_10K_SGI_Indy');
    const file = join(dir, 'offline.html');
    await writeFile(file, await reportHtml({ comparison }));
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-state="compared"]');
    // The figure is A/B; the sentence names the faster side first.
    expect(await page.textContent('#ratio')).toBe('0.39x');
    expect(await page.textContent('#sentence')).toBe(
      '300G_10K_SGI_Indy is 2.56x scsi2sd_redux on all (65 points, 0.06x-50.1x)',
    );
    expect(await page.locator('#warnings li .warning-text').allTextContents()).toEqual(comparison.warnings);
    expect(comparison.warnings).toContainEqual(
      expect.stringMatching(/^1 point\(s\) within 5 printing steps of 0 \(rnd_wt at 4096: A 0\.18, B 0\.01 MB\/s\)/),
    );
    // The point near 0 (0.18 against 0.01 MB/s) is marked, its mark a link to the note saying it is mostly rounding.
    const near = page.locator('#comparison-table tr.point[data-metric="rnd_wt"][data-req-size="4096"]');
    expect(await near.locator('th, td').allTextContents()).toEqual(expect.arrayContaining(['0.18', '0.01', '18.0x']));
    const mark = near.locator('a.mark');
    expect(await mark.count()).toBe(1);
    const note = page.locator((await mark.getAttribute('href'))!);
    expect(await note.textContent()).toMatch(/^\(a\) a side is under 0\.05 MB\/s .*the ratio is mostly rounding$/);
    // The comparison alone: no form, no loading, empty or uploads parts.
    for (const part of ['#controls', '#status', '#empty', '#uploads-section', '#uploads'])
      expect(await page.locator(part).count()).toBe(0);
    expect(await page.getAttribute('main', 'aria-busy')).toBe('false');
    expect(requests).toEqual([pathToFileURL(file).href]);
    await keepScreenshot(page, 'page-offline');
    await page.close();
  }, 30_000);

  it('iostat bars start at 1x on a log axis: 0.2x goes left, 2x goes right, each with its value; ~ where not significant', async () => {
    // 3 runs a side of one disk: reads 5 times slower on A, writes twice as fast, service times the same but for noise.
    const series = (side: string, run: number, values: Observation['values']): Observation => ({
      runId: `${side}-${run}`,
      device: `${side}/sda`,
      label: side,
      native: 'sda',
      format: 'iostat',
      values,
      samples: 12,
    });
    const jitter = [0.98, 1, 1.02];
    const a = jitter.map((j, r) =>
      series('tuned', r, { read_iops: 20 * j, write_iops: 200 / j, service_ms: 5 * jitter[(r + 1) % 3]! }),
    );
    const b = jitter.map((j, r) =>
      series('stock', r, { read_iops: 100 / j, write_iops: 100 * j, service_ms: 5 * jitter[(r + 2) % 3]! }),
    );
    const comparison = compareObservations(a, b, { labels: { a: 'tuned', b: 'stock' } });
    expect(comparison.byMetric.read_iops).toMatchObject({ significant: true });
    expect(comparison.byMetric.service_ms).toMatchObject({ significant: false });
    const file = join(dir, 'bars.html');
    await writeFile(file, await reportHtml({ comparison }));
    const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-state="compared"]');
    const drawn = await drawnBars(page, '#bar-chart');
    const bar = (metric: string) => drawn.bars.find((d) => d.metric === metric)!;
    // Horizontal bars from 1x: one under 1x (B better) ends at 1x on its right, one over 1x starts there.
    expect(Math.abs(bar('read_iops').right - drawn.one)).toBeLessThanOrEqual(1);
    expect(bar('read_iops').left).toBeLessThan(drawn.one - 40);
    expect(Math.abs(bar('write_iops').left - drawn.one)).toBeLessThanOrEqual(1);
    expect(bar('write_iops').right).toBeGreaterThan(drawn.one + 20);
    // On a log axis 0.2x reaches further from 1x than 2x does (log 5 against log 2).
    expect(drawn.one - bar('read_iops').left).toBeGreaterThan((bar('write_iops').right - drawn.one) * 2);
    // In the order compared, top to bottom.
    const byTop = drawn.bars.map((b) => b.metric).sort((x, y) => bar(x).top - bar(y).top);
    expect(byTop).toEqual(comparison.metrics.filter((m) => byTop.includes(m)));
    expect(await page.getAttribute('#bar-chart', 'aria-label')).toMatch(
      /^bars from 1x \(no difference\), right where A tuned is better, left where B stock is: read_iops 0\.20x \[[\d.]+x-[\d.]+x\] \(A 20\.0, B 100 ops\/s\), write_iops 2\.00x \[[\d.]+x-[\d.]+x\] \(A 200, B 100 ops\/s\), service_ms [\d.]+x \[[\d.]+x-[\d.]+x\] ~ \(A 5\.00, B 5\.00 ms\)$/,
    );
    const tilde = comparisonTable(comparison).columns.indexOf('~');
    const cells = (metric: string) => page.locator(`#comparison-table tr.point[data-metric="${metric}"] :is(th, td)`);
    expect(await cells('service_ms').nth(tilde).textContent()).toBe('~');
    expect(await cells('read_iops').nth(tilde).textContent()).toBe('');
    // No load metric compared: no load chart.
    expect(await page.locator('#load-chart canvas').count()).toBe(0);
    expect(await page.textContent('#interval')).toMatch(/^95% interval over 3 runs a side: A\/B \[/);
    expect(await page.textContent('#paired')).toBe(
      'devices paired disk with disk: each device of A with the device of the same name on B',
    );
    expect(await page.textContent('#sentence')).toBe(comparison.sentence);
    await keepScreenshot(page, 'page-bars');
    await page.close();
  }, 30_000);
  it('a lab of more labels than one page: the first 1,000 offered, and a note saying there are more and how to reach them', async () => {
    const { dynamodbEndpoint, table, region } = lab.endpoints;
    const db = createDocumentClient({
      region,
      dynamodbEndpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      const writer = new BatchWriter(db, table);
      for (let i = 0; i < 1500; i++)
        writer.put(deviceItem(`many-${String(i).padStart(4, '0')}`, 'diskperf', '2031-01-01T00:00:00.000Z', 'v1'));
      await writer.flush();
    } finally {
      db.destroy();
    }
    const first = await api<DevicesPage>(`/devices?limit=${MAX_PAGE}`);
    expect(first.next).toEqual(expect.any(String));
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${lab.endpoints.reportUrl}?a=scsi2sd_redux&b=scsi2sd_10M_Sync`);
    await page.locator('#devices-note[data-more="true"]').waitFor({ timeout: 20_000 });
    expect(await offered(page)).toEqual(first.devices.map((d) => d.label));
    expect(await page.locator('#device-labels option').count()).toBe(MAX_PAGE);
    expect(await page.textContent('#devices-note')).toBe(
      'the first 1000 device labels of this lab are offered as you type; it holds more: type the start of a label and a * (x4100/*) to take those',
    );
    // The page still compares.
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    expect(await page.textContent('#ratio')).toBe('1.90x');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});

describe('the report page of an empty lab', () => {
  let empty: Lab;

  beforeAll(async () => {
    empty = await startLab({
      dataDir: join(dir, 'empty'),
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

  it('says how to upload, with no error, no demo names and no comparison asked; once logs are in, Check again compares two of them', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const compares: string[] = [];
    page.on('request', (r) => void (new URL(r.url()).pathname === '/compare' && compares.push(r.url())));
    await page.goto(empty.endpoints.reportUrl);
    await page.waitForSelector('body[data-state="empty"]', { timeout: 20_000 });
    const state = page.getByRole('region', { name: 'This lab holds no runs yet' });
    expect(await state.isVisible()).toBe(true);
    expect(await state.textContent()).toContain('npx benchdrop upload run1.txt --device sas10k --wait');
    expect(await state.textContent()).toContain('s3 cp run1.txt s3://BUCKET/sas10k/run1.txt --metadata device=sas10k');
    expect(await page.isVisible('#error')).toBe(false);
    expect(await page.isVisible('#controls')).toBe(false);
    expect(await page.isVisible('#devices-note')).toBe(false);
    expect(await page.getAttribute('main', 'aria-busy')).toBe('false');
    expect(await page.inputValue('#a')).toBe('');
    expect(await page.inputValue('#b')).toBe('');
    expect(await page.locator('body').innerText()).not.toMatch(/scsi2sd|300G|SGI_Indy|x4100/);
    await page.locator('#uploads-status', { hasText: 'no uploads yet' }).waitFor();
    expect(compares).toEqual([]);
    await keepScreenshot(page, 'page-empty');

    // Two logs uploaded under labels of their own; the button, from the keyboard, looks again.
    const s3 = createS3Client({
      s3Endpoint: empty.endpoints.s3Endpoint,
      credentials: LAB_CREDENTIALS,
      region: 'us-east-1',
    });
    try {
      for (const [device, file] of [
        ['fast-disk', 'irix-indy-scsi2sd-redux.diskperf.txt'],
        ['slow-disk', 'irix-indy-scsi2sd-10M-sync.diskperf.txt'],
      ] as const) {
        await s3.send(
          new PutObjectCommand({
            Bucket: LAB_BUCKET,
            Key: `${device}/${file}`,
            Body: readFileSync(fileURLToPath(new URL(`../../demo/${file}`, import.meta.url))),
            Metadata: { device },
          }),
        );
      }
    } finally {
      s3.destroy();
    }
    await empty.idle();
    await page.getByRole('button', { name: 'Check again' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    expect(await page.inputValue('#a')).toBe('fast-disk');
    expect(await page.inputValue('#b')).toBe('slow-disk');
    expect(await page.textContent('#sentence')).toBe('fast-disk is 1.90x slow-disk on all (54 points, 1.11x-4.41x)');
    expect(await page.isVisible('#empty')).toBe(false);
    expect(await page.isVisible('#controls')).toBe(true);
    expect(await page.locator('#uploads tr[data-status="ready"]').count()).toBe(2);
    // A lab of diskperf logs only: the metric menu offers the groups and diskperf's metrics, no iostat or fio ones.
    const groups = await page.locator('#metric optgroup').evaluateAll((gs) => gs.map((g) => g.getAttribute('label')));
    expect(groups).toEqual(['groups', 'diskperf']);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
