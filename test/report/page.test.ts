/**
 * The report page in a real headless browser (Debian's chromium, driven by
 * playwright-core): served by the local lab, it loads, draws the chart for redux
 * vs 10M_Sync and shows 1.90; the self-contained file from `compare --html`
 * shows the same without a server. Screenshots go to a temp folder.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../support/quiet.ts';
import { startLab, type Lab } from '../../infra/local/lab.ts';
import { reportHtml } from '../../report/build.ts';
import type { Comparison } from '../../shared/compare.ts';

const CHROMIUM = '/usr/bin/chromium';
// As the machine's probe runs it: no sandbox as root, and no background traffic to hosts it cannot reach.
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const dir = mkdtempSync(join(tmpdir(), 'benchdrop-report-'));
let lab: Lab;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium), as .ci/run does`);
  lab = await startLab({ dataDir: join(dir, 'lab'), fresh: true, s3Port: 0, apiPort: 0, log: () => {} });
  await lab.idle();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await lab?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the report page', () => {
  it('served by the lab, it compares redux with 10M_Sync: 1.90, a log2 chart of ratios and the uploads list', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 1400 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(lab.endpoints.reportUrl);
    await page.waitForSelector('body[data-state="compared"]', { timeout: 20_000 });
    expect(await page.textContent('#ratio')).toBe('1.90x');
    expect(await page.textContent('#sentence')).toMatch(/^scsi2sd_redux is 1\.90x scsi2sd_10M_Sync on all \(54 points/);
    // uPlot draws on canvases: one for the ratio chart, one for the absolute curves.
    expect(await page.locator('#ratio-chart canvas').count()).toBe(1);
    expect(await page.locator('#abs-chart canvas').count()).toBe(1);
    expect(await page.locator('#ratio-chart .u-legend').textContent()).toMatch(/fwd_wt.*summary 1\.90x/s);
    await page.locator('#uploads tr').nth(3).waitFor();
    expect(await page.locator('#uploads tr.ready').count()).toBe(4);
    // Nothing leaves the machine: every request goes to the lab itself.
    expect(requests.every((u) => u.startsWith(lab.endpoints.apiUrl))).toBe(true);
    expect(errors).toEqual([]);
    const shot = join(dir, 'report.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(20_000);

    // Another comparison from the form: an iostat metric draws bars, with the 71.0x of c0t0d0.
    await page.fill('#a', 'x4100/c0t0d0,context~tunefs -a 1 /opt');
    await page.fill('#b', 'x4100/c0t0d0,context~tunefs -a 32 /opt');
    await page.selectOption('#metric', 'write_iops');
    await page.click('button[type=submit]');
    await page.locator('#ratio', { hasText: '71.0x' }).waitFor();
    expect(await page.locator('#bar-chart canvas').count()).toBe(1);
    await page.close();
  }, 60_000);

  it('a bad selector shows the API error, not a broken page', async () => {
    const page = await browser.newPage();
    await page.goto(`${lab.endpoints.reportUrl}?a=colour%3Dred&b=scsi2sd_redux`);
    await page.waitForSelector('body[data-state="error"]', { timeout: 20_000 });
    expect(await page.textContent('#error')).toMatch(/unknown term "colour"/);
    await page.close();
  }, 30_000);

  it('compare --html writes one self-contained file that shows the comparison offline', async () => {
    const comparison = (await (await fetch(`${lab.endpoints.apiUrl}/compare?a=scsi2sd_redux&b=300G_10K_SGI_Indy`)).json()) as Comparison;
    const file = join(dir, 'offline.html');
    await writeFile(file, await reportHtml({ comparison }));
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-state="compared"]');
    expect(await page.textContent('#ratio')).toBe('0.39x');
    expect(await page.isVisible('#controls')).toBe(false);
    expect(requests).toEqual([pathToFileURL(file).href]);
    await page.screenshot({ path: join(dir, 'offline.png') });
    await page.close();
  }, 30_000);
});
