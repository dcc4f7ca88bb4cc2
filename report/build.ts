/**
 * The report page as one self-contained HTML document: page.ts and its CSS
 * (uPlot's included) bundled by esbuild in memory and inlined, so the page needs
 * nothing from any network. Served (no `embedded`) it is the lab's page, form,
 * states and uploads included; with `embedded` (`benchdrop compare --html`) it
 * holds that comparison alone and fetches nothing at all.
 */
import { build } from 'esbuild';
import { DEFAULT_REGION, LAB_CREDENTIALS } from '../shared/config.ts';
import { METRIC_SPECS } from '../shared/metrics.ts';
import { packageFile } from '../shared/module-paths.ts';

// From the package root: the build in dist/ bundles the same source page.
const ENTRY = packageFile(import.meta.url, 'report/page.ts');

let bundle: Promise<{ js: string; css: string }> | undefined;

async function bundlePage(): Promise<{ js: string; css: string }> {
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

/** `</script>` inside inlined code or data would end the script element early. */
const scriptSafe = (text: string) => text.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');

/** A selector field of the form, `a` or `b`, described by the device note. */
const selectorField = (id: 'a' | 'b') =>
  `<label>${id.toUpperCase()} (selector)<input id="${id}" name="${id}" autocomplete="off" required ` +
  'list="device-labels" aria-describedby="devices-note"></label>';

/** The metric field's choices: every metric spec. */
const METRIC_OPTIONS = METRIC_SPECS.map((m) => `<option>${m}</option>`).join('');

/** A table the page fills: a header row of `columns`, and an empty body `bodyId`. */
const emptyTable = (attributes: string, columns: readonly string[], bodyId: string) =>
  `<table ${attributes}><thead><tr>${columns.map((c) => `<th>${c}</th>`).join('')}</tr></thead>` +
  `<tbody id="${bodyId}"></tbody></table>`;

/** The form: every field labelled, the device note describing both selectors. */
const CONTROLS = `<form id="controls" aria-label="comparison">
  ${selectorField('a')}
  ${selectorField('b')}
  <label>metric<select id="metric" name="metric">${METRIC_OPTIONS}</select></label>
  <button type="submit">Compare</button>
</form>
<datalist id="device-labels"></datalist>
<p id="devices-note" hidden></p>`;

/** The empty state's long lines in parts: the upload with the AWS CLI, and its notes. */
const LAB_JSON = "(also in its data folder's <code>lab.json</code>)";
const AWS_CLI_UPLOAD =
  `aws --endpoint-url S3_ENDPOINT --region ${DEFAULT_REGION} ` +
  's3 cp run1.txt s3://BUCKET/sas10k/run1.txt --metadata device=sas10k';
const CREDENTIALS = `${LAB_CREDENTIALS.accessKeyId} / ${LAB_CREDENTIALS.secretAccessKey}`;
const DEMO_LOGS = '<code>npm start</code> without <code>--no-samples</code> ingests the demo logs';

/** What an empty lab shows instead of a form that has nothing to compare: how to put logs in. */
const EMPTY_STATE = `<section id="empty" aria-labelledby="empty-title" hidden>
  <h2 id="empty-title">This lab holds no runs yet</h2>
  <p>Upload a diskperf or iostat log (run it where <code>npm start</code> runs, so it finds the lab):</p>
  <pre><code>npx benchdrop upload run1.txt --device sas10k --wait</code></pre>
  <p>or with the AWS CLI, to the S3 endpoint and bucket <code>npm start</code> printed ${LAB_JSON}:</p>
  <pre><code>${AWS_CLI_UPLOAD}</code></pre>
  <p>(credentials ${CREDENTIALS}). ${DEMO_LOGS}. Once a log is in:</p>
  <button type="button" id="recheck">Check again</button>
</section>`;

const POINT_COLUMNS = ['metric', 'req_size', 'A', 'B', 'A / B', 'interval', 'p', '', 'notes'];

/** The comparison itself: all a file from `compare --html` holds. */
const RESULTS = `<section id="results" aria-label="comparison result" hidden>
  <section id="summary">
    <span id="ratio"></span><span id="sentence"></span>
    <div id="interval"></div>
    <div id="advice"></div>
    <div id="paired"></div>
    <div id="sides"></div>
    <div id="warnings-title" hidden>warnings</div>
    <ul id="warnings"></ul>
  </section>
  <section id="metrics-section" hidden>
    <h2>Per metric</h2>
    ${emptyTable('id="metrics-table"', ['metric', 'A / B', 'interval', 'p', '', 'what it says'], 'metrics')}
  </section>
  <div id="ratio-chart" class="chart"></div>
  <div id="abs-chart" class="chart"></div>
  <div id="bar-chart" class="chart"></div>
  <details id="points-section" hidden>
    <summary id="points-title"></summary>
    ${emptyTable('id="points-table"', POINT_COLUMNS, 'points')}
  </details>
  <details><summary>points left out</summary><ul id="excluded"></ul></details>
</section>`;

/** The lab's uploads: GET /uploads' default answer, on the served page only. */
const UPLOADS = `<section id="uploads-section" aria-labelledby="uploads-title" aria-busy="true">
  <h2 id="uploads-title">Uploads</h2>
  <p id="uploads-status" role="status"></p>
  ${emptyTable('id="uploads-table" hidden', ['key', 'status', 'device', 'runs or reason', 'updated'], 'uploads')}
</section>`;

/**
 * The page: served (no `embedded`) it has the form, the loading, error and
 * empty states and the uploads, and asks the API on its origin; with `embedded`
 * it holds that comparison only and fetches nothing.
 */
export async function reportHtml(embedded?: object, title = 'benchdrop report'): Promise<string> {
  const { js, css } = await (bundle ??= bundlePage());
  const served = embedded === undefined;
  const data = served ? '' : `<script>window.__BENCHDROP__ = ${scriptSafe(JSON.stringify(embedded))};</script>`;
  const main = served
    ? `<p id="status" role="status"></p>\n<div id="error" role="alert" hidden></div>\n${EMPTY_STATE}\n${RESULTS}`
    : RESULTS;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title.replace(/[<&]/g, '')}</title>
<style>${css}</style>
</head>
<body data-state="loading">
<h1>benchdrop: how much faster is A than B?</h1>
${served ? CONTROLS : ''}
<main id="main" aria-busy="${served}">
${main}
</main>
${served ? UPLOADS : ''}
${data}<script>${scriptSafe(js)}</script>
</body>
</html>
`;
}
