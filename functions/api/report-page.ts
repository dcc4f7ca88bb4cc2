/**
 * Frozen reports' pages in the API Lambda. The report page's bundle cannot be
 * made there (esbuild is a build tool), so the stack packages it beside the
 * function's code as REPORT_PAGE_FILE (infra/report-page.ts writes it when the
 * function is bundled); it is read once, at the first POST /reports.
 */
import { readFile } from 'node:fs/promises';
import { frozenReportHtml, type PageBundle } from '../../report/html.ts';
import type { ReportRenderer } from '../../shared/reports.ts';

/** The packaged bundle's file name, beside the function's entry. */
export const REPORT_PAGE_FILE = 'report-page.json';

async function readBundle(dir: URL): Promise<PageBundle> {
  const file = new URL(REPORT_PAGE_FILE, dir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`the report page bundle ${file.pathname} is missing: bundle the API function with the stack`, {
      cause: error,
    });
  }
  const bundle = JSON.parse(text) as Partial<PageBundle>;
  if (typeof bundle.js !== 'string' || typeof bundle.css !== 'string')
    throw new Error(`${file.pathname} is not a report page bundle ({ js, css })`);
  return { js: bundle.js, css: bundle.css };
}

/** Renders frozen reports from the bundle packaged in `dir` (the function's own folder). */
export function packagedReportRenderer(dir: URL = new URL('.', import.meta.url)): ReportRenderer {
  let bundle: Promise<PageBundle> | undefined;
  return async (report) => frozenReportHtml(await (bundle ??= readBundle(dir)), report);
}
