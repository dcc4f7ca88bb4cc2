/**
 * What the report page's browser tests share: Debian's chromium launched
 * headless (playwright-core), a page's JavaScript errors and console errors
 * collected, screenshots kept as test artifacts in BENCHDROP_ARTIFACTS
 * (default test-artifacts/report/ in the repo, git-ignored), and where a
 * diverging bar chart says it drew its bars.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
// As the machine's probe runs it: no sandbox as root, and no background traffic to hosts it cannot reach.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where screenshots are kept: BENCHDROP_ARTIFACTS, else test-artifacts/report/ in the repo. */
export const ARTIFACTS =
  process.env['BENCHDROP_ARTIFACTS'] ?? fileURLToPath(new URL('../../test-artifacts/report/', import.meta.url));

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium), as .ci/run does`);
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/** Every uncaught error and console error of the page, as text, as they come. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => void (m.type() === 'error' && errors.push(`console: ${m.text()}`)));
  return errors;
}

/** A full-page screenshot kept under ARTIFACTS as `name.png`; its path. */
export async function keepScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Where a diverging bar chart drew each bar (canvas pixels), and 1x on the same scale. */
export interface DrawnBars {
  one: number;
  bars: { metric: string; left: number; right: number; top: number; bottom: number }[];
}

export async function drawnBars(page: Page, chart: string): Promise<DrawnBars> {
  return JSON.parse((await page.getAttribute(chart, 'data-bars'))!) as DrawnBars;
}

/** The document's width: at most the viewport's when nothing scrolls sideways but the table boxes. */
export const documentWidth = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth');
