/**
 * Writes the report page's bundle where the API function is packaged, so
 * POST /reports can build a frozen report's page in Lambda
 * (functions/api/report-page.ts). Run by the API function's bundling, after
 * esbuild: `tsx infra/report-page.ts <outputDir>`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPORT_PAGE_FILE } from '../functions/api/report-page.ts';
import { bundlePage } from '../report/build.ts';

/** The command the bundling runs, from the project root `inputDir` into `outputDir`. */
export function reportPageCommand(inputDir: string, outputDir: string): string {
  return `cd "${inputDir}" && node_modules/.bin/tsx infra/report-page.ts "${outputDir}"`;
}

export async function writeReportPage(outputDir: string): Promise<string> {
  const file = join(outputDir, REPORT_PAGE_FILE);
  writeFileSync(file, JSON.stringify(await bundlePage()));
  return file;
}

const target = process.argv[2];
if (target !== undefined && import.meta.url.endsWith(process.argv[1]!.replace(/\\/g, '/'))) {
  await writeReportPage(target);
}
