/**
 * The report page as one self-contained HTML document: page.ts and its CSS
 * (uPlot's included) bundled by esbuild in memory and inlined, so the page needs
 * nothing from any network. Served (no `embedded`) it is the lab's page, form,
 * states and uploads included; with `embedded` (`benchdrop compare --html`) it
 * holds that comparison alone and fetches nothing at all.
 */
import { build } from 'esbuild';
import { packageFile } from '../shared/module-paths.ts';
import type { FrozenReport } from '../shared/reports.ts';
import { frozenReportHtml, pageHtml, type PageBundle } from './html.ts';

// From the package root: the build in dist/ bundles the same source page.
const ENTRY = packageFile(import.meta.url, 'report/page.ts');

let bundle: Promise<PageBundle> | undefined;

/** page.ts and its CSS, bundled in memory for the browser. */
export async function bundlePage(): Promise<PageBundle> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    outdir: 'out',
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const text = (ext: string) => result.outputFiles.find((f) => f.path.endsWith(ext))?.text ?? '';
  return { js: text('.js'), css: text('.css') };
}

/**
 * The page: served (no `embedded`) it has the form, the loading, error and
 * empty states and the uploads, and asks the API on its origin; with `embedded`
 * it holds that comparison only and fetches nothing.
 */
export async function reportHtml(embedded?: object, title = 'benchdrop report'): Promise<string> {
  return pageHtml(await pageBundle(), embedded, title);
}

/** The bundle, made once per process. */
export const pageBundle = (): Promise<PageBundle> => (bundle ??= bundlePage());

/** Frozen reports' pages, from this process's bundle (the local lab's API; the Lambda packages its bundle). */
export async function renderFrozenReport(report: FrozenReport): Promise<string> {
  return frozenReportHtml(await pageBundle(), report);
}
